"""Customers and suppliers in the back office: list, create, read, edit, archive,
and CSV import and export. The session's company only: another company's id reads
like a missing one.

Reads answer an ``ETag``; an edit names the version it is based on (``If-Match``
or a body ``version``, ``kit/versions.py``). Imports are multipart uploads (the
CSV in a field named ``file``); a file with any bad row changes nothing and is
answered 422 with every bad row by line.

Who may (``auth/roles.py``): anyone reads and exports (``parties.read``);
customers are written with ``parties.write`` (a cashier signs one up), suppliers
with ``suppliers.write``; a customer's credit limit, an opening balance and an
import file (whose rows may carry opening balances) need ``parties.credit`` as
well. A warehouse named, or where an opening balance is posted, is in the staff
member's scope (``_placed``; an import file's ``warehouse`` cells likewise, the
whole file refused naming the line). Every POST is idempotent on
``Idempotency-Key``; an import's key is bound to the file's bytes
(``api.idempotent.run_admin_unit``).
"""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.responses import Response

from tillbook.api import routing
from tillbook.api.admin.deps import Allowed, path_id, require_json
from tillbook.api.admin.uploads import uploaded_file
from tillbook.api.body import openapi_body, parse_body
from tillbook.api.deps import DB
from tillbook.api.envelope import ok
from tillbook.api.idempotent import run_admin_unit
from tillbook.api.responses import JSON
from tillbook.auth.admin import AdminContext
from tillbook.errors import invalid
from tillbook.imports import MAX_BYTES
from tillbook.kit.bounds import query_text, stored_length
from tillbook.kit.pagination import parse_page
from tillbook.kit.refs import ref_to_id
from tillbook.kit.text import quoted
from tillbook.kit.versions import etag, parse_if_match
from tillbook.models import User
from tillbook.parties import import_export, service
from tillbook.parties.schemas import PartyIn, PartyPatch
from tillbook.parties.service import AdminParty
from tillbook.unit import UnitOfWork

router = routing.admin(tags=["admin: customers and suppliers"])

# path segment -> party kind
KINDS = {"customers": "customer", "suppliers": "supplier"}
# party kind -> the permission that writes it
WRITE = {"customer": "parties.write", "supplier": "suppliers.write"}
# Fields that move money: what a customer may owe, what a party owed on day one.
CREDIT_FIELDS = frozenset({"credit_limit", "opening_balance"})
MAX_SEARCH = stored_length(User.name)


def _kind(segment: str) -> str:
    return KINDS[segment]


def _one(data: AdminParty) -> JSON:
    return JSON(ok(data), headers={"ETag": etag(data["version"])})


def _etag(body: dict[str, Any]) -> dict[str, str]:
    return {"ETag": etag(body["data"]["version"])}


def _credit(ctx: AdminContext, sent: set[str]) -> None:
    """Setting (or, in an edit, clearing) a credit limit or an opening balance needs
    ``parties.credit`` besides the party's write permission."""
    if sent & CREDIT_FIELDS:
        ctx.require("parties.credit")


def _placed(ctx: AdminContext, body: PartyIn, write: str) -> PartyIn:
    """Where a new party's opening balance is posted, asked of ``auth/roles.py``
    before anything is looked up: a warehouse the body names must be in the staff
    member's scope, and a scoped member who names none posts in their own (an
    unscoped one's goes to the company's first, ``service.opening_warehouse``)."""
    named = ref_to_id(body.warehouse_id)
    if body.warehouse_id is not None and named is None:
        return body  # names no warehouse at all: the service's 422 says so
    if not body.opening_balance:
        if named is not None:
            ctx.require(write, named)
        return body
    target = ctx.warehouse_for("parties.credit", named)
    return body if target is None else body.model_copy(update={"warehouse_id": target})


def _flag(name: str, raw: str | None) -> bool:
    if raw is None or raw == "":
        return False
    value = raw.strip().lower()
    if value in ("true", "1", "yes"):
        return True
    if value in ("false", "0", "no"):
        return False
    raise invalid(name, f"must be true or false (got {quoted(raw)})")


