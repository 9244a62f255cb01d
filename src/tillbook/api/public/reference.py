"""The company's reference data a till needs: payment modes, taxes, units and
expense categories (archived rows left out)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from tillbook.api.deps import DB, CurrentKey
from tillbook.api.public import openapi as r
from tillbook.catalog import queries as catalog
from tillbook.payments import reference as payments

router = APIRouter(tags=["reference"])


@router.get("/payment-modes", responses=r.ok(r.PaymentModeList, *r.READ))
async def list_payment_modes(key: CurrentKey, db: DB) -> dict[str, Any]:
    return {"status": "success", "data": await db.read(lambda s: payments.payment_modes(s, key))}


@router.get("/taxes", responses=r.ok(r.TaxList, *r.READ))
async def list_taxes(key: CurrentKey, db: DB) -> dict[str, Any]:
    return {"status": "success", "data": await db.read(lambda s: catalog.taxes(s, key))}


@router.get("/units", responses=r.ok(r.UnitList, *r.READ))
async def list_units(key: CurrentKey, db: DB) -> dict[str, Any]:
    return {"status": "success", "data": await db.read(lambda s: catalog.units(s, key))}


@router.get("/expense-categories", responses=r.ok(r.ExpenseCategoryList, *r.READ))
async def list_expense_categories(key: CurrentKey, db: DB) -> dict[str, Any]:
    data = await db.read(lambda s: payments.expense_categories(s, key))
    return {"status": "success", "data": data}
