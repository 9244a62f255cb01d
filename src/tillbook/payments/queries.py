"""The back office's read-only lists of payments and expenses: a page across the
company or one branch, a date range and a reference prefix; one statement for the
count and one for the page with its party, mode and category joined (the public
API's lists are one key's warehouse: ``service`` and ``expenses``)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import ColumnElement, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.errors import NotFound
from tillbook.kit.money import money_str
from tillbook.kit.pagination import Page, envelope
from tillbook.models import (
    Expense,
    ExpenseCategory,
    Order,
    Payment,
    PaymentAllocation,
    PaymentMode,
    User,
    Warehouse,
)


async def payments_page(
    session: AsyncSession,
    company_id: int,
    warehouse_id: int | None,
    *,
    date_from: dt.date | None,
    date_to: dt.date | None,
    reference: str | None,
    page: Page,
) -> dict[str, Any]:
    """Payments in and out, newest first; ``warehouse_id`` None: every branch."""
    conditions: list[ColumnElement[bool]] = [Payment.company_id == company_id]
    if warehouse_id is not None:
        conditions.append(Payment.warehouse_id == warehouse_id)
    if date_from is not None:
        conditions.append(Payment.date >= date_from)
    if date_to is not None:
        conditions.append(Payment.date <= date_to)
    if reference:
        conditions.append(Payment.reference.startswith(reference, autoescape=True))
    total = (await session.execute(select(func.count()).where(*conditions))).scalar_one()
    rows = (
        await session.execute(
            select(Payment, User.name, PaymentMode.name)
            .join(User, (User.id == Payment.user_id) & (User.company_id == Payment.company_id))
            .join(
                PaymentMode,
                (PaymentMode.id == Payment.payment_mode_id)
                & (PaymentMode.company_id == Payment.company_id),
            )
            .where(*conditions)
            .order_by(Payment.date.desc(), Payment.id.desc())
            .offset(page.offset)
            .limit(page.limit)
        )
    ).all()
    items = [
        {
            "id": p.id,
            "date": p.date.isoformat(),
            "warehouse_id": p.warehouse_id,
            "payment_type": p.payment_type,
            "party": party,
            "payment_mode": mode,
            "amount": money_str(p.amount),
            "unallocated_amount": money_str(p.unallocated_amount),
            "reference": p.reference,
            "order_id": p.order_id,
        }
        for p, party, mode in rows
    ]
    return envelope(page, total, items)


async def expenses_page(
    session: AsyncSession,
    company_id: int,
    warehouse_id: int | None,
    *,
    date_from: dt.date | None,
    date_to: dt.date | None,
    reference: str | None,
    page: Page,
) -> dict[str, Any]:
    """Expenses, newest first; ``warehouse_id`` None: the whole company, those of
    no branch too."""
    conditions: list[ColumnElement[bool]] = [Expense.company_id == company_id]
    if warehouse_id is not None:
        conditions.append(Expense.warehouse_id == warehouse_id)
    if date_from is not None:
        conditions.append(Expense.date >= date_from)
    if date_to is not None:
        conditions.append(Expense.date <= date_to)
    if reference:
        conditions.append(
            or_(
                Expense.reference.startswith(reference, autoescape=True),
                ExpenseCategory.name.startswith(reference, autoescape=True),
            )
        )
    joined = select(Expense, ExpenseCategory.name, PaymentMode.name).join(
        ExpenseCategory,
        (ExpenseCategory.id == Expense.expense_category_id)
        & (ExpenseCategory.company_id == Expense.company_id),
    )
    total = (
        await session.execute(
            select(func.count())
            .select_from(Expense)
            .join(
                ExpenseCategory,
                (ExpenseCategory.id == Expense.expense_category_id)
                & (ExpenseCategory.company_id == Expense.company_id),
            )
            .where(*conditions)
        )
    ).scalar_one()
    rows = (
        await session.execute(
            joined.outerjoin(
                PaymentMode,
                (PaymentMode.id == Expense.payment_mode_id)
                & (PaymentMode.company_id == Expense.company_id),
            )
            .where(*conditions)
            .order_by(Expense.date.desc(), Expense.id.desc())
            .offset(page.offset)
            .limit(page.limit)
        )
    ).all()
    items = [
        {
            "id": e.id,
            "date": e.date.isoformat(),
            "warehouse_id": e.warehouse_id,
            "category": category,
            "payment_mode": mode,
            "amount": money_str(e.amount),
            "status": e.status,
            "reference": e.reference,
            "notes": e.notes,
        }
        for e, category, mode in rows
    ]
    return envelope(page, total, items)


async def payment_receipt(
    session: AsyncSession, company_id: int, payment_id: int
) -> dict[str, Any]:
    """One payment as its receipt prints it: the party, the mode, the branch and the
    invoices it settled (another company's payment is not found, like a missing one)."""
    row = (
        await session.execute(
            select(Payment, User, PaymentMode.name, Warehouse.name)
            .join(User, (User.id == Payment.user_id) & (User.company_id == Payment.company_id))
            .join(
                PaymentMode,
                (PaymentMode.id == Payment.payment_mode_id)
                & (PaymentMode.company_id == Payment.company_id),
            )
            .join(
                Warehouse,
                (Warehouse.id == Payment.warehouse_id)
                & (Warehouse.company_id == Payment.company_id),
            )
            .where(Payment.id == payment_id, Payment.company_id == company_id)
        )
    ).one_or_none()
    if row is None:
        raise NotFound(f"payment {payment_id} not found")
    payment, party, mode, branch = row
    allocations = (
        await session.execute(
            select(Order.id, Order.invoice_number, Order.order_date, PaymentAllocation.amount)
            .join(
                PaymentAllocation,
                (PaymentAllocation.order_id == Order.id)
                & (PaymentAllocation.company_id == Order.company_id),
            )
            .where(
                PaymentAllocation.payment_id == payment.id,
                PaymentAllocation.company_id == company_id,
            )
            .order_by(Order.order_date, Order.id)
        )
    ).all()
    return {
        "id": payment.id,
        "date": payment.date.isoformat(),
        "warehouse_id": payment.warehouse_id,
        "branch": branch,
        "payment_type": payment.payment_type,
        "party": {"id": party.id, "name": party.name, "user_type": party.user_type},
        "payment_mode": mode,
        "amount": money_str(payment.amount),
        "unallocated_amount": money_str(payment.unallocated_amount),
        "reference": payment.reference,
        "notes": payment.notes,
        "recorded_at": payment.created_at,
        "allocations": [
            {
                "order_id": oid,
                "invoice_number": number,
                "order_date": day.isoformat(),
                "amount": money_str(amount),
            }
            for oid, number, day, amount in allocations
        ],
    }


async def expense_one(session: AsyncSession, company_id: int, expense_id: int) -> dict[str, Any]:
    """One expense with its category and mode, for the page that approves and pays it."""
    row = (
        await session.execute(
            select(Expense, ExpenseCategory.name, PaymentMode.name)
            .join(
                ExpenseCategory,
                (ExpenseCategory.id == Expense.expense_category_id)
                & (ExpenseCategory.company_id == Expense.company_id),
            )
            .outerjoin(
                PaymentMode,
                (PaymentMode.id == Expense.payment_mode_id)
                & (PaymentMode.company_id == Expense.company_id),
            )
            .where(Expense.id == expense_id, Expense.company_id == company_id)
        )
    ).one_or_none()
    if row is None:
        raise NotFound(f"expense {expense_id} not found")
    e, category, mode = row
    return {
        "id": e.id,
        "date": e.date.isoformat(),
        "warehouse_id": e.warehouse_id,
        "category": category,
        "payment_mode": mode,
        "amount": money_str(e.amount),
        "status": e.status,
        "reference": e.reference,
        "notes": e.notes,
        "journal_entry_id": e.journal_entry_id,
        "payment_entry_id": e.payment_entry_id,
        "paid_on": e.paid_on.isoformat() if e.paid_on else None,
    }