def _routes(segment: str) -> None:
    kind = _kind(segment)
    noun = kind  # "customer" / "supplier" in messages
    write = WRITE[kind]

    @router.get(f"/{segment}", name=f"list_{segment}")
    async def list_parties(
        db: DB,
        ctx: AdminContext = Allowed("parties.read"),
        page: str | None = None,
        limit: str | None = None,
        search: str | None = None,
        include_archived: str | None = None,
    ) -> dict[str, Any]:
        pg = parse_page(page, limit)
        text = query_text("search", search, MAX_SEARCH)
        archived = _flag("include_archived", include_archived)
        data = await db.replica_read(
            lambda s: service.page(
                s, ctx.company_id, kind, pg, search=text, include_archived=archived
            )
        )
        return ok(data)

    @router.post(f"/{segment}", name=f"create_{noun}", openapi_extra=openapi_body(PartyIn))
    async def create_party(request: Request, ctx: AdminContext = Allowed(write)) -> JSON:
        require_json(request)
        body, _raw = await parse_body(request, PartyIn)
        _credit(ctx, {f for f in body.model_fields_set if getattr(body, f) is not None})
        body = _placed(ctx, body, write)

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            return ok(await service.create(uow, ctx.company_id, kind, body, actor_id=ctx.user_id))

        return await run_admin_unit(request, ctx, work, headers=_etag)

    @router.get(f"/{segment}/{{party_id}}", name=f"get_{noun}")
    async def get_party(party_id: str, db: DB, ctx: AdminContext = Allowed("parties.read")) -> JSON:
        pid = path_id(party_id, noun)
        return _one(await db.read(lambda s: service.read(s, ctx.company_id, kind, pid)))

    @router.patch(
        f"/{segment}/{{party_id}}", name=f"update_{noun}", openapi_extra=openapi_body(PartyPatch)
    )
    async def update_party(
        party_id: str, request: Request, db: DB, ctx: AdminContext = Allowed(write)
    ) -> JSON:
        pid = path_id(party_id, noun)
        require_json(request)
        body, _raw = await parse_body(request, PartyPatch)
        _credit(ctx, set(body.model_fields_set))
        expected = parse_if_match(request.headers.get("if-match"))
        if expected is None:
            expected = body.version
        data = await db.write(
            lambda s: service.update(
                s, ctx.company_id, kind, pid, body, expected_version=expected, actor_id=ctx.user_id
            )
        )
        return _one(data)

    @router.post(f"/{segment}/{{party_id}}/archive", name=f"archive_{noun}")
    async def archive_party(
        party_id: str, request: Request, ctx: AdminContext = Allowed(write)
    ) -> JSON:
        pid = path_id(party_id, noun)
        expected = parse_if_match(request.headers.get("if-match"))

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            return ok(
                await service.archive(
                    uow.session,
                    ctx.company_id,
                    kind,
                    pid,
                    expected_version=expected,
                    actor_id=ctx.user_id,
                )
            )

        return await run_admin_unit(request, ctx, work, headers=_etag)

    @router.post(f"/import/{segment}", name=f"import_{segment}")
    async def import_parties(
        request: Request, ctx: AdminContext = Allowed("parties.credit")
    ) -> JSON:
        """``parties.credit`` (rows may post opening balances) and the kind's write."""
        ctx.require(write)
        data = await uploaded_file(request, MAX_BYTES)

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            counts = await import_export.import_parties(
                uow,
                ctx.company_id,
                kind,
                data,
                actor_id=ctx.user_id,
                placed=lambda wid: ctx.warehouse_for("parties.credit", wid),
            )
            return ok(counts.as_dict())

        return await run_admin_unit(request, ctx, work, content=data)

    @router.get(
        f"/export/{segment}",
        name=f"export_{segment}",
        response_class=Response,
        responses={200: {"content": {"text/csv": {}}, "description": "the CSV file"}},
    )
    async def export_parties(db: DB, ctx: AdminContext = Allowed("parties.read")) -> Response:
        found = await db.read(lambda s: import_export.export_parties(s, ctx.company_id, kind))
        return Response(
            found.csv.encode(),
            media_type="text/csv; charset=utf-8",
            headers={
                "Content-Disposition": f'attachment; filename="{segment}.csv"',
                # Parties without a code, which a file matched by code cannot carry.
                "X-Skipped-Without-Code": str(found.skipped),
            },
        )


for _segment in KINDS:
    _routes(_segment)
