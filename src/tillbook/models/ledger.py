"""Chart of accounts, journal entries and lines, failed-transaction records.

Journal entries and lines are insert-only: a correction is a reversing entry. The
database refuses UPDATE, DELETE and TRUNCATE of both tables (triggers, migration
``7ea926272366``); the mapper events at the end of this module refuse the same at
flush for ORM objects, so a mistake fails with a plain message before any SQL.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from sqlalchemy import (
    Boolean,
    Connection,
    Date,
    DateTime,
    ForeignKey,
    Index,
    Numeric,
    String,
    Text,
    UniqueConstraint,
    event,
    inspect,
)
from sqlalchemy.orm import Mapped, Mapper, mapped_column

from tillbook.models.base import (
    Base,
    BigId,
    FxRate,
    Money,
    company_ref,
    created,
    money,
    opt_warehouse_ref,
    pk,
    refers,
)

# A roll-up sums many lines: wider than one line's NUMERIC(18, 2).
SUM = Numeric(24, 2, asdecimal=True)


class Account(Base):
    __tablename__ = "accounts"
    __table_args__ = (UniqueConstraint("company_id", "code", name="uq_accounts_company_code"),)

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    code: Mapped[str] = mapped_column(String(10))
    name: Mapped[str] = mapped_column(String(200))
    type: Mapped[str] = mapped_column(String(20))
    parent_code: Mapped[str | None] = mapped_column(String(10), nullable=True)
    is_posting: Mapped[bool] = mapped_column(Boolean, default=True)


class JournalEntry(Base):
    """A posted entry. Never updated or deleted: corrections reverse it (see the
    module docstring for what enforces it)."""

    __tablename__ = "journal_entries"
    __table_args__ = (
        Index("ix_journal_entries_source", "source_type", "source_id"),
        # Reports read a date range of entries (the open period, the edges of a
        # range, a ledger page) without reading the rest of history.
        Index("ix_journal_entries_company_date", "company_id", "entry_date", "id"),
    )

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    warehouse_id: Mapped[opt_warehouse_ref]
    entry_date: Mapped[dt.date] = mapped_column(Date)
    narration: Mapped[str] = mapped_column(Text, default="")
    source_type: Mapped[str] = mapped_column(String(30))
    source_id: Mapped[int | None] = mapped_column(BigId, nullable=True)
    reverses_entry_id: Mapped[int | None] = mapped_column(
        BigId, info=refers("journal_entries"), nullable=True
    )
    created_by: Mapped[int | None] = mapped_column(BigId, nullable=True)
    created_at: Mapped[created]


class JournalLine(Base):
    """One debit or credit of an entry; insert-only like its entry."""

    __tablename__ = "journal_lines"
    __table_args__ = (
        Index("ix_journal_lines_company_account", "company_id", "account_id"),
        Index("ix_journal_lines_party", "party_id"),
    )

    id: Mapped[pk]
    entry_id: Mapped[int] = mapped_column(BigId, info=refers("journal_entries"), index=True)
    company_id: Mapped[company_ref]
    warehouse_id: Mapped[int | None] = mapped_column(BigId, nullable=True)
    account_id: Mapped[int] = mapped_column(BigId, info=refers("accounts"))
    party_id: Mapped[int | None] = mapped_column(BigId, nullable=True)
    debit: Mapped[money]
    credit: Mapped[money]
    # A line of a document in a foreign currency (DESIGN §16): the amount in that
    # currency and the rate it was converted at; ``debit``/``credit`` are the base
    # amount. NULL on base-currency lines.
    currency: Mapped[str | None] = mapped_column(String(3), nullable=True)
    amount_foreign: Mapped[Decimal | None] = mapped_column(Money, nullable=True)
    rate: Mapped[Decimal | None] = mapped_column(FxRate, nullable=True)


class LedgerPeriod(Base):
    """A company's closed books: nothing can be dated on or before
    ``closed_through`` (a trigger on ``journal_entries`` refuses it, migration
    ``b7c4d2e9f013``); and every whole month up to ``rolled_up_through`` has its
    roll-ups, closed or not (``ledger/rollups.py``). One row per company, created
    at the first close, roll-up or back-dated entry; a roll-up build locks it
    ``FOR UPDATE`` and a back-dated entry ``FOR SHARE``."""

    __tablename__ = "ledger_periods"

    company_id: Mapped[int] = mapped_column(
        BigId, ForeignKey("companies.id"), primary_key=True, autoincrement=False
    )
    closed_through: Mapped[dt.date | None] = mapped_column(Date, nullable=True)
    rolled_up_through: Mapped[dt.date | None] = mapped_column(Date, nullable=True)
    closed_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    closed_by: Mapped[int | None] = mapped_column(BigId, nullable=True)


class LedgerRollup(Base):
    """Σ debit and Σ credit of one account's lines in one warehouse (0: lines with
    none) for one past month (``period``: its first day). ``closing`` separates
    year-end closing entries, which profit and loss leaves out. Built from the
    lines once the month is due, then moved by every entry dated into it."""

    __tablename__ = "ledger_rollups"

    company_id: Mapped[int] = mapped_column(BigId, ForeignKey("companies.id"), primary_key=True)
    period: Mapped[dt.date] = mapped_column(Date, primary_key=True)
    account_id: Mapped[int] = mapped_column(BigId, info=refers("accounts"), primary_key=True)
    warehouse_id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=False)
    closing: Mapped[bool] = mapped_column(Boolean, primary_key=True)
    debit: Mapped[Decimal] = mapped_column(SUM, nullable=False)
    credit: Mapped[Decimal] = mapped_column(SUM, nullable=False)
    lines: Mapped[int] = mapped_column(BigId, nullable=False, default=0)


class PartyRollup(Base):
    """A party's lines summed like ``LedgerRollup``, per account, warehouse and
    past month: a party's balance and statement without its whole history."""

    __tablename__ = "ledger_party_rollups"

    company_id: Mapped[int] = mapped_column(BigId, ForeignKey("companies.id"), primary_key=True)
    party_id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=False)
    period: Mapped[dt.date] = mapped_column(Date, primary_key=True)
    account_id: Mapped[int] = mapped_column(BigId, info=refers("accounts"), primary_key=True)
    warehouse_id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=False)
    debit: Mapped[Decimal] = mapped_column(SUM, nullable=False)
    credit: Mapped[Decimal] = mapped_column(SUM, nullable=False)


