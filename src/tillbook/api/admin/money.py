"""Money in and out from the back office: a customer's or a supplier's payment
allocated to their invoices, an expense paid now or pending, approving and paying a
pending expense, and money moved between two payment modes' accounts (takings paid
into the bank).

Each is the till's own service acting for one branch (``payments.office``), so the
checks, the locks and the postings are those of the public ``POST /payments`` and
``POST /expenses``. The body names the branch (``warehouse_id``; a staff member
limited to one branch may leave it out). Who may (``auth/roles.py``): a customer's
payment ``payments.receive`` (a cashier too), a supplier's ``payments.make``, an
expense ``expenses.write``, its approval ``expenses.approve``, a move
``money.move``, each for that branch. Every POST is idempotent on
``Idempotency-Key`` (``api.idempotent.run_admin_unit``) and audited."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Request

from tillbook.api import envelope, routing
from tillbook.api.admin.deps import Allowed, path_id, query_id, require_json
from tillbook.api.body import openapi_body, parse_body
from tillbook.api.deps import DB
from tillbook.api.idempotent import run_admin_unit
from tillbook.api.responses import JSON
from tillbook.auth.admin import AdminContext
from tillbook.errors import NotFound, invalid
from tillbook.kit.pagination import parse_page
from tillbook.payments import expenses, moves, office
from tillbook.payments.schemas import (
    BranchExpenseIn,
    BranchMoveIn,
    BranchPaymentIn,
    ExpensePaymentIn,
)
from tillbook.unit import UnitOfWork

router = routing.admin(tags=["admin: money"])

PAYMENT_PERMISSION = {"in": "payments.receive", "out": "payments.make"}


def branch(ctx: AdminContext, asked: int | None, permission: str) -> int:
    """The branch a write is recorded in, once the staff member may ``permission``
    there (403 otherwise, before anything is looked up)."""
    wid = asked if asked is not None else ctx.warehouse_id
    if wid is None:
        raise invalid("warehouse_id", "name the branch it is recorded in")
    ctx.require(permission, wid)
    return wid


@router.post("/payments", status_code=201, openapi_extra=openapi_body(BranchPaymentIn))
async def record_payment(
    request: Request,
    ctx: Annotated[AdminContext, Allowed("payments.receive", per_warehouse=True)],
) -> JSON:
    require_json(request)
    body, _raw = await parse_body(request, BranchPaymentIn)
    wid = branch(ctx, body.warehouse_id, PAYMENT_PERMISSION[body.payment_type])

    async def write(uow: UnitOfWork) -> dict[str, Any]:
        return envelope.flat(
            await office.record_payment(uow, ctx.company_id, wid, ctx.user_id, body)
        )

    return await run_admin_unit(request, ctx, write, status=201)


@router.post("/expenses", status_code=201, openapi_extra=openapi_body(BranchExpenseIn))
async def record_expense(
    request: Request,
    ctx: Annotated[AdminContext, Allowed("expenses.write", per_warehouse=True)],
) -> JSON:
    require_json(request)
    body, _raw = await parse_body(request, BranchExpenseIn)
    wid = branch(ctx, body.warehouse_id, "expenses.write")

    async def write(uow: UnitOfWork) -> dict[str, Any]:
        return envelope.flat(
            await office.record_expense(uow, ctx.company_id, wid, ctx.user_id, body)
        )

    return await run_admin_unit(request, ctx, write, status=201)


@router.post("/expenses/{expense_id}/pay", openapi_extra=openapi_body(ExpensePaymentIn))
async def pay_expense(
    request: Request,
    expense_id: str,
    ctx: Annotated[AdminContext, Allowed("expenses.approve", per_warehouse=True)],
    db: DB,
) -> JSON:
    """Approve and pay a pending expense: Dr 21100, Cr the mode's account. A second
    approval (at once or later) is a 409 that changes nothing."""
    eid = path_id(expense_id, "expense")
    require_json(request)
    body, _raw = await parse_body(request, ExpensePaymentIn)
    wid = await db.read(lambda s: expenses.expense_branch(s, ctx.company_id, eid))
    if wid is None:  # an expense of no branch is not paid here
        raise NotFound(f"expense {eid} not found")
    ctx.require("expenses.approve", wid)
    found = wid

    async def write(uow: UnitOfWork) -> dict[str, Any]:
        return envelope.flat(
            await office.pay_expense(uow, ctx.company_id, found, ctx.user_id, eid, body)
        )

    return await run_admin_unit(request, ctx, write)


@router.post("/money-moves", status_code=201, openapi_extra=openapi_body(BranchMoveIn))
async def move_money(
    request: Request,
    ctx: Annotated[AdminContext, Allowed("money.move", per_warehouse=True)],
) -> JSON:
    require_json(request)
    body, _raw = await parse_body(request, BranchMoveIn)
    wid = branch(ctx, body.warehouse_id, "money.move")

    async def write(uow: UnitOfWork) -> dict[str, Any]:
        return await office.move_money(uow, ctx.company_id, wid, ctx.user_id, body)

    return await run_admin_unit(request, ctx, write, status=201)


@router.get("/money-moves")
async def list_moves(
    ctx: Annotated[AdminContext, Allowed("books.read", per_warehouse=True)],
    db: DB,
    warehouse_id: str | None = None,
    page: str | None = None,
    limit: str | None = None,
) -> dict[str, Any]:
    wid = ctx.warehouse_for("books.read", query_id(warehouse_id, "warehouse_id"))
    paging = parse_page(page, limit)

    data = await db.read(
        lambda s: moves.moves_page(s, ctx.company_id, None if wid is None else [wid], paging)
    )
    return envelope.ok(data)
