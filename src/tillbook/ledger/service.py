"""Posting: the only code that writes journal lines.

``post`` turns an operation's named figures into lines through ``RULES``, runs the
pure balance check (which cannot be skipped: there is no other insert into
``journal_lines``), writes the entry with its lines and moves party sub-ledger
balances in the same transaction. ``reverse`` is the only correction: a new entry
with every line on the other side, naming the entry it reverses.

It also keeps the monthly roll-ups exact: an entry dated into a month already
rolled up adds its lines to that month's roll-ups in its own transaction
(``ledger.rollups``); a sale dated this month never touches them.

It is also the one place a write dated into a closed period is refused
(``ledger.periods``): the database's refusal of the entry becomes a 422 naming the
request's date field (``date_field``), and an operation that posts nothing is
checked with one read.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import replace
from decimal import Decimal
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.errors import LedgerImbalance, ValidationFailed
from tillbook.kit import bounds
from tillbook.kit.bounds import MONEY
from tillbook.kit.money import ZERO
from tillbook.kit.refcache import ReferenceCache
from tillbook.ledger import chart, periods, rollups
from tillbook.ledger import repository as repo
from tillbook.ledger.balance import Line, imbalance
from tillbook.ledger.fx import Conversion, Held, convert
from tillbook.ledger.rules import RULES, RuleName, figure_names
from tillbook.unit import UnitOfWork

# A figure: one amount, or (account, amount) pairs, a pair optionally with the foreign
# money its line moves (``Held``: foreign cash taken on a base-currency sale).
Pair = tuple[str, Decimal] | tuple[str, Decimal, Held]
Figure = Decimal | Sequence[Pair]

# An account's code and id never change once it exists (the back office adds
# accounts: a new payment mode's cash account, a new expense account), so code -> id
# is cached and read again only for a code the copy lacks.
_ACCOUNT_IDS = ReferenceCache(repo.load_account_ids)


async def account_ids(
    session: AsyncSession, company_id: int, codes: Iterable[str] = ()
) -> dict[str, int]:
    """The company's account ids by code; ``codes``: the ones the caller needs (an
    account added since the copy was made, in any process, is read then)."""
    return await _ACCOUNT_IDS.get(session, company_id, codes)


def build_lines(rule: RuleName, figures: Mapping[str, Figure], party_id: int | None) -> list[Line]:
    """Lines of one entry, zero lines dropped, negative amounts on the other side.

    The figures must be exactly the ones the rule names: a figure missing (or
    misspelled) would otherwise drop its legs silently, and balance."""
    return [line for _figure, line in _named_lines(rule, figures, party_id)]


def _named_lines(
    rule: RuleName, figures: Mapping[str, Figure], party_id: int | None
) -> list[tuple[str, Line]]:
    """``build_lines``, each line with the name of the figure it came from."""
    names = figure_names(rule)
    if set(figures) != names:
        missing = sorted(names - set(figures))
        extra = sorted(set(figures) - names)
        raise ValueError(f"rule {rule!r}: figures missing {missing}, unknown {extra}")
    lines: list[tuple[str, Line]] = []
    for leg in RULES[rule]:
        value = figures[leg.amount]
        if isinstance(value, Decimal):
            if leg.account is None:
                raise ValueError(f"leg {leg.amount!r} of {rule!r} needs (account, amount) pairs")
            parts: Sequence[Pair] = [(leg.account, value)]
        else:
            if leg.account is not None:
                raise ValueError(f"leg {leg.amount!r} of {rule!r} takes one amount")
            parts = value
        for part in parts:
            account, amount = part[0], part[1]
            held = part[2] if len(part) == 3 else None
            if amount == 0:
                continue
            side = leg.side if amount > 0 else ("credit" if leg.side == "debit" else "debit")
            a = abs(amount)
            party = party_id if leg.party else None
            line = (
                Line(account, debit=a, party_id=party)
                if side == "debit"
                else Line(account, credit=a, party_id=party)
            )
            if held is not None:
                line = replace(line, currency=held.currency, foreign=held.amount, rate=held.rate)
            lines.append((leg.amount, line))
    return lines


async def post(
    uow: UnitOfWork,
    *,
    company_id: int,
    warehouse_id: int | None,
    rule: RuleName,
    figures: Mapping[str, Figure],
    narration: str,
    source_type: str,
    source_id: int | None,
    entry_date: dt.date,
    field: str,
    party_id: int | None = None,
    created_by: int | None = None,
    date_field: str = "date",
    fx: Conversion | None = None,
    base_figures: Collection[str] = (),
    fixed: Mapping[str, Decimal] | None = None,
    balance_on: str | Sequence[str] | None = None,
    entry_id: int | None = None,
) -> int | None:
    """Write one balanced journal entry and return its id, or raise LedgerImbalance.

    ``entry_id``: an id reserved for the entry (``repository.RESERVE_ENTRY_ID``): the
    entry and its lines then go with the unit's last statement, where its narration
    may name the invoice number that statement takes (``unit.Late``).

    ``fx``: the figures are a foreign document's, in ``fx.currency``, except those
    named in ``base_figures`` (already in the base, such as FIFO cost) and those
    given a carried base value in ``fixed``; every line is converted and the
    rounding (or, with ``balance_on=EXCHANGE``, the exchange difference) goes where
    ``balance_on`` says (``ledger.fx``).

    When every figure is zero (free goods received, a free sample whose cost rounds
    to 0.00) nothing moves: no entry is written and None is returned.

    A line amount, or a party's balance after the entry, beyond what the books hold
    (``kit/bounds.py``) is a 422 naming ``field``: the request field whose amount
    it is.

    ``entry_date`` in a closed period is a 422 naming ``date_field``, whether an
    entry is written or not."""
    named = _named_lines(rule, figures, party_id)
    if fx is None:
        lines = [line for _figure, line in named]
    else:
        if balance_on is None:
            raise ValueError("a foreign document names the line that takes its rounding")
        lines = convert(
            named, fx, base_figures=base_figures, fixed=fixed or {}, balance_on=balance_on
        )
    if not lines:
        await periods.refuse_closed(uow.session, company_id, entry_date, date_field)
        return None
    return await _write(
        uow,
        lines,
        company_id=company_id,
        warehouse_id=warehouse_id,
        narration=narration,
        source_type=source_type,
        source_id=source_id,
        entry_date=entry_date,
        created_by=created_by,
        field=field,
        date_field=date_field,
        reserved_id=entry_id,
    )


async def reverse(
    uow: UnitOfWork,
    company_id: int,
    entry_id: int,
    *,
    narration: str,
    source_type: str,
    source_id: int | None,
    entry_date: dt.date,
    created_by: int | None = None,
    date_field: str = "date",
) -> int:
    """Post the mirror of entry ``entry_id`` (every debit a credit and back), naming
    it in ``reverses_entry_id``: the books' only way to undo an entry."""
    original, original_lines = await repo.entry_lines(uow, company_id, entry_id)
    ids = await account_ids(uow.session, original.company_id)
    if any(line.account_id not in ids.values() for line in original_lines):
        ids = await _ACCOUNT_IDS.get(uow.session, original.company_id, reload=True)
    codes = {v: k for k, v in ids.items()}
    lines = [
        Line(
            codes[line.account_id],
            debit=line.credit,
            credit=line.debit,
            party_id=line.party_id,
            currency=line.currency,
            foreign=line.amount_foreign,
            rate=line.rate,
        )
        for line in original_lines
    ]
    return await _write(
        uow,
        lines,
        company_id=original.company_id,
        warehouse_id=original.warehouse_id,
        narration=narration,
        source_type=source_type,
        source_id=source_id,
        entry_date=entry_date,
        created_by=created_by,
        reverses_entry_id=entry_id,
        field="entry_id",
        date_field=date_field,
    )


