"""Till shifts: a cash drawer's day from opening float to the counted close."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import BigInteger, DateTime, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from tillbook.models.base import Base, BigId, company_ref, created, money, pk, refers, warehouse_ref


class Shift(Base):
    """One register's shift in a warehouse. At most one is open per register
    (``uq_shifts_open_register``); ``sales_count`` grows with every order made in it,
    by a guarded update that needs the shift still open, so an order can never land
    in a shift closed under it (it runs again and finds no open shift)."""

    __tablename__ = "shifts"
    __table_args__ = (Index("ix_shifts_wh_id", "warehouse_id", "id"),)

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    warehouse_id: Mapped[warehouse_ref]
    register: Mapped[str] = mapped_column(String(50))
    status: Mapped[str] = mapped_column(String(10))  # open | closed
    # The drawer's payment mode (its account is where cash in and out is posted).
    cash_mode_id: Mapped[int] = mapped_column(BigId, info=refers("payment_modes"))
    opening_float: Mapped[money]
    opened_by: Mapped[int | None] = mapped_column(BigId, info=refers("users"), nullable=True)
    opened_at: Mapped[created]
    closed_by: Mapped[int | None] = mapped_column(BigId, nullable=True)
    closed_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    sales_count: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    notes: Mapped[str] = mapped_column(Text, default="")
    # The over/short entry of the close (None: nothing was over or short).
    journal_entry_id: Mapped[int | None] = mapped_column(BigId, nullable=True)
    # The register's own name for the shift (``R1-S000007``), given when it was
    # opened offline: unique per warehouse, so a repeated opening finds this one, and
    # usable wherever the shift's id is.
    reference: Mapped[str | None] = mapped_column(String(50), nullable=True)


# One open shift per register of a warehouse: two tills opening the same register at
# once make one of them run again and find the other's shift.
Index(
    "uq_shifts_open_register",
    Shift.warehouse_id,
    Shift.register,
    Shift.company_id,
    unique=True,
    sqlite_where=Shift.status == "open",
    postgresql_where=Shift.status == "open",
)

Index("uq_shifts_wh_reference", Shift.warehouse_id, Shift.reference, Shift.company_id, unique=True)


class ShiftCash(Base):
    """Cash put into or taken out of a shift's drawer, with its reason and entry."""

    __tablename__ = "shift_cash"

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    shift_id: Mapped[int] = mapped_column(BigId, info=refers("shifts"), index=True)
    direction: Mapped[str] = mapped_column(String(5))  # in | out
    amount: Mapped[money]
    reason: Mapped[str] = mapped_column(String(500))
    # Out to an expense (petty cash) or in from / out to another mode's account.
    expense_id: Mapped[int | None] = mapped_column(BigId, nullable=True)
    payment_mode_id: Mapped[int | None] = mapped_column(BigId, nullable=True)
    journal_entry_id: Mapped[int | None] = mapped_column(BigId, nullable=True)
    created_by: Mapped[int | None] = mapped_column(BigId, nullable=True)
    created_at: Mapped[created]


class ShiftCount(Base):
    """What the close counted for one payment mode, against what was expected."""

    __tablename__ = "shift_counts"

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    shift_id: Mapped[int] = mapped_column(BigId, info=refers("shifts"), index=True)
    payment_mode_id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer(), "sqlite"))
    expected: Mapped[money]
    counted: Mapped[money]


__all__ = ["Shift", "ShiftCash", "ShiftCount"]
