"""Transactional outbox, webhook endpoints, deliveries and terminal providers."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import (
    Boolean,
    DateTime,
    Float,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from tillbook.models.base import (
    Base,
    BigId,
    company_ref,
    created,
    money,
    opt_warehouse_ref,
    pk,
    refers,
)


class OutboxEvent(Base):
    """Written in the same transaction as the change it announces."""

    __tablename__ = "outbox_events"
    __table_args__ = (
        Index("ix_outbox_undispatched", "dispatched", "id"),
        UniqueConstraint("event_id", "company_id", name="uq_outbox_events_event_id"),
    )

    id: Mapped[pk]
    event_id: Mapped[str] = mapped_column(String(40))
    company_id: Mapped[company_ref]
    warehouse_id: Mapped[opt_warehouse_ref]
    type: Mapped[str] = mapped_column(String(50))
    payload: Mapped[str] = mapped_column(Text)
    dispatched: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[created]


class Webhook(Base):
    __tablename__ = "webhooks"

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    url: Mapped[str] = mapped_column(String(2000))
    events: Mapped[str] = mapped_column(Text, default="*")
    secret_encrypted: Mapped[str] = mapped_column(Text)
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[created]


class WebhookDelivery(Base):
    __tablename__ = "webhook_deliveries"
    __table_args__ = (
        UniqueConstraint("event_id", "webhook_id", "company_id", name="uq_delivery_event_webhook"),
        Index("ix_deliveries_due", "status", "next_attempt_at"),
    )

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    event_id: Mapped[int] = mapped_column(BigId, info=refers("outbox_events"))
    webhook_id: Mapped[int] = mapped_column(BigId, info=refers("webhooks"))
    delivery_uid: Mapped[str] = mapped_column(String(40))
    status: Mapped[str] = mapped_column(String(20), default="pending")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    locked_until: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    last_status_code: Mapped[int | None] = mapped_column(Integer, nullable=True)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    delivered_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    created_at: Mapped[created]


class DeliveryAttempt(Base):
    __tablename__ = "delivery_attempts"

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    delivery_id: Mapped[int] = mapped_column(BigId, info=refers("webhook_deliveries"), index=True)
    attempted_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    status_code: Mapped[int | None] = mapped_column(Integer, nullable=True)
    latency_ms: Mapped[float] = mapped_column(Float, default=0.0)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)


class TerminalProvider(Base):
    __tablename__ = "terminal_providers"
    __table_args__ = (
        UniqueConstraint("warehouse_id", "name", "company_id", name="uq_terminal_provider"),
    )

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    warehouse_id: Mapped[int] = mapped_column(BigId, info=refers("warehouses"))
    name: Mapped[str] = mapped_column(String(100))
    payment_mode_id: Mapped[int] = mapped_column(BigId, info=refers("payment_modes"))
    secret_encrypted: Mapped[str] = mapped_column(Text)
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[created]


class TerminalCallback(Base):
    __tablename__ = "terminal_callbacks"
    __table_args__ = (
        UniqueConstraint("provider_id", "reference", "company_id", name="uq_terminal_callback_ref"),
    )

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    provider_id: Mapped[int] = mapped_column(BigId, info=refers("terminal_providers"))
    reference: Mapped[str] = mapped_column(String(200))
    order_id: Mapped[int | None] = mapped_column(BigId, nullable=True)
    status: Mapped[str] = mapped_column(String(20))
    amount: Mapped[money]
    outcome: Mapped[str] = mapped_column(Text)
    created_at: Mapped[created]


__all__ = [
    "DeliveryAttempt",
    "OutboxEvent",
    "TerminalCallback",
    "TerminalProvider",
    "Webhook",
    "WebhookDelivery",
]