async def _write(
    uow: UnitOfWork,
    lines: list[Line],
    *,
    company_id: int,
    warehouse_id: int | None,
    narration: str,
    source_type: str,
    source_id: int | None,
    entry_date: dt.date,
    created_by: int | None,
    field: str,
    date_field: str,
    reverses_entry_id: int | None = None,
    reserved_id: int | None = None,
) -> int:
    for line in lines:
        bounds.check(field, line.debit or line.credit, MONEY, f"the {line.account} line")
    ids = await account_ids(uow.session, company_id, {line.account for line in lines})
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
    # A back-dated entry may land in a month already rolled up: its lines go into
    # that month's roll-ups too (``ledger.rollups``), under the period row's lock,
    # taken before the insert. A sale dated this month skips both.
    rolled = (
        await rollups.hold_for_entry(uow.session, company_id)
        if rollups.may_be_rolled_up(entry_date)
        else None
    )
    rows = [
        {
            "account_id": ids[line.account],
            "party_id": line.party_id,
            "debit": line.debit,
            "credit": line.credit,
            "currency": line.currency,
            "amount_foreign": line.foreign,
            "rate": line.rate,
        }
        for line in lines
    ]
    entry = {
        "company_id": company_id,
        "warehouse_id": warehouse_id,
        "entry_date": entry_date,
        "narration": narration,
        "source_type": source_type,
        "source_id": source_id,
        "reverses_entry_id": reverses_entry_id,
        "created_by": created_by,
    }
    if reserved_id is not None:
        # (the closed-period trigger then refuses it in the last statement; a
        # back-dated entry's month was locked above, before the insert, as before)
        uow.on_failure(lambda exc: _closed_refusal(exc, date_field, entry_date))
        repo.queue_entry(uow, reserved_id, entry, rows)
        entry_id = reserved_id
    else:
        entry_id = await _insert(uow, entry, rows, date_field)
    if rolled is not None and entry_date <= rolled:
        await rollups.add_entry(
            uow.session,
            company_id,
            warehouse_id=warehouse_id,
            entry_date=entry_date,
            source_type=source_type,
            lines=rows,
        )
    deltas = _party_deltas(lines)
    if deltas:
        await _refuse_unbounded_balances(uow, company_id, deltas, field)
    repo.move_balances(uow, company_id, deltas)
    return entry_id