class FailedTransaction(Base):
    """Spec: kept when a ledger imbalance occurs, written in its own transaction."""

    __tablename__ = "failed_transactions"

    id: Mapped[pk]
    company_id: Mapped[int] = mapped_column(BigId, index=True)
    warehouse_id: Mapped[int | None] = mapped_column(BigId, nullable=True)
    reason: Mapped[str] = mapped_column(Text)
    transaction_data: Mapped[str] = mapped_column(Text)
    timestamp: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))


class JournalIsInsertOnly(RuntimeError):
    """A flush tried to change or delete a posted journal entry or line: a bug in
    the caller, which must post a reversing entry instead."""


def _refuse_update(_mapper: Mapper[Any], _connection: Connection, target: Any) -> None:
    # The unit of work also calls this for objects that are only marked dirty (an
    # attribute set to its own value), which emit no UPDATE: refuse real changes.
    changed = sorted(a.key for a in inspect(target).attrs if a.history.has_changes())
    if changed:
        raise JournalIsInsertOnly(
            f"{type(target).__name__} {target.id}: {', '.join(changed)} changed; "
            "journal entries are insert-only, post a reversing entry"
        )


def _refuse_delete(_mapper: Mapper[Any], _connection: Connection, target: Any) -> None:
    raise JournalIsInsertOnly(
        f"{type(target).__name__} {target.id} deleted; "
        "journal entries are insert-only, post a reversing entry"
    )


# Mapper events on these two classes only (not a hook on every Session): they see
# ORM unit-of-work flushes; Core and raw SQL statements meet the database triggers.
for _journal_class in (JournalEntry, JournalLine):
    event.listen(_journal_class, "before_update", _refuse_update)
    event.listen(_journal_class, "before_delete", _refuse_delete)


__all__ = [
    "Account",
    "FailedTransaction",
    "JournalEntry",
    "JournalIsInsertOnly",
    "JournalLine",
    "LedgerPeriod",
    "LedgerRollup",
    "PartyRollup",
]
