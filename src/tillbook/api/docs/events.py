"""The webhook events, for the OpenAPI document's ``webhooks`` section (3.1).

Each event type (``events/outbox.py`` ``EVENT_TYPES``) is a POST the service sends
to a registered receiver: the envelope (``id``, ``type``, ``created_at``,
``company_id``, ``warehouse_id``) around a ``data`` object whose shape depends on
the type, and the delivery headers of ``events/worker.py`` ``signed_headers``.
A test checks that every type in ``EVENT_TYPES`` has an entry here.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, RootModel

from tillbook.inventory.adjustments import StockAdjustment
from tillbook.inventory.transfers import Transfer
from tillbook.kit.shapes import answer
from tillbook.orders.views import OrderDetail
from tillbook.orders.voids import OrderCancelled
from tillbook.payments.service import PaymentRecorded


class _Shape(BaseModel):
    model_config = ConfigDict(extra="forbid")


@answer
class PaymentEventData(PaymentRecorded):
    """``payment.created``: the payment as ``POST /payments`` answers it, without
    ``status``."""


class ProductListingEventData(_Shape):
    """``product.updated`` for one warehouse's listing (a product or listing edit, a
    price change, an import): the product as that warehouse lists it, built in one
    place (``catalog/announcements.py``) whatever the door, so every field is always
    there."""

    id: int
    xid: str
    name: str
    item_code: str
    barcode: str | None
    unit_id: int | None
    category_id: int | None
    brand_id: int | None
    tax_id: int | None
    sales_price: float
    purchase_price: float
    mrp: float | None
    current_stock: float
    active: bool


class CategoryChangeEventData(_Shape):
    """``product.updated`` for a change of a category (company-wide,
    ``warehouse_id`` null): one event per change, not one per product."""

    reason: Literal["category.updated", "category.archived"]
    category: dict[str, Any]
    changed: list[str]
    product_ids: list[int]


class BrandChangeEventData(_Shape):
    """``product.updated`` for a change of a brand (company-wide, ``warehouse_id``
    null): one event per change, not one per product."""

    reason: Literal["brand.updated", "brand.archived"]
    brand: dict[str, Any]
    changed: list[str]
    product_ids: list[int]


class ProductEventData(
    RootModel[ProductListingEventData | CategoryChangeEventData | BrandChangeEventData]
):
    """``product.updated``: a listing's form (it has an ``id``) or a category's or
    brand's change (it has a ``reason`` and no ``id``)."""


class DiscrepancyEventData(_Shape):
    """``stock.discrepancy``: units taken below zero in a warehouse that allows it."""

    product_id: int
    name: str
    item_code: str
    quantity_short: float
    current_stock: float
    order_id: int | None = None
    invoice_number: str | None = None
    adjustment_id: int | None = None


# Each event's ``data``: a model, or the ``TypedDict`` its service builds.
EVENTS: dict[str, tuple[type[Any], str]] = {
    "order.created": (OrderDetail, "every sale (`POST /sales`); `data` is the sale as "
                      "`GET /sales/{id}` shows it"),
    "sales.created": (OrderDetail, "every sale; an alias of `order.created` with its own "
                      "event id"),
    "order.paid": (OrderDetail, "a sale becomes fully paid (paid in full at creation, "
                   "settled by `POST /payments`, or by a confirmed terminal callback); "
                   "`data` is the sale with its payments"),
    "purchase.created": (OrderDetail, "every purchase (`POST /purchases`); `data` is the "
                         "purchase as `GET /purchases/{id}` shows it"),
    "payment.created": (PaymentEventData, "every payment (`POST /payments`, a confirmed "
                        "terminal callback)"),
    "product.updated": (ProductEventData, "a price adjustment, a product or listing edit, "
                        "or a change of a category or brand its products carry"),
    "stock.adjusted": (StockAdjustment, "every stock adjustment (`POST /stock-adjustments`)"),
    "stock.discrepancy": (DiscrepancyEventData, "a sale or a stock adjustment takes a "
                          "product below zero (warehouses that allow negative stock)"),
    "order.cancelled": (OrderCancelled, "a sale voided (`POST /sales/{id}/void`); `data` "
                        "is the sale, `order_status` `cancelled`, with the entry that "
                        "reversed it"),
    "transfer.dispatched": (Transfer, "a branch sent stock to another "
                            "(`POST /stock-transfers`); `data` is the transfer"),
    "transfer.received": (Transfer, "the receiving branch took a transfer in "
                          "(`POST /stock-transfers/{id}/receive`), in full or in part"),
    "return.created": (OrderDetail, "every sales or purchase return; `data` is the return "
                       "with `original_order_id`"),
}  # fmt: skip


def envelope_schema(event_type: str, data_ref: str) -> dict[str, Any]:
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["id", "type", "created_at", "company_id", "warehouse_id", "data"],
        "properties": {
            "id": {
                "type": "string",
                "pattern": "^evt_[0-9a-f]{32}$",
                "description": "the event id; deliveries are at least once: dedupe on it",
                "example": "evt_0193a4c2e1f07d9a8b6c5d4e3f2a1b0c",
            },
            "type": {"const": event_type, "description": "the event type", "example": event_type},
            "created_at": {
                "type": "string",
                "format": "date-time",
                "description": "when the change was committed (UTC)",
            },
            "company_id": {"type": "integer", "description": "the company the event is of"},
            "warehouse_id": {
                "type": ["integer", "null"],
                "description": "the warehouse, or null for a company-wide change",
            },
            "data": {"$ref": data_ref, "description": "the event's subject"},
        },
    }


DELIVERY_HEADERS: list[dict[str, Any]] = [
    {
        "name": "X-Service-Signature",
        "in": "header",
        "required": True,
        "description": "lower-case hex HMAC-SHA256 of the raw body bytes, keyed with the "
        "webhook's secret (UTF-8): verify it on the raw bytes, in constant time, before "
        "parsing (`tillbook_client.verify_webhook`)",
        "schema": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
    },
    {
        "name": "Authorization",
        "in": "header",
        "required": True,
        "description": "`Bearer <webhook secret>`",
        "schema": {"type": "string"},
    },
    {
        "name": "X-Service-Event",
        "in": "header",
        "required": True,
        "description": "the event type, as in the body's `type`",
        "schema": {"type": "string"},
    },
    {
        "name": "X-Service-Delivery",
        "in": "header",
        "required": True,
        "description": "this delivery's id; the same on a redelivery of the same event "
        "to the same webhook",
        "schema": {"type": "string"},
    },
    {
        "name": "X-Service-Timestamp",
        "in": "header",
        "required": True,
        "description": "Unix seconds when this attempt was sent",
        "schema": {"type": "string", "pattern": "^[0-9]+$"},
    },
]
