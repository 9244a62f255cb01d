"""Currencies a company trades in besides its base, and its exchange rates
(DESIGN §16).

Rates are insert-only: a correction is a new row for the same currency and date,
and the latest row entered wins for documents posted from then on. A posted journal
line keeps the rate it was converted at, so nothing already in the books moves when
a rate is corrected."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from sqlalchemy import Boolean, Date, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from tillbook.models.base import Base, BigId, FxRate, created, pk


class CompanyCurrency(Base):
    """A foreign currency the company has enabled; disabling keeps the row (its
    documents and rates stay readable) and refuses new documents in it."""

    __tablename__ = "company_currencies"

    company_id: Mapped[int] = mapped_column(
        BigId, ForeignKey("companies.id"), primary_key=True, autoincrement=False
    )
    code: Mapped[str] = mapped_column(String(3), primary_key=True)
    minor_units: Mapped[int] = mapped_column(Integer, nullable=False)
    enabled: Mapped[bool] = mapped_column(Boolean, nullable=False, default=True)
    created_at: Mapped[created]


class ExchangeRate(Base):
    """Base units per one unit of ``currency`` from ``rate_date`` on (until a later
    date's rate): the company's own figure, never fetched."""

    __tablename__ = "exchange_rates"
    __table_args__ = (
        Index("ix_exchange_rates_lookup", "company_id", "currency", "rate_date", "id"),
    )

    id: Mapped[pk]
    company_id: Mapped[int] = mapped_column(BigId, ForeignKey("companies.id"), nullable=False)
    currency: Mapped[str] = mapped_column(String(3), nullable=False)
    rate_date: Mapped[dt.date] = mapped_column(Date, nullable=False)
    rate: Mapped[Decimal] = mapped_column(FxRate, nullable=False)
    source: Mapped[str] = mapped_column(String(20), nullable=False, default="manual")
    entered_by: Mapped[int | None] = mapped_column(BigId, nullable=True)
    created_at: Mapped[created]


__all__ = ["CompanyCurrency", "ExchangeRate"]
