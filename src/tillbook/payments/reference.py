"""The company's payment modes and expense categories as a till reads them
(GET /payment-modes, GET /expense-categories): company reference data, archived
rows left out, each with the account it posts to. Their answers' shapes are
declared here (``kit/shapes.py``); ``api/public/openapi.py`` wraps them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from sqlalchemy import Row, bindparam, select
from sqlalchemy.ext.asyncio import AsyncSession
from typing_extensions import TypedDict

from tillbook.auth.context import AuthContext
from tillbook.db import Reads, Record
from tillbook.kit import xid
from tillbook.kit.changes import Changes, Live, Walk, changes
from tillbook.kit.shapes import answer
from tillbook.models import Account, ExpenseCategory, PaymentMode


@answer
class PaymentModeItem(TypedDict):
    id: int
    xid: str
    code: str
    name: str
    account_code: str


@answer
class PaymentModeChange(PaymentModeItem, Live):
    pass


@answer
class ExpenseCategoryItem(TypedDict):
    id: int
    xid: str
    name: str
    account_code: str


# A till reads its payment modes at each sync: built once and read outside any
# transaction (``Database.reads``), as the catalog's reference lists are.
_MODES = select(
    PaymentMode.id, PaymentMode.code, PaymentMode.name, Account.code.label("account_code")
).join(
    Account,
    (Account.id == PaymentMode.account_id) & (Account.company_id == PaymentMode.company_id),
)
_MODE_LIST = _MODES.where(
    PaymentMode.company_id == bindparam("company_id"), PaymentMode.archived_at.is_(None)
).order_by(PaymentMode.id)


async def payment_modes(reads: Reads, key: AuthContext) -> list[PaymentModeItem]:
    return [_mode(row) for row in await reads.all(_MODE_LIST, {"company_id": key.company_id})]


def _mode(m: Record) -> PaymentModeItem:
    """A payment mode from a row of ``_MODES`` (a list's, a feed's) by column name."""
    return cast(PaymentModeItem, xid.record(m, "code", "name", "account_code"))


async def payment_mode_changes(
    session: AsyncSession, key: AuthContext, walk: Walk
) -> Changes[PaymentModeChange]:
    """Payment modes changed since ``walk.since`` (``kit.changes``), archived ones as
    tombstones."""
    return await changes(
        session,
        walk,
        _MODES.where(PaymentMode.company_id == key.company_id),
        PaymentMode.updated_at,
        PaymentMode.id,
        PaymentMode.archived_at.is_(None),
        _modes,
    )


async def _modes(rows: Sequence[Row[Any]]) -> list[PaymentModeItem]:
    # a feed's rows carry its two columns (id, alive) after the statement's own (kit.changes)
    return [_mode(row._mapping) for row in rows]


_EXPENSE_CATEGORY_LIST = (
    select(ExpenseCategory.id, ExpenseCategory.name, Account.code.label("account_code"))
    .join(
        Account,
        (Account.id == ExpenseCategory.account_id)
        & (Account.company_id == ExpenseCategory.company_id),
    )
    .where(
        ExpenseCategory.company_id == bindparam("company_id"),
        ExpenseCategory.archived_at.is_(None),
    )
    .order_by(ExpenseCategory.name, ExpenseCategory.id)
)


async def expense_categories(reads: Reads, key: AuthContext) -> list[ExpenseCategoryItem]:
    rows = await reads.all(_EXPENSE_CATEGORY_LIST, {"company_id": key.company_id})
    return [cast(ExpenseCategoryItem, xid.record(c, "name", "account_code")) for c in rows]
