"""Customers and suppliers in and out as CSV (DESIGN.md §13), on the shared import
framework (``tillbook.imports``).

Columns: ``code,name,phone,email,tax_number,address,opening_balance``, and on
import an optional ``warehouse`` (a name or an id: where a new party's opening
balance is posted; empty, the acting staff member's own warehouse when they are
scoped to one, else the company's first); rows are matched to existing parties by
``code``. A ``warehouse`` outside the acting staff member's scope refuses the whole
file (403 naming the line) before any party is looked up. Every row is checked before anything is
written; then every row is written in the caller's one unit of work. An existing
party's opening balance is not changed by an import: the cell must be empty or the
balance already posted (as the export writes it), so that export → import changes
nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.audit.service import record
from tillbook.errors import Forbidden
from tillbook.imports import (
    Counts,
    Layout,
    Problems,
    Progress,
    Row,
    check_rows,
    read_rows,
    write_csv,
)
from tillbook.kit.money import ZERO, money_str
from tillbook.kit.text import quoted
from tillbook.models import User
from tillbook.parties import repository as repo
from tillbook.parties.schemas import PartyRow
from tillbook.parties.service import NewParty, audited, insert
from tillbook.unit import UnitOfWork

COLUMNS = ("code", "name", "phone", "email", "tax_number", "address", "opening_balance")
LAYOUT = Layout(columns=(*COLUMNS, "warehouse"), required=frozenset({"code", "name"}), key="code")
# The party's own fields an import may change (opening_balance is posted, not stored).
FIELDS = ("name", "phone", "email", "tax_number", "address")


@dataclass(frozen=True)
class Export:
    csv: str
    rows: int
    # Parties the file cannot carry: rows are matched by code, and these have none
    # (the walk-in customer is not counted: it is the tills', not the shop's).
    skipped: int


def check_file(data: bytes) -> tuple[list[tuple[Row, PartyRow]], Problems]:
    """The file's rows, each checked on its own (no database needed)."""
    problems = Problems()
    rows = read_rows(data, LAYOUT, problems)
    return check_rows(rows, PartyRow, problems), problems


async def import_parties(
    uow: UnitOfWork,
    company_id: int,
    kind: str,
    data: bytes,
    *,
    actor_id: int | None,
    placed: Placed | None = None,
    progress: Progress | None = None,
) -> Counts:
    """Create or update every party of the file, or raise ``ImportRejected`` with
    every bad row and write nothing. A new party's opening balance is posted in the
    row's ``warehouse``, else where ``placed(None)`` says (the acting staff
    member's scope, ``auth/roles.narrowed``), else in the company's first
    warehouse. ``placed`` refuses (``Forbidden``) a warehouse the staff member may
    not post in; None: the command line, which acts for the whole company."""
    session = uow.session
    checked, problems = check_file(data)
    targets = await _targets(session, company_id, checked, placed, problems)
    existing = await repo.by_codes(session, company_id, kind, [item.code for _, item in checked])
    posted = await repo.opening_balances(
        session, company_id, kind, [p.id for p in existing.values()]
    )
    default = placed(None) if placed is not None else None
    if default is None:
        default = await repo.first_warehouse(session, company_id)
    creates: list[tuple[Row, PartyRow]] = []
    updates: list[tuple[Row, User, dict[str, Any]]] = []
    unchanged = 0
    for row, item in checked:
        current = existing.get(item.code)
        if current is None:
            if item.opening_balance and targets.get(row.line, default) is None:
                problems.add(
                    row.line,
                    "opening_balance",
                    "the company has no warehouse to post it in; add a warehouse first",
                )
            creates.append((row, item))
            continue
        problem = _opening_problem(kind, item, posted.get(current.id))
        if problem is not None:
            problems.add(row.line, "opening_balance", problem)
            continue
        changes = {
            name: getattr(item, name)
            for name in FIELDS
            if name in row.values and getattr(current, name) != getattr(item, name)
        }
        if changes:
            updates.append((row, current, changes))
        else:
            unchanged += 1
    problems.raise_if_any()

    total, done = len(creates) + len(updates), 0
    for row, item in creates:
        new = NewParty(**item.model_dump(include=set(NewParty.__dataclass_fields__)))
        await insert(
            uow,
            company_id,
            kind,
            new,
            warehouse_id=targets.get(row.line, default) if item.opening_balance else None,
            actor_id=actor_id,
        )
        done += 1
        if progress is not None:
            progress(done, total)
    for _row, party, changes in updates:
        before = audited(party)
        for name, value in changes.items():
            setattr(party, name, value)
        party.version += 1
        await session.flush()
        await record(
            session,
            company_id=company_id,
            actor_id=actor_id,
            action=f"{kind}.updated",
            entity_type=kind,
            entity_id=party.id,
            before=before,
            after=audited(party),
        )
        done += 1
        if progress is not None:
            progress(done, total)
    return Counts(created=len(creates), updated=len(updates), unchanged=unchanged)


# Asked where an opening balance may be posted: the warehouse named (None: none
# named) to the one to post in (None: the company's first), or ``Forbidden``.
Placed = Callable[[int | None], int | None]


async def _targets(
    session: AsyncSession,
    company_id: int,
    checked: Sequence[tuple[Row, PartyRow]],
    placed: Placed | None,
    problems: Problems,
) -> dict[int, int]:
    """line -> the warehouse its ``warehouse`` cell names. An unknown one is a row
    problem; one the staff member may not post in refuses the whole file at once
    (403 naming the first such line), before any party is looked up."""
    named = [(row, item.warehouse) for row, item in checked if item.warehouse is not None]
    if not named:
        return {}
    by_ref = await repo.warehouses_by_ref(session, company_id)
    out: dict[int, int] = {}
    for row, ref in named:
        wid = by_ref.get(ref.lower())
        if wid is None:
            problems.add(row.line, "warehouse", f"unknown warehouse {quoted(ref)}")
            continue
        if placed is not None:
            try:
                placed(wid)
            except Forbidden as exc:
                raise Forbidden(
                    f"line {row.line}: warehouse: {exc.message}; nothing was imported"
                ) from None
        out[row.line] = wid
    return out


def _opening_problem(kind: str, item: PartyRow, posted: Decimal | None) -> str | None:
    """An existing party's opening balance cell: empty, or what was posted."""
    wanted = item.opening_balance
    if wanted is None or wanted == (posted or ZERO):
        return None
    had = (
        f"an opening balance of {money_str(posted)}" if posted is not None else "no opening balance"
    )
    return (
        f"{kind} {quoted(item.code)} already exists with {had}; an opening balance is "
        "posted once, when the party is created (leave the cell empty, or record a "
        "payment or return for the difference)"
    )


async def export_parties(session: AsyncSession, company_id: int, kind: str) -> Export:
    """Every party of ``kind`` that has a code, in the import's columns (archived
    ones too: the file is the whole list, and re-importing it changes nothing)."""
    parties = await repo.all_of_kind(session, company_id, kind)
    openings = await repo.opening_balances(session, company_id, kind)
    rows: list[dict[str, str]] = []
    skipped = 0
    for party in parties:
        if party.code is None:
            skipped += 0 if party.is_walk_in else 1
            continue
        opening = openings.get(party.id)
        rows.append(
            {
                "code": party.code,
                "name": party.name,
                "phone": party.phone or "",
                "email": party.email or "",
                "tax_number": party.tax_number or "",
                "address": party.address or "",
                "opening_balance": "" if opening is None else money_str(opening),
            }
        )
    return Export(csv=write_csv(COLUMNS, rows), rows=len(rows), skipped=skipped)
