"""The back office's audit trail: who changed what, when, from what to what."""

from __future__ import annotations

from sqlalchemy import Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from tillbook.models.base import Base, BigId, company_ref, created, pk, refers


class AuditEvent(Base):
    """One change made through the back office (admin API, CLI, web pages).

    ``before`` and ``after`` are the record's fields as JSON objects (``before`` is
    NULL for a creation); the row is written in the same transaction as the change,
    so a change without its audit record cannot commit."""

    __tablename__ = "audit_events"
    __table_args__ = (
        Index("ix_audit_events_company_recent", "company_id", "id"),
        Index("ix_audit_events_entity", "company_id", "entity_type", "entity_id"),
    )

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    # The staff member who made the change; NULL for an operator at the CLI.
    user_id: Mapped[int | None] = mapped_column(BigId, info=refers("users"), nullable=True)
    action: Mapped[str] = mapped_column(String(30))  # created | updated | archived | ...
    entity_type: Mapped[str] = mapped_column(String(50))
    entity_id: Mapped[int | None] = mapped_column(BigId, nullable=True)
    before: Mapped[str | None] = mapped_column(Text, nullable=True)
    after: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[created]


__all__ = ["AuditEvent"]
