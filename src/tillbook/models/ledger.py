"""Chart of accounts, journal entries and lines, failed-transaction records."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import Boolean, Date, DateTime, ForeignKey, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from tillbook.models.base import Base, BigId, company_ref, created, money, opt_warehouse_ref, pk


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
    """A posted entry. Never updated or deleted: corrections reverse it."""

    __tablename__ = "journal_entries"
    __table_args__ = (Index("ix_journal_entries_source", "source_type", "source_id"),)

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    warehouse_id: Mapped[opt_warehouse_ref]
    entry_date: Mapped[dt.date] = mapped_column(Date)
    narration: Mapped[str] = mapped_column(Text, default="")
    source_type: Mapped[str] = mapped_column(String(30))
    source_id: Mapped[int | None] = mapped_column(BigId, nullable=True)
    reverses_entry_id: Mapped[int | None] = mapped_column(
        BigId, ForeignKey("journal_entries.id"), nullable=True
    )
    created_by: Mapped[int | None] = mapped_column(BigId, nullable=True)
    created_at: Mapped[created]


class JournalLine(Base):
    __tablename__ = "journal_lines"
    __table_args__ = (
        Index("ix_journal_lines_company_account", "company_id", "account_id"),
        Index("ix_journal_lines_party", "party_id"),
    )

    id: Mapped[pk]
    entry_id: Mapped[int] = mapped_column(BigId, ForeignKey("journal_entries.id"), index=True)
    company_id: Mapped[company_ref]
    warehouse_id: Mapped[int | None] = mapped_column(BigId, nullable=True)
    account_id: Mapped[int] = mapped_column(BigId, ForeignKey("accounts.id"))
    party_id: Mapped[int | None] = mapped_column(BigId, nullable=True)
    debit: Mapped[money]
    credit: Mapped[money]


class FailedTransaction(Base):
    """Spec: kept when a ledger imbalance occurs, written in its own transaction."""

    __tablename__ = "failed_transactions"

    id: Mapped[pk]
    company_id: Mapped[int] = mapped_column(BigId, index=True)
    warehouse_id: Mapped[int | None] = mapped_column(BigId, nullable=True)
    reason: Mapped[str] = mapped_column(Text)
    transaction_data: Mapped[str] = mapped_column(Text)
    timestamp: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))


__all__ = ["Account", "FailedTransaction", "JournalEntry", "JournalLine"]
