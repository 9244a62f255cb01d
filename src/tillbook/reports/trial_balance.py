"""Trial balance: Σ debit, Σ credit and their difference per posting account."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.kit.money import ZERO, money_str
from tillbook.reports.common import account_sums, check_period, check_scope, iso


async def trial_balance(
    session: AsyncSession,
    company_id: int,
    warehouse_id: int | None = None,
    date_from: dt.date | None = None,
    date_to: dt.date | None = None,
) -> dict[str, Any]:
    """``{"company_id", "as_of", "accounts": [{"code", "name", "type", "debit",
    "credit", "balance"}], "total_debit", "total_credit"}`` (plus the scope asked
    for: ``warehouse_id`` and ``date_from``). ``as_of`` is ``date_to`` or today."""
    await check_scope(session, company_id, warehouse_id)
    check_period(date_from, date_to)
    sums = await account_sums(
        session, company_id, warehouse_id=warehouse_id, date_from=date_from, date_to=date_to
    )
    total_debit = sum((s.debit for s in sums), ZERO)
    total_credit = sum((s.credit for s in sums), ZERO)
    return {
        "company_id": company_id,
        "warehouse_id": warehouse_id,
        "date_from": iso(date_from),
        "as_of": (date_to or dt.date.today()).isoformat(),
        "accounts": [
            {
                "code": s.code,
                "name": s.name,
                "type": s.type,
                "debit": money_str(s.debit),
                "credit": money_str(s.credit),
                "balance": money_str(s.balance),
            }
            for s in sums
        ],
        "total_debit": money_str(total_debit),
        "total_credit": money_str(total_credit),
    }
