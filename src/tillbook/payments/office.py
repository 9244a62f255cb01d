"""Money in and out as a staff member records it in the back office (the web pages
and the admin API): the till's own services (``service.create_payment``,
``expenses.create_expense`` and ``pay_expense``, ``moves.move_money``), acting for
one branch as a key of it would (``auth.context.acting_for``), so the same checks,
locks, postings and audit records apply whichever door a payment came through. The
caller has checked the staff member's permission for that branch
(``auth/roles.py``)."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from tillbook.auth.context import acting_for
from tillbook.currency import rates
from tillbook.payments import expenses, moves, service
from tillbook.payments.schemas import (
    AccountMoveIn,
    AllocationIn,
    ExpenseIn,
    ExpensePaymentIn,
    PaymentIn,
)
from tillbook.unit import UnitOfWork


async def record_payment(
    uow: UnitOfWork,
    company_id: int,
    warehouse_id: int,
    actor_id: int,
    body: PaymentIn,
    *,
    settle_oldest_first: bool = False,
) -> service.PaymentRecorded:
    """``settle_oldest_first``: a payment that names no invoices settles the party's
    open invoices in that branch oldest first (``oldest_first``), as read in this
    same transaction."""
    key = await acting_for(uow.session, company_id, warehouse_id, actor_id)
    if settle_oldest_first and not body.invoices:
        invoices = await service.user_invoices(uow.session, key, str(body.user_id))
        # Only the invoices in the payment's own currency (DESIGN §16).
        base = (await rates.company(uow.session, company_id)).base_currency
        paying = rates.check_code("currency", body.currency) if body.currency else base
        dues = [
            (i["order_id"], Decimal(i["due_amount"]))
            for i in invoices["invoices"]
            if i.get("currency", base) == paying
        ]
        allocations = [
            AllocationIn(order_id=order_id, amount=amount)
            for order_id, amount in oldest_first(body.amount, dues)
        ]
        body = body.model_copy(update={"invoices": allocations})
    return await service.create_payment(uow, key, body)


async def record_expense(
    uow: UnitOfWork, company_id: int, warehouse_id: int, actor_id: int, body: ExpenseIn
) -> expenses.ExpenseRecorded:
    key = await acting_for(uow.session, company_id, warehouse_id, actor_id)
    return await expenses.create_expense(uow, key, body)


async def pay_expense(
    uow: UnitOfWork,
    company_id: int,
    warehouse_id: int,
    actor_id: int,
    expense_id: int,
    body: ExpensePaymentIn,
) -> expenses.ExpensePaid:
    key = await acting_for(uow.session, company_id, warehouse_id, actor_id)
    return await expenses.pay_expense(uow, key, expense_id, body)


async def move_money(
    uow: UnitOfWork, company_id: int, warehouse_id: int, actor_id: int, body: AccountMoveIn
) -> dict[str, Any]:
    key = await acting_for(uow.session, company_id, warehouse_id, actor_id)
    return await moves.move_money(uow, key, body)


def oldest_first(amount: Decimal, dues: Sequence[tuple[int, Decimal]]) -> list[tuple[int, Decimal]]:
    """A payment spread over open invoices, oldest first (``dues`` in that order):
    each takes what it owes until the amount runs out; what is left over stays with
    the party as a credit."""
    left = amount
    out: list[tuple[int, Decimal]] = []
    for order_id, due in dues:
        if left <= 0:
            break
        take = min(left, due)
        if take > 0:
            out.append((order_id, take))
            left -= take
    return out
