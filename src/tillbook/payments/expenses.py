"""POST /expenses and GET /expenses (DESIGN.md §5).

With a ``payment_mode_id`` the expense is paid now: Dr the category's account,
Cr the mode's account (rule ``expense_paid``). Without one it is pending
approval: Dr the category's account, Cr 21100 with no party (rule
``expense_pending``); the books count pending expenses into 21100 beside the
suppliers' balances. A supplier named by ``user_id`` is kept on the expense only.
Gateway fees are expenses on the "Bank and Gateway Charges" category (52300).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.auth.context import AuthContext
from tillbook.kit.money import money_str
from tillbook.kit.pagination import envelope, parse_page
from tillbook.kit.problems import Problems
from tillbook.kit.refs import ref_to_id
from tillbook.ledger.rules import RuleName
from tillbook.ledger.service import post
from tillbook.models import Account, Expense, ExpenseCategory
from tillbook.orders import lookup
from tillbook.orders.queries import parse_dates
from tillbook.payments.schemas import ExpenseIn
from tillbook.unit import UnitOfWork


@dataclass(frozen=True)
class Category:
    id: int
    name: str
    account_code: str


async def category(
    session: AsyncSession,
    company_id: int,
    ref: lookup.RefValue,
    field: str,
    problems: Problems,
) -> Category | None:
    """The company's expense category named by id, numeric string or xid; an archived
    one takes no new expense (read here, never cached: always as of now)."""
    id_ = ref_to_id(ref)
    row = None
    if id_ is not None:
        row = (
            await session.execute(
                select(
                    ExpenseCategory.id,
                    ExpenseCategory.name,
                    Account.code,
                    ExpenseCategory.archived_at,
                )
                .join(Account, Account.id == ExpenseCategory.account_id)
                .where(ExpenseCategory.id == id_, ExpenseCategory.company_id == company_id)
            )
        ).one_or_none()
    if row is None:
        problems.add(field, f"unknown expense category {ref!r}")
        return None
    if row[3] is not None:
        problems.add(field, f"expense category {row[1]!r} is archived and takes no new expenses")
        return None
    return Category(row[0], row[1], row[2])


def expense_response(expense: Expense) -> dict[str, Any]:
    return {
        "status": "success",
        "expense_id": expense.id,
        "expense_status": expense.status,
        "journal_entry_id": expense.journal_entry_id,
        "amount": money_str(expense.amount),
    }


async def create_expense(uow: UnitOfWork, key: AuthContext, body: ExpenseIn) -> dict[str, Any]:
    session = uow.session
    problems = Problems()
    cat = await category(
        session, key.company_id, body.expense_category_id, "expense_category_id", problems
    )
    modes = await lookup.payment_modes(
        session,
        key.company_id,
        [("payment_mode_id", body.payment_mode_id)] if body.payment_mode_id is not None else [],
        problems,
        version=key.reference_version,
    )
    supplier = None
    if body.user_id is not None:
        supplier = await lookup.party(
            uow, key.company_id, body.user_id, "supplier", "user_id", problems
        )
    problems.raise_if_any()
    assert cat is not None
    mode = modes.get("payment_mode_id")

    expense = Expense(
        company_id=key.company_id,
        warehouse_id=key.warehouse_id,
        expense_category_id=cat.id,
        amount=body.amount,
        date=body.date,
        payment_mode_id=mode.id if mode else None,
        user_id=supplier.id if supplier else None,
        status="paid" if mode else "pending",
        reference=body.reference,
        notes=body.notes or "",
        created_by=key.user_id,
    )
    session.add(expense)
    await session.flush()

    expense_leg = [(cat.account_code, body.amount)]
    rule: RuleName
    if mode is not None:
        rule = "expense_paid"
        figures: dict[str, Any] = {
            "expense": expense_leg,
            "tenders": [(mode.account_code, body.amount)],
        }
        how = f"paid by {mode.name}"
    else:
        rule = "expense_pending"
        figures = {"expense": expense_leg, "amount": body.amount}
        how = "pending approval"
    expense.journal_entry_id = await post(
        uow,
        company_id=key.company_id,
        warehouse_id=key.warehouse_id,
        rule=rule,
        figures=figures,
        narration=f"Expense: {cat.name}, {how}"
        + (f" ({body.reference})" if body.reference else ""),
        source_type="expense",
        source_id=expense.id,
        field="amount",
        entry_date=body.date,
        created_by=key.user_id,
    )
    await session.flush()
    return expense_response(expense)


def expense_item(expense: Expense, cat_name: str, account_code: str) -> dict[str, Any]:
    return {
        "id": expense.id,
        "expense_category": {
            "id": expense.expense_category_id,
            "name": cat_name,
            "account_code": account_code,
        },
        "amount": money_str(expense.amount),
        "date": expense.date.isoformat(),
        "status": expense.status,
        "payment_mode_id": expense.payment_mode_id,
        "user_id": expense.user_id,
        "reference": expense.reference,
        "notes": expense.notes,
        "journal_entry_id": expense.journal_entry_id,
    }


async def expense_page(
    session: AsyncSession,
    key: AuthContext,
    dates: str | None,
    page: str | None,
    limit: str | None,
) -> dict[str, Any]:
    """The key's warehouse's expenses, newest first."""
    p = parse_page(page, limit)
    start, end = parse_dates(dates)
    conditions = [Expense.warehouse_id == key.warehouse_id]
    if start is not None:
        conditions.append(Expense.date >= start)
    if end is not None:
        conditions.append(Expense.date <= end)
    total = (await session.execute(select(func.count()).where(*conditions))).scalar_one()
    rows = (
        await session.execute(
            select(Expense, ExpenseCategory.name, Account.code)
            .join(ExpenseCategory, ExpenseCategory.id == Expense.expense_category_id)
            .join(Account, Account.id == ExpenseCategory.account_id)
            .where(*conditions)
            .order_by(Expense.date.desc(), Expense.id.desc())
            .offset(p.offset)
            .limit(p.limit)
        )
    ).all()
    return envelope(p, total, [expense_item(e, name, code) for e, name, code in rows])
