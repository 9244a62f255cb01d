"""The company's reference data a till needs: payment modes, taxes, units and
expense categories (archived rows left out)."""

from __future__ import annotations

from typing import Any

from fastapi import Request, Response

from tillbook.api import answers, conditional, envelope, routing
from tillbook.api.conditional import CONDITIONAL, list_or_feed
from tillbook.api.deps import DB, CurrentKey
from tillbook.api.public import openapi as r
from tillbook.catalog import changes
from tillbook.catalog import queries as catalog
from tillbook.payments import reference as payments

router = routing.public(tags=["reference"])


@router.get(
    "/payment-modes",
    responses=r.cached(r.PaymentModeList, r.PaymentModeChanges),
    openapi_extra=CONDITIONAL,
)
async def list_payment_modes(
    request: Request,
    key: CurrentKey,
    db: DB,
    updated_since: str | None = None,
    cursor: str | None = None,
    limit: str | None = None,
) -> Response:
    """With ``updated_since`` or ``cursor``: the change feed (``kit.changes``)."""
    walk = conditional.feed_walk(key, "payment-modes", updated_since, cursor, limit)
    return await list_or_feed(
        request,
        db,
        key,
        walk,
        lambda s, w: payments.payment_mode_changes(s, key, w),
        lambda: db.reads(lambda r: payments.payment_modes(r, key)),
    )


@router.get(
    "/taxes",
    responses=r.cached(r.TaxList, r.TaxChanges),
    openapi_extra=CONDITIONAL,
)
async def list_taxes(
    request: Request,
    key: CurrentKey,
    db: DB,
    updated_since: str | None = None,
    cursor: str | None = None,
    limit: str | None = None,
) -> Response:
    """With ``updated_since`` or ``cursor``: the change feed (``kit.changes``)."""
    walk = conditional.feed_walk(key, "taxes", updated_since, cursor, limit)
    return await list_or_feed(
        request,
        db,
        key,
        walk,
        lambda s, w: changes.taxes(s, key, w),
        lambda: db.reads(lambda r: catalog.taxes(r, key)),
    )


@router.get("/units", responses=r.cached(r.UnitList, errors=()), openapi_extra=CONDITIONAL)
async def list_units(request: Request, key: CurrentKey, db: DB) -> Response:
    kept = answers.of(request)
    return await kept.serve(request, key, lambda: db.reads(lambda r: catalog.units(r, key)))


@router.get("/expense-categories", responses=r.ok(r.ExpenseCategoryList, *r.READ))
async def list_expense_categories(key: CurrentKey, db: DB) -> dict[str, Any]:
    return envelope.ok(await db.reads(lambda r: payments.expense_categories(r, key)))
