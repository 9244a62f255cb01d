"""The transactional outbox: events are rows written in the same transaction as the
change they announce, so a rolled-back request sends nothing and a crash after
commit loses nothing. The delivery worker fans them out to webhooks."""

from __future__ import annotations

import datetime as dt
import secrets
import time
from collections.abc import Mapping
from typing import Any

import orjson

from tillbook.kit.jsonio import dumps
from tillbook.models import OutboxEvent
from tillbook.models.base import table_of
from tillbook.unit import QueuedInsert, UnitOfWork

EVENT_TYPES = (
    "order.created",
    "sales.created",
    "order.paid",
    "product.updated",
    "purchase.created",
    "payment.created",
    "stock.adjusted",
    "stock.discrepancy",
    "return.created",
    "order.cancelled",
    "transfer.dispatched",
    "transfer.received",
)

_INSERT = QueuedInsert(
    table_of(OutboxEvent),
    ["event_id", "company_id", "warehouse_id", "type", "payload", "dispatched", "created_at"],
)


def time_ordered_hex() -> str:
    """32 hex digits like a UUID's, but the first 12 are the time in milliseconds
    (as in UUIDv7), the other 20 random: ``event_id`` is unique-indexed, and keys
    that grow with time land on the index's last page instead of a random one, so
    inserting stays as cheap with millions of events as with none."""
    return f"{time.time_ns() // 1_000_000:012x}{secrets.token_hex(10)}"


def emit(
    uow: UnitOfWork,
    *,
    company_id: int,
    warehouse_id: int | None,
    types: list[str],
    data: Mapping[str, Any],
) -> None:
    """One outbox row per event type, all carrying the same ``data`` (serialised
    once: a sale's detail goes out three times)."""
    now = dt.datetime.now(dt.UTC)
    data_json = orjson.Fragment(dumps(data))
    rows = []
    for event_type in types:
        assert event_type in EVENT_TYPES, event_type
        event_id = "evt_" + time_ordered_hex()
        payload = {
            "id": event_id,
            "type": event_type,
            "created_at": now.isoformat().replace("+00:00", "Z"),
            "company_id": company_id,
            "warehouse_id": warehouse_id,
            "data": data_json,
        }
        rows.append(
            {
                "event_id": event_id,
                "company_id": company_id,
                "warehouse_id": warehouse_id,
                "type": event_type,
                "payload": dumps(payload).decode(),
                "dispatched": False,
                "created_at": now,
            }
        )
    # Nothing in a unit reads its own events back: they go with its last statement.
    uow.defer(_INSERT, rows)
