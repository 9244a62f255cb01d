"""Posting: the only code that writes journal lines.

``post`` turns an operation's named figures into lines through ``RULES``, runs the
pure balance check (which cannot be skipped: there is no other insert into
``journal_lines``), writes the entry and moves party sub-ledger balances in the
same transaction.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from decimal import Decimal

from sqlalchemy import Numeric, insert, literal, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.deferred import DeferredInsert, DeferredUpdate, carries_late, defer
from tillbook.errors import LedgerImbalance, ValidationFailed
from tillbook.kit import bounds
from tillbook.kit.bounds import MONEY
from tillbook.kit.money import ZERO
from tillbook.ledger import chart
from tillbook.ledger.balance import Line, imbalance
from tillbook.ledger.rules import RULES
from tillbook.models import Account, JournalEntry, JournalLine, User
from tillbook.models.base import table_of
from tillbook.rawsql import run
from tillbook.reference import ReferenceCache

Figure = Decimal | Sequence[tuple[str, Decimal]]

_entries = table_of(JournalEntry)
# The limits a balance is compared with lie beyond the column's own type by up to
# the amount moved: sent as plain NUMERIC.
_UNBOUNDED = Numeric(asdecimal=True)
# Built once: every sale, purchase, return and payment posts through these two.
_INSERT_ENTRY = insert(_entries).returning(_entries.c.id)
# A narration naming a number taken at COMMIT (``numbering.issue_at_commit``).
_NARRATE = DeferredUpdate(_entries, ["id"], ["narration"], late=["narration"])
_INSERT_LINES = DeferredInsert(
    table_of(JournalLine),
    ["entry_id", "company_id", "warehouse_id", "account_id", "party_id", "debit", "credit"],
)


async def _load_account_ids(session: AsyncSession, company_id: int) -> dict[str, int]:
    rows = await session.execute(
        select(Account.code, Account.id).where(Account.company_id == company_id)
    )
    return {code: id_ for code, id_ in rows.all()}


# A chart's accounts never change once it exists: code -> id, cached.
_ACCOUNT_IDS = ReferenceCache(_load_account_ids)


async def account_ids(session: AsyncSession, company_id: int) -> dict[str, int]:
    return await _ACCOUNT_IDS.get(session, company_id)


def build_lines(rule: str, figures: Mapping[str, Figure], party_id: int | None) -> list[Line]:
    """Lines of one entry, zero lines dropped, negative amounts on the other side."""
    lines: list[Line] = []
    for leg in RULES[rule]:
        value = figures.get(leg.amount, ZERO)
        if isinstance(value, Decimal):
            if leg.account is None:
                raise ValueError(f"leg {leg.amount!r} of {rule!r} needs (account, amount) pairs")
            parts: Sequence[tuple[str, Decimal]] = [(leg.account, value)]
        else:
            parts = value
        for account, amount in parts:
            if amount == 0:
                continue
            side = leg.side if amount > 0 else ("credit" if leg.side == "debit" else "debit")
            a = abs(amount)
            party = party_id if leg.party else None
            lines.append(
                Line(account, debit=a, party_id=party)
                if side == "debit"
                else Line(account, credit=a, party_id=party)
            )
    return lines


async def post(
    session: AsyncSession,
    *,
    company_id: int,
    warehouse_id: int | None,
    rule: str,
    figures: Mapping[str, Figure],
    narration: str,
    source_type: str,
    source_id: int | None,
    entry_date: dt.date,
    field: str,
    party_id: int | None = None,
    created_by: int | None = None,
) -> int | None:
    """Write one balanced journal entry and return its id, or raise LedgerImbalance.

    When every figure is zero (free goods received, a free sample whose cost rounds
    to 0.00) nothing moves: no entry is written and None is returned.

    A line amount, or a party's balance after the entry, beyond what the books hold
    (``kit/bounds.py``) is a 422 naming ``field``: the request field whose amount
    it is."""
    lines = build_lines(rule, figures, party_id)
    if not lines:
        return None
    for line in lines:
        bounds.check(field, line.debit or line.credit, MONEY, f"the {line.account} line")
    ids = await account_ids(session, company_id)
    problem = imbalance(lines)
    unknown = [line.account for line in lines if line.account not in ids]
    if unknown and problem is None:
        problem = f"unknown account(s) {', '.join(unknown)}"
    if problem is not None:
        raise LedgerImbalance(
            problem,
            [
                {
                    "account_id": ids.get(line.account),
                    "account_code": line.account,
                    "debit_amount": str(line.debit),
                    "credit_amount": str(line.credit),
                }
                for line in lines
            ],
            narration,
        )
    entry_id: int = (
        await run(
            session,
            _INSERT_ENTRY,
            {
                "company_id": company_id,
                "warehouse_id": warehouse_id,
                "entry_date": entry_date,
                "narration": narration,
                "source_type": source_type,
                "source_id": source_id,
                "created_by": created_by,
            },
        )
    )[0][0]
    if carries_late(session, narration):
        defer(session, _NARRATE, [{"id": entry_id, "narration": narration}])
    # Nothing in a unit reads its own lines back: they go out with the commit.
    defer(
        session,
        _INSERT_LINES,
        [
            {
                "entry_id": entry_id,
                "company_id": company_id,
                "warehouse_id": warehouse_id,
                "account_id": ids[line.account],
                "party_id": line.party_id,
                "debit": line.debit,
                "credit": line.credit,
            }
            for line in lines
        ],
    )
    await _move_party_balances(session, lines, field)
    return entry_id


async def _move_party_balances(session: AsyncSession, lines: list[Line], field: str) -> None:
    """Customers' balance is what they owe (11500, debit-normal); suppliers' is what
    we owe them (21100, credit-normal).

    The update moves a balance only while the result stays within what the column
    holds; the check is in the statement, so two writers moving the same party
    cannot both pass it on a stale read."""
    deltas: dict[int, Decimal] = {}
    for line in lines:
        if line.party_id is None:
            continue
        if line.account == chart.RECEIVABLE:
            delta = line.debit - line.credit
        elif line.account == chart.PAYABLE:
            delta = line.credit - line.debit
        else:
            continue
        deltas[line.party_id] = deltas.get(line.party_id, ZERO) + delta
    for party_id, delta in sorted(deltas.items()):
        if delta:
            moved = await session.execute(
                update(User)
                .where(
                    User.id == party_id,
                    User.balance >= literal(-MONEY.max - delta, _UNBOUNDED),
                    User.balance <= literal(MONEY.max - delta, _UNBOUNDED),
                )
                .values(balance=User.balance + delta)
            )
            if moved.rowcount == 0:  # type: ignore[attr-defined]
                raise ValidationFailed(
                    {
                        field: [
                            f"this would take the balance of party {party_id} beyond the "
                            f"largest amount the books hold ({MONEY.max})"
                        ]
                    }
                )
