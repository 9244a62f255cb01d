"""POST /expenses and GET /expenses (DESIGN.md §5).

With a ``payment_mode_id`` the expense is paid now: Dr the category's account,
Cr the mode's account (rule ``expense_paid``). Without one it is pending
approval: Dr the category's account, Cr 21100 with no party (rule
``expense_pending``); the books count pending expenses into 21100 beside the
suppliers' balances. A supplier named by ``user_id`` is kept on the expense only.
Gateway fees are expenses on the "Bank and Gateway Charges" category (52300).

A pending expense is later approved and paid (``pay_expense``): Dr 21100 (no
party), Cr the mode's account (rule ``expense_payment``); the row moves from
``pending`` to ``paid`` and names that entry (``payment_entry_id``), so 21100
keeps equal to the suppliers' balances plus what is still pending. The row is
locked first, so of two approvals at once exactly one pays; the other finds it
paid and is refused (409).

The answers' shapes are declared here (``kit/shapes.py``): an expense as listed
(``Expense``), and as recorded or paid (``ExpenseRecorded``, ``ExpensePaid``);
``api/public/openapi.py`` wraps them.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Annotated, Any, Literal, cast

from pydantic import Field
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession
from typing_extensions import TypedDict

from tillbook.audit.service import record
from tillbook.auth.context import AuthContext
from tillbook.currency import documents, rates
from tillbook.errors import Conflict, NotFound, invalid
from tillbook.kit.money import ZERO, money_str
from tillbook.kit.pagination import Paged, paged, parse_page
from tillbook.kit.problems import Problems
from tillbook.kit.refs import ref_to_id
from tillbook.kit.shapes import DateStr, MoneyStr, answer
from tillbook.ledger.fx import EXCHANGE
from tillbook.ledger.rules import RuleName
from tillbook.ledger.service import post
from tillbook.models import Account, ExpenseCategory
from tillbook.models import Expense as ExpenseRow
from tillbook.orders import lookup
from tillbook.orders.queries import parse_dates
from tillbook.payments.schemas import ExpenseIn, ExpensePaymentIn
from tillbook.unit import UnitOfWork

ExpenseStatus = Literal["paid", "pending"]


class ForeignExpense(TypedDict, total=False):
    """What a foreign expense's answers add (DESIGN §16); nothing for a base one."""

    currency: Annotated[str, Field(description="the expense's currency (ISO 4217)")]
    exchange_rate: Annotated[
        str, Field(description="base units per one unit of the expense's currency, exact")
    ]
    base_amount: MoneyStr


@answer
class ExpenseRecorded(ForeignExpense):
    # What ``POST /expenses`` answers (flat beside ``status``).
    expense_id: int
    expense_status: ExpenseStatus
    journal_entry_id: int | None
    amount: MoneyStr


class ExpensePaid(ExpenseRecorded):
    """A pending expense approved and paid (the back office): the entry that paid it."""

    payment_entry_id: int | None
    paid_on: DateStr


@answer
class ExpenseCategoryRef(TypedDict):
    id: int
    name: str
    account_code: str


@answer
class Expense(ForeignExpense):
    id: int
    expense_category: ExpenseCategoryRef
    amount: MoneyStr
    date: DateStr
    status: ExpenseStatus
    payment_mode_id: int | None
    user_id: int | None
    reference: str | None
    notes: str
    journal_entry_id: int | None


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
                .join(
                    Account,
                    (Account.id == ExpenseCategory.account_id)
                    & (Account.company_id == ExpenseCategory.company_id),
                )
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


def expense_response(expense: ExpenseRow) -> ExpenseRecorded:
    return {
        "expense_id": expense.id,
        # The column holds these codes only (its writers are typed with them).
        "expense_status": cast(ExpenseStatus, expense.status),
        "journal_entry_id": expense.journal_entry_id,
        "amount": money_str(expense.amount),
        **expense_currency(expense),
    }


def expense_currency(expense: ExpenseRow) -> ForeignExpense:
    """What a foreign expense's answers add (DESIGN §16); nothing for a base one."""
    if expense.currency is None:
        return {}
    return {
        "currency": expense.currency,
        "exchange_rate": str(expense.exchange_rate),
        "base_amount": money_str(expense.base_amount or ZERO),
    }


async def expense_branch(session: AsyncSession, company_id: int, expense_id: int) -> int | None:
    """The branch an expense of the company belongs to (to check who may pay it
    before acting for that branch); not found when it is not the company's."""
    row = (
        await session.execute(
            select(ExpenseRow.warehouse_id).where(
                ExpenseRow.id == expense_id, ExpenseRow.company_id == company_id
            )
        )
    ).one_or_none()
    if row is None:
        raise NotFound(f"expense {expense_id} not found")
    return None if row[0] is None else int(row[0])


