"""Registers: devices paired to a branch to sell from the browser (DESIGN.md §15)."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import DateTime, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from tillbook.models.base import Base, BigId, company_ref, created, pk, refers, warehouse_ref


class Register(Base):
    """One paired device. Its credential is an ordinary API key of its branch
    (``key_id``); revoking the register revokes the key. ``prefix`` (``R1``) starts
    the invoice numbers it takes offline; ``number`` is the counter behind it, per
    company, never reused (registers are revoked, never deleted). ``queued`` and
    ``attention`` are what the device last reported (heartbeat): writes waiting to be
    sent, and the ones the server refused (a JSON list), for the back office."""

    __tablename__ = "registers"
    __table_args__ = (
        UniqueConstraint("company_id", "prefix", name="uq_registers_company_prefix"),
        UniqueConstraint("company_id", "number", name="uq_registers_company_number"),
        UniqueConstraint("key_id", "company_id", name="uq_registers_key_id"),
    )

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    warehouse_id: Mapped[warehouse_ref]
    name: Mapped[str] = mapped_column(String(100))
    number: Mapped[int] = mapped_column(Integer)
    prefix: Mapped[str] = mapped_column(String(10))
    key_id: Mapped[int] = mapped_column(BigId, info=refers("api_keys"))
    created_by: Mapped[int | None] = mapped_column(BigId, info=refers("users"), nullable=True)
    created_at: Mapped[created]
    last_seen_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    queued: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    attention: Mapped[str] = mapped_column(Text, default="[]", server_default="[]")
    revoked_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


__all__ = ["Register"]
