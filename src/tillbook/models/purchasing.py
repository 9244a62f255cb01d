"""Purchase orders: what a branch asked a supplier for, before anything arrives.

A purchase order is a promise, not a movement: it posts nothing to the books and
moves no stock (DESIGN.md §5: the books move on receipt). Each receipt against it
is an ordinary purchase (``orders.purchases``) linked here by
``PurchaseOrderReceipt``; the lines keep what was ordered and what has come."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from sqlalchemy import Date, DateTime, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from tillbook.models.base import (
    Base,
    BigId,
    Price,
    company_ref,
    created,
    money,
    pk,
    qty,
    refers,
    warehouse_ref,
)


class PurchaseOrder(Base):
    """``status``: draft (editable) → ordered → partially_received → received, or
    closed (the rest is not coming) / cancelled (closed before anything came).
    ``total``: Σ ordered quantity × expected unit cost, for the supplier's copy."""

    __tablename__ = "purchase_orders"
    __table_args__ = (
        UniqueConstraint("warehouse_id", "number", "company_id", name="uq_purchase_orders_number"),
        Index("ix_purchase_orders_wh_id", "warehouse_id", "id"),
        Index("ix_purchase_orders_supplier", "supplier_id", "status"),
    )

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    warehouse_id: Mapped[warehouse_ref]
    supplier_id: Mapped[int] = mapped_column(BigId, info=refers("users"))
    number: Mapped[str] = mapped_column(String(30))
    status: Mapped[str] = mapped_column(String(20), default="draft")
    order_date: Mapped[dt.date] = mapped_column(Date)
    expected_date: Mapped[dt.date | None] = mapped_column(Date, nullable=True)
    notes: Mapped[str] = mapped_column(Text, default="")
    total: Mapped[money]
    created_by: Mapped[int | None] = mapped_column(BigId, info=refers("users"), nullable=True)
    created_at: Mapped[created]
    ordered_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    closed_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    closed_by: Mapped[int | None] = mapped_column(BigId, info=refers("users"), nullable=True)
    close_reason: Mapped[str] = mapped_column(String(500), default="")


class PurchaseOrderLine(Base):
    """A product ordered, in its base unit, at the expected unit cost; ``received``
    grows with each receipt (never past ``quantity``: ``orders.purchase_orders``)."""

    __tablename__ = "purchase_order_lines"
    __table_args__ = (
        UniqueConstraint(
            "purchase_order_id", "product_id", "company_id", name="uq_purchase_order_lines"
        ),
    )

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    purchase_order_id: Mapped[int] = mapped_column(
        BigId, info=refers("purchase_orders"), index=True
    )
    product_id: Mapped[int] = mapped_column(BigId, info=refers("products"))
    position: Mapped[int] = mapped_column(Integer, default=0)
    quantity: Mapped[qty]
    unit_cost: Mapped[Decimal] = mapped_column(Price)
    received: Mapped[qty]


class PurchaseOrderReceipt(Base):
    """A purchase (``orders``, type purchases) received against a purchase order."""

    __tablename__ = "purchase_order_receipts"
    __table_args__ = (
        UniqueConstraint("order_id", "company_id", name="uq_purchase_order_receipts_order_id"),
    )

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    purchase_order_id: Mapped[int] = mapped_column(
        BigId, info=refers("purchase_orders"), index=True
    )
    order_id: Mapped[int] = mapped_column(BigId, info=refers("orders"))
    created_at: Mapped[created]


__all__ = ["PurchaseOrder", "PurchaseOrderLine", "PurchaseOrderReceipt"]