async def pay_expense(
    uow: UnitOfWork, key: AuthContext, expense_id: int, body: ExpensePaymentIn
) -> ExpensePaid:
    """Approve and pay a pending expense of the key's warehouse (DESIGN.md §5: the
    spec's expense approval). Locked before it is read, so a second approval, at
    once or later, finds it paid: a 409 that changes nothing."""
    session = uow.session
    expense = (
        await session.execute(
            select(ExpenseRow)
            .where(
                ExpenseRow.id == expense_id,
                ExpenseRow.company_id == key.company_id,
                ExpenseRow.warehouse_id == key.warehouse_id,
            )
            .with_for_update()
        )
    ).scalar_one_or_none()
    if expense is None:
        raise NotFound(f"expense {expense_id} not found")
    if expense.status != "pending":
        raise Conflict(
            f"expense {expense.id} is already {expense.status}"
            + (f" (entry {expense.payment_entry_id})" if expense.payment_entry_id else "")
            + "; it is paid once only"
        )
    problems = Problems()
    modes = await lookup.payment_modes(
        session,
        key.company_id,
        [("payment_mode_id", body.payment_mode_id)],
        problems,
        version=key.reference_version,
    )
    day = body.date or dt.date.today()
    if day < expense.date:
        problems.add("date", f"{day} is before the expense's own date ({expense.date})")
    problems.raise_if_any()
    # A foreign expense is paid in its own currency at the rate of the day it is
    # paid; 21100 gives up what it was booked at, and the difference is an exchange
    # gain or loss (``ledger.fx``).
    base = (await rates.company(session, key.company_id)).base_currency
    if body.currency is not None and rates.check_code("currency", body.currency) != (
        expense.currency or base
    ):
        raise invalid("currency", f"the expense is in {expense.currency or base}: pay it in that")
    fx = await documents.conversion(
        session, key.company_id, expense.currency, body.exchange_rate, day
    )
    mode = modes["payment_mode_id"]
    cat_name = (
        await session.execute(
            select(ExpenseCategory.name).where(
                ExpenseCategory.id == expense.expense_category_id,
                ExpenseCategory.company_id == key.company_id,
            )
        )
    ).scalar_one()
    entry = await post(
        uow,
        company_id=key.company_id,
        warehouse_id=expense.warehouse_id,
        rule="expense_payment",
        figures={"amount": expense.amount, "tenders": [(mode.account_code, expense.amount)]},
        narration=f"Expense paid: {cat_name} ({mode.name})"
        + (f" ({body.reference})" if body.reference else "")
        + (f", expense {expense.reference}" if expense.reference else ""),
        source_type="expense",
        source_id=expense.id,
        field="amount",
        entry_date=day,
        created_by=key.user_id,
        fx=fx,
        fixed=None if fx is None else {"amount": expense.base_amount or ZERO},
        balance_on=EXCHANGE,
    )
    expense.status = "paid"
    expense.payment_mode_id = mode.id
    expense.payment_entry_id = entry
    expense.paid_on = day
    expense.paid_by = key.user_id
    await session.flush()
    await record(
        session,
        company_id=key.company_id,
        actor=key.actor,
        action="expense.paid",
        entity_type="expense",
        entity_id=expense.id,
        before={"status": "pending"},
        after={"status": "paid", "payment_entry_id": entry},
    )
    return {**expense_response(expense), "payment_entry_id": entry, "paid_on": day.isoformat()}


async def create_expense(uow: UnitOfWork, key: AuthContext, body: ExpenseIn) -> ExpenseRecorded:
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
    fx = await documents.conversion(
        session, key.company_id, body.currency, body.exchange_rate, body.date
    )

    expense = ExpenseRow(
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
        currency=fx.currency if fx else None,
        exchange_rate=fx.rate if fx else None,
        base_amount=fx.to_base(body.amount) if fx else None,
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
        fx=fx,
        balance_on="expense",
    )
    await session.flush()
    answer = expense_response(expense)
    # Audited here, so an expense a till records is in the trail as one from the back
    # office is (docs/audit.md).
    await record(
        session,
        company_id=key.company_id,
        actor=key.actor,
        action="expense.recorded",
        entity_type="expense",
        entity_id=answer["expense_id"],
        after={
            "warehouse_id": key.warehouse_id,
            "amount": answer["amount"],
            "status": answer["expense_status"],
            "journal_entry_id": answer["journal_entry_id"],
        },
    )
    return answer


def expense_item(expense: ExpenseRow, cat_name: str, account_code: str) -> Expense:
    return {
        "id": expense.id,
        "expense_category": {
            "id": expense.expense_category_id,
            "name": cat_name,
            "account_code": account_code,
        },
        "amount": money_str(expense.amount),
        "date": expense.date.isoformat(),
        "status": cast(ExpenseStatus, expense.status),
        "payment_mode_id": expense.payment_mode_id,
        "user_id": expense.user_id,
        "reference": expense.reference,
        "notes": expense.notes,
        "journal_entry_id": expense.journal_entry_id,
        **expense_currency(expense),
    }


async def expense_page(
    session: AsyncSession,
    key: AuthContext,
    dates: str | None,
    page: str | None,
    limit: str | None,
) -> Paged[Expense]:
    """The key's warehouse's expenses, newest first."""
    p = parse_page(page, limit)
    start, end = parse_dates(dates)
    conditions = [
        ExpenseRow.company_id == key.company_id,
        ExpenseRow.warehouse_id == key.warehouse_id,
    ]
    if start is not None:
        conditions.append(ExpenseRow.date >= start)
    if end is not None:
        conditions.append(ExpenseRow.date <= end)
    total = (await session.execute(select(func.count()).where(*conditions))).scalar_one()
    rows = (
        await session.execute(
            select(ExpenseRow, ExpenseCategory.name, Account.code)
            .join(
                ExpenseCategory,
                (ExpenseCategory.id == ExpenseRow.expense_category_id)
                & (ExpenseCategory.company_id == ExpenseRow.company_id),
            )
            .join(
                Account,
                (Account.id == ExpenseCategory.account_id)
                & (Account.company_id == ExpenseCategory.company_id),
            )
            .where(*conditions)
            .order_by(ExpenseRow.date.desc(), ExpenseRow.id.desc())
            .offset(p.offset)
            .limit(p.limit)
        )
    ).all()
    return paged(p, total, [expense_item(e, name, code) for e, name, code in rows])
