"""Customers and suppliers at the till: the lists (with each party's balance in the
key's warehouse) and a new customer added at the counter."""

from __future__ import annotations

from typing import Any

from fastapi import Request, Response

from tillbook.api import answers, conditional, envelope, routing
from tillbook.api.body import parse_body
from tillbook.api.conditional import CONDITIONAL
from tillbook.api.deps import DB, CurrentKey
from tillbook.api.idempotent import run_write
from tillbook.api.public import openapi as r
from tillbook.api.responses import JSON
from tillbook.kit.bounds import query_text, stored_length
from tillbook.kit.pagination import parse_page
from tillbook.models import User
from tillbook.parties import queries, service
from tillbook.parties.schemas import TillCustomerIn
from tillbook.unit import UnitOfWork

router = routing.public(tags=["parties"])

# A search matches names, phones, emails and codes: a longer one matches nothing.
MAX_SEARCH = stored_length(User.name)


async def _list(
    key: CurrentKey, db: DB, kind: str, page: str | None, limit: str | None, search: str | None
) -> Any:
    pg = parse_page(page, limit)
    text = query_text("search", search, MAX_SEARCH)
    return await db.read(lambda s: queries.public_page(s, key, kind, pg, search=text))


@router.get(
    "/customers",
    responses=r.cached(r.CustomerList, r.CustomerChanges),
    openapi_extra=CONDITIONAL,
)
async def list_customers(
    request: Request,
    key: CurrentKey,
    db: DB,
    page: str | None = None,
    limit: str | None = None,
    search: str | None = None,
    updated_since: str | None = None,
    cursor: str | None = None,
) -> Response:
    """With ``updated_since`` or ``cursor``: the change feed (``kit.changes``; a
    balance moving is a change, archived customers are tombstones)."""
    walk = conditional.feed_walk(key, "customers", updated_since, cursor, limit)
    if walk is not None:
        return await conditional.feed_answer(
            request,
            db,
            key,
            lambda: db.replica_read(lambda s: queries.customer_changes(s, key, walk)),
        )
    return await answers.of(request).serve(
        request, key, lambda: _list(key, db, "customer", page, limit, search)
    )


@router.get("/suppliers", responses=r.ok(r.SupplierList, *r.QUERY))
async def list_suppliers(
    key: CurrentKey,
    db: DB,
    page: str | None = None,
    limit: str | None = None,
    search: str | None = None,
) -> dict[str, Any]:
    return envelope.ok(await _list(key, db, "supplier", page, limit, search))


@router.post(
    "/customers",
    openapi_extra=r.write_body(TillCustomerIn),
    responses=r.ok(r.CustomerCreated, *r.WRITE),
)
async def post_customer(request: Request, key: CurrentKey) -> JSON:
    """A customer the cashier adds at the till; idempotent like every write."""
    body, raw = await parse_body(request, TillCustomerIn)

    async def work(uow: UnitOfWork) -> queries.Customer:
        party = await service.create_at_till(uow, key.company_id, body, actor_id=key.user_id)
        return queries.new_customer_item(party)

    return await run_write(request, key, raw, body.unique_id, work, answer=envelope.ok)
