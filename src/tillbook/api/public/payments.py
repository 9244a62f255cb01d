"""Payments (with invoice allocations), a party's outstanding invoices, expenses."""

from __future__ import annotations

from typing import Any

from fastapi import Request

from tillbook.api import envelope, routing
from tillbook.api.body import parse_body
from tillbook.api.deps import DB, CurrentKey
from tillbook.api.idempotent import run_write
from tillbook.api.public import openapi as r
from tillbook.api.responses import JSON
from tillbook.payments import expenses, service
from tillbook.payments.schemas import ExpenseIn, PaymentIn

router = routing.public(tags=["payments"])


@router.post(
    "/payments", openapi_extra=r.write_body(PaymentIn), responses=r.ok(r.PaymentCreated, *r.WRITE)
)
async def post_payment(request: Request, key: CurrentKey) -> JSON:
    body, raw = await parse_body(request, PaymentIn)
    return await run_write(
        request,
        key,
        raw,
        body.unique_id,
        lambda s: service.create_payment(s, key, body),
        answer=envelope.flat,
    )


@router.get("/payments/user-invoices", responses=r.ok(r.UserInvoicesResponse, *r.QUERY, *r.ONE))
async def get_user_invoices(key: CurrentKey, db: DB, user_id: str | None = None) -> dict[str, Any]:
    return envelope.ok(await db.read(lambda s: service.user_invoices(s, key, user_id)))


@router.post(
    "/expenses", openapi_extra=r.write_body(ExpenseIn), responses=r.ok(r.ExpenseCreated, *r.WRITE)
)
async def post_expense(request: Request, key: CurrentKey) -> JSON:
    body, raw = await parse_body(request, ExpenseIn)
    return await run_write(
        request,
        key,
        raw,
        body.unique_id,
        lambda s: expenses.create_expense(s, key, body),
        answer=envelope.flat,
    )


@router.get("/expenses", responses=r.ok(r.ExpenseList, *r.QUERY))
async def list_expenses(
    key: CurrentKey,
    db: DB,
    dates: str | None = None,
    page: str | None = None,
    limit: str | None = None,
) -> dict[str, Any]:
    return envelope.ok(await db.read(lambda s: expenses.expense_page(s, key, dates, page, limit)))
