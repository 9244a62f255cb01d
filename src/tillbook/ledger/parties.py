"""A party's balance as one warehouse's books show it.

``users.balance`` is the company-wide sub-ledger (every warehouse's receivables
or payables of the party). A key is bound to one warehouse and must not learn
what the party owes, or is owed, elsewhere in the company, so the public API
reports the balance of the warehouse's own journal lines instead: the party's
lines on 11500 (customers: debit − credit, what they owe) or 21100 (suppliers:
credit − debit, what is owed to them) posted by that warehouse's sales,
purchases, returns and payments. Summed over every warehouse it is
``users.balance`` (the invariant GL 11500 = Σ customer balances holds per
warehouse too).
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.kit.money import ZERO, to_money
from tillbook.ledger import chart
from tillbook.ledger.service import account_ids
from tillbook.models import JournalLine

# party type -> (its control account, True when the balance is debit − credit)
CONTROL = {"customer": (chart.RECEIVABLE, True), "supplier": (chart.PAYABLE, False)}


async def warehouse_balances(
    session: AsyncSession, company_id: int, warehouse_id: int, parties: Mapping[int, str]
) -> dict[int, Decimal]:
    """party id -> balance in ``warehouse_id``, for ``parties`` (id -> user type:
    ``customer`` or ``supplier``); a party with no lines there has 0.00. One grouped
    statement over the parties' lines (index on ``party_id``)."""
    out = dict.fromkeys(parties, ZERO)
    if not parties:
        return out
    ids = await account_ids(session, company_id)
    accounts = {ids[code]: (code, debit_normal) for code, debit_normal in CONTROL.values()}
    rows = await session.execute(
        select(
            JournalLine.party_id,
            JournalLine.account_id,
            func.sum(JournalLine.debit),
            func.sum(JournalLine.credit),
        )
        .where(
            JournalLine.company_id == company_id,
            JournalLine.warehouse_id == warehouse_id,
            JournalLine.party_id.in_(tuple(parties)),
            JournalLine.account_id.in_(tuple(accounts)),
        )
        .group_by(JournalLine.party_id, JournalLine.account_id)
    )
    for party_id, account_id, debit, credit in rows.all():
        code, debit_normal = accounts[account_id]
        if party_id is not None and CONTROL.get(parties[party_id], ("", False))[0] == code:
            dr, cr = to_money(debit), to_money(credit)
            out[party_id] = dr - cr if debit_normal else cr - dr
    return out
