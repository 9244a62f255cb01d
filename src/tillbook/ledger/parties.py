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

from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.kit.money import ZERO
from tillbook.ledger import chart
from tillbook.ledger.rollups import party_sums
from tillbook.ledger.service import account_ids

# party type -> (its control account, True when the balance is debit − credit)
CONTROL = {"customer": (chart.RECEIVABLE, True), "supplier": (chart.PAYABLE, False)}


async def warehouse_balances(
    session: AsyncSession, company_id: int, warehouse_id: int, parties: Mapping[int, str]
) -> dict[int, Decimal]:
    """party id -> balance in ``warehouse_id``, for ``parties`` (id -> user type:
    ``customer`` or ``supplier``); a party with no lines there has 0.00. Closed
    months come from the party roll-ups, the rest from the parties' lines (index
    on ``party_id``)."""
    out = dict.fromkeys(parties, ZERO)
    if not parties:
        return out
    ids = await account_ids(session, company_id)
    accounts = {ids[code]: (code, debit_normal) for code, debit_normal in CONTROL.values()}
    sums = await party_sums(
        session, company_id, parties, account_ids=accounts, warehouse_id=warehouse_id
    )
    for (party_id, account_id), found in sums.items():
        code, debit_normal = accounts[account_id]
        if CONTROL.get(parties[party_id], ("", False))[0] == code:
            out[party_id] = found.balance if debit_normal else -found.balance
    return out