async def _insert(
    uow: UnitOfWork, entry: Mapping[str, Any], rows: list[dict[str, Any]], date_field: str
) -> int:
    """The entry and its lines now; the closed-period trigger's refusal a 422."""
    try:
        return await repo.insert_entry(uow, entry, rows)
    except Exception as exc:
        if not periods.is_closed_refusal(exc):
            raise
        # The transaction is lost on PostgreSQL (whose message names the day);
        # SQLite's statement alone failed, and the day can be read.
        closed = periods.refused_through(exc)
        if closed is None and not uow.is_postgresql:
            closed = await periods.closed_through(uow.session, entry["company_id"])
        raise periods.refusal(date_field, entry["entry_date"], closed) from None


def _closed_refusal(exc: BaseException, date_field: str, day: dt.date) -> Exception | None:
    """The closed-period trigger's refusal of an entry queued for the last statement,
    as the 422 ``_insert`` gives (PostgreSQL's message names the day)."""
    if not periods.is_closed_refusal(exc):
        return None
    return periods.refusal(date_field, day, periods.refused_through(exc))


async def _refuse_unbounded_balances(
    uow: UnitOfWork, company_id: int, deltas: Mapping[int, Decimal], field: str
) -> None:
    """A party's balance after the entry must be a value the books hold
    (``kit/bounds.py``): checked on the balance as read now (the increment itself
    goes with the unit's last statement)."""
    for party_id, balance in await repo.balances(uow, company_id, sorted(deltas)):
        after = balance + deltas[party_id]
        if bounds.exceeds(after, MONEY, "the balance") is not None:
            raise ValidationFailed(
                {
                    field: [
                        f"this would take the balance of party {party_id} beyond the "
                        f"largest amount the books hold ({MONEY.max})"
                    ]
                }
            )


def _party_deltas(lines: list[Line]) -> dict[int, Decimal]:
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
    return deltas
