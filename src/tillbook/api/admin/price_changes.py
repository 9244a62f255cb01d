"""Batch price changes in the back-office API (``/price-changes``): the spec's price
adjustment for many products and branches at once, through the same service as the
page (``catalog.batch_prices``, ``web/prices.py``): preview old -> new for every
listing (nothing written), apply what was previewed (refused whole when a price
moved since), and the history of changes applied.

Who may: ``prices.write`` for every branch named (a manager scoped to one branch:
that branch only, another one is a 403 naming the permission); a branch of another
company is not found. The service audits each change once per branch (the history
this lists) and each listing's price as a single edit would. Applying is idempotent
on ``Idempotency-Key``."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated, Any

from fastapi import Request
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.api import envelope, routing
from tillbook.api.admin.deps import Allowed, query_id, require_json
from tillbook.api.body import openapi_body, parse_body
from tillbook.api.deps import DB
from tillbook.api.idempotent import run_admin_unit
from tillbook.api.responses import JSON
from tillbook.auth.admin import AdminContext
from tillbook.catalog import batch_prices
from tillbook.catalog.batch_prices import PriceChangeIn
from tillbook.catalog.schemas import PriceChangeApplyIn, PriceChangeBody
from tillbook.errors import NotFound, ValidationFailed
from tillbook.kit.money import money_str
from tillbook.kit.pagination import parse_page
from tillbook.kit.refs import ref_to_id
from tillbook.reports import dashboard
from tillbook.unit import UnitOfWork

router = routing.admin("/price-changes", tags=["admin: catalog"])
Pricer = Annotated[AdminContext, Allowed("prices.write", per_warehouse=True)]


async def _change(db: Any, ctx: AdminContext, body: PriceChangeBody) -> PriceChangeIn:
    """The body as the service's change: every branch one of the company's (404
    otherwise) that this staff member may price (403 otherwise); ids that name
    nothing a 422 on their field."""
    errors: dict[str, list[str]] = {}
    wids: list[int] = []
    for i, ref in enumerate(body.warehouse_ids):
        wid = ref_to_id(ref)
        if wid is None:
            errors[f"warehouse_ids.{i}"] = [f"unknown branch {ref!r}"]
        else:
            wids.append(wid)
    category_id = ref_to_id(body.category_id) if body.category_id is not None else None
    if body.category_id is not None and category_id is None:
        errors["category_id"] = [f"unknown category {body.category_id!r}"]
    if errors:
        raise ValidationFailed(errors)
    ours = {i for i, _n in await db.read(lambda s: dashboard.warehouses(s, ctx.company_id))}
    for wid in wids:
        if wid not in ours:
            raise NotFound(f"warehouse {wid} not found")
        ctx.require("prices.write", wid)
    return PriceChangeIn(
        warehouse_ids=tuple(dict.fromkeys(wids)),
        scope=body.scope,
        target=body.target,
        method=body.method,
        value=body.value,
        step=body.step,
        search=body.search,
        category_id=category_id,
        item_codes=tuple(dict.fromkeys(body.item_codes)),
        notes=body.notes or "",
    )


def _row(row: batch_prices.PlannedRow) -> dict[str, Any]:
    out = asdict(row)
    for name in ("old_sales", "new_sales", "old_purchase", "new_purchase"):
        out[name] = money_str(out[name])
    out["changes"] = row.changes
    del out["version"]
    return out


@router.post("/preview", openapi_extra=openapi_body(PriceChangeBody))
async def preview(request: Request, ctx: Pricer, db: DB) -> dict[str, Any]:
    """Old -> new for every chosen listing, and the fingerprint to apply it with."""
    require_json(request)
    body, _raw = await parse_body(request, PriceChangeBody)
    change = await _change(db, ctx, body)
    plan = await db.read(lambda s: batch_prices.plan(s, ctx.company_id, change))
    return envelope.ok(
        {
            "fingerprint": plan.fingerprint,
            "rule": batch_prices.rule_text(change),
            "changing": sum(1 for r in plan.rows if r.changes),
            "problems": len(plan.problems),
            "rows": [_row(r) for r in plan.rows],
        },
    )


@router.post("", openapi_extra=openapi_body(PriceChangeApplyIn))
async def apply(request: Request, ctx: Pricer, db: DB) -> JSON:
    require_json(request)
    body, _raw = await parse_body(request, PriceChangeApplyIn)
    change = await _change(db, ctx, body)

    async def work(uow: UnitOfWork) -> dict[str, Any]:
        done = await batch_prices.apply(
            uow, ctx.company_id, change, fingerprint=body.fingerprint, actor_id=ctx.user_id
        )
        return envelope.ok(done)

    return await run_admin_unit(request, ctx, work)


@router.get("")
async def history(
    ctx: Pricer,
    db: DB,
    warehouse_id: str | None = None,
    page: str | None = None,
    limit: str | None = None,
) -> dict[str, Any]:
    """The changes applied, newest first: one branch's (a scoped staff member's
    own, whatever is asked) or every branch's."""
    p = parse_page(page, limit)
    wid = query_id(warehouse_id, "warehouse_id")
    if wid is not None:
        ctx.require("prices.write", wid)
    shown = ctx.warehouse_id if ctx.warehouse_id is not None else wid

    async def read(s: AsyncSession) -> dict[str, Any]:
        return await batch_prices.history_page(s, ctx.company_id, shown, p)

    return envelope.ok(await db.read(read))
