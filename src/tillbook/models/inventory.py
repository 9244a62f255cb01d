"""Stock batches (FIFO layers), stock movements, adjustments and discrepancy alerts."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from sqlalchemy import Date, DateTime, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from tillbook.models.base import (
    Base,
    BigId,
    Price,
    Qty,
    company_ref,
    created,
    money,
    pk,
    qty,
    refers,
    warehouse_ref,
)


class StockBatch(Base):
    """One FIFO layer of a product in a warehouse.

    ``value_remaining`` is the money still carried in 11700 for this layer. It is
    kept to the cent (received value minus the rounded cost of every draw), so
    that GL 11700 equals the sum of remaining values exactly, with no rounding
    drift between the ledger and the layers.
    """

    __tablename__ = "stock_batches"
    __table_args__ = (Index("ix_stock_batches_fifo", "product_id", "warehouse_id", "id"),)

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    warehouse_id: Mapped[warehouse_ref]
    product_id: Mapped[int] = mapped_column(BigId, info=refers("products"))
    batch_number: Mapped[str | None] = mapped_column(String(100), nullable=True)
    expiry_date: Mapped[dt.date | None] = mapped_column(Date, nullable=True)
    unit_cost: Mapped[Decimal] = mapped_column(Price)
    quantity_received: Mapped[qty]
    quantity_remaining: Mapped[qty]
    value_remaining: Mapped[money]
    source_type: Mapped[str] = mapped_column(String(30))
    source_id: Mapped[int | None] = mapped_column(BigId, nullable=True)
    created_at: Mapped[created]


class StockMovement(Base):
    """Every change to stock on hand, signed; Σ quantity = product.current_stock."""

    __tablename__ = "stock_movements"
    __table_args__ = (
        Index("ix_stock_movements_source", "source_type", "source_id"),
        # By warehouse and time, not by warehouse alone: a till's delta finds the
        # products whose stock moved since it last synced by this range
        # (``catalog.changes``), at no more index writes per movement than before.
        Index("ix_stock_movements_warehouse_created", "warehouse_id", "created_at"),
    )

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    warehouse_id: Mapped[int] = mapped_column(BigId, info=refers("warehouses"))
    product_id: Mapped[int] = mapped_column(BigId, info=refers("products"), index=True)
    batch_id: Mapped[int | None] = mapped_column(BigId, info=refers("stock_batches"), nullable=True)
    quantity: Mapped[qty]
    cost_amount: Mapped[money]
    reason: Mapped[str] = mapped_column(String(30))
    source_type: Mapped[str] = mapped_column(String(30))
    source_id: Mapped[int | None] = mapped_column(BigId, nullable=True)
    created_at: Mapped[created]


class StockAdjustment(Base):
    __tablename__ = "stock_adjustments"
    __table_args__ = (Index("ix_stock_adjustments_wh_id", "warehouse_id", "id"),)

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    warehouse_id: Mapped[warehouse_ref]
    product_id: Mapped[int] = mapped_column(BigId, info=refers("products"))
    quantity: Mapped[qty]
    adjustment_type: Mapped[str] = mapped_column(String(10))
    notes: Mapped[str] = mapped_column(Text, default="")
    batch_number: Mapped[str | None] = mapped_column(String(100), nullable=True)
    expiry_date: Mapped[dt.date | None] = mapped_column(Date, nullable=True)
    cost_amount: Mapped[money]
    created_by: Mapped[int | None] = mapped_column(BigId, info=refers("users"), nullable=True)
    journal_entry_id: Mapped[int | None] = mapped_column(BigId, nullable=True)
    created_at: Mapped[created]


class StockAlert(Base):
    """Raised when a sale is allowed to take stock below zero (DESIGN.md §6)."""

    __tablename__ = "stock_alerts"

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    warehouse_id: Mapped[warehouse_ref]
    product_id: Mapped[int] = mapped_column(BigId, info=refers("products"))
    kind: Mapped[str] = mapped_column(String(30), default="discrepancy")
    quantity_short: Mapped[qty]
    stock_after: Mapped[qty]
    source_type: Mapped[str] = mapped_column(String(30))
    source_id: Mapped[int | None] = mapped_column(BigId, nullable=True)
    created_at: Mapped[created]


class StockTransfer(Base):
    """Stock sent from one branch to another (``inventory.transfers``).

    Created dispatched: the units left the sender by FIFO at cost into 11750 Goods
    in Transit. Then exactly one of: ``received`` (the receiver took in what
    arrived; a shortfall written off to 51100) or ``cancelled`` (the units went
    back into the sender's stock at the cost they left with)."""

    __tablename__ = "stock_transfers"
    __table_args__ = (
        Index("ix_stock_transfers_from", "from_warehouse_id", "id"),
        Index("ix_stock_transfers_to", "to_warehouse_id", "id"),
    )

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    from_warehouse_id: Mapped[int] = mapped_column(BigId, info=refers("warehouses"))
    to_warehouse_id: Mapped[int] = mapped_column(BigId, info=refers("warehouses"))
    status: Mapped[str] = mapped_column(String(20))
    notes: Mapped[str] = mapped_column(Text, default="")
    # Σ of the lines: what left the sender, what the receiver took in, what was
    # written off on receipt (value_sent = value_received + value_short once received).
    value_sent: Mapped[money]
    value_received: Mapped[money]
    value_short: Mapped[money]
    reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_by: Mapped[int | None] = mapped_column(BigId, info=refers("users"), nullable=True)
    closed_by: Mapped[int | None] = mapped_column(BigId, info=refers("users"), nullable=True)
    dispatched_at: Mapped[created]
    closed_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class StockTransferLine(Base):
    """One FIFO draw of a transfer: units of one sender batch, with that batch's
    number, expiry and unit cost, and what of them was received."""

    __tablename__ = "stock_transfer_lines"

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    transfer_id: Mapped[int] = mapped_column(BigId, info=refers("stock_transfers"), index=True)
    product_id: Mapped[int] = mapped_column(BigId, info=refers("products"))
    source_batch_id: Mapped[int] = mapped_column(BigId, info=refers("stock_batches"))
    batch_number: Mapped[str | None] = mapped_column(String(100), nullable=True)
    expiry_date: Mapped[dt.date | None] = mapped_column(Date, nullable=True)
    unit_cost: Mapped[Decimal] = mapped_column(Price)
    quantity: Mapped[qty]
    value: Mapped[money]
    quantity_received: Mapped[qty]
    value_received: Mapped[money]


class StockCount(Base):
    """A stocktake of one branch (``inventory.counts``): a count sheet kept as a
    draft while the shelves are counted (it survives a reload, a second device, a
    restart), then ``posted`` (each difference became a stock adjustment, in one
    transaction) or ``cancelled``. ``scope`` says how the sheet was drawn up: every
    listed product, one category, or a chosen list."""

    __tablename__ = "stock_counts"
    __table_args__ = (Index("ix_stock_counts_wh_id", "warehouse_id", "id"),)

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    warehouse_id: Mapped[int] = mapped_column(BigId, info=refers("warehouses"))
    status: Mapped[str] = mapped_column(String(20), default="draft")
    scope: Mapped[str] = mapped_column(String(20), default="all")
    category_id: Mapped[int | None] = mapped_column(BigId, info=refers("categories"), nullable=True)
    notes: Mapped[str] = mapped_column(Text, default="")
    # Set on posting: Σ cost of the gains (adds) and of the losses (subtracts).
    value_gain: Mapped[money]
    value_loss: Mapped[money]
    lines_adjusted: Mapped[int] = mapped_column(Integer, default=0)
    created_by: Mapped[int | None] = mapped_column(BigId, info=refers("users"), nullable=True)
    created_at: Mapped[created]
    closed_by: Mapped[int | None] = mapped_column(BigId, info=refers("users"), nullable=True)
    closed_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class StockCountLine(Base):
    """One product of a count sheet. ``counted`` is None until entered. ``expected``
    is the branch's book stock at the moment ``counted`` was (last) entered: the
    difference posted is ``counted - expected``, so a sale rung up between counting
    a shelf and posting the count is not mistaken for a loss (``inventory.counts``)."""

    __tablename__ = "stock_count_lines"
    __table_args__ = (UniqueConstraint("count_id", "product_id", "company_id"),)

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    count_id: Mapped[int] = mapped_column(BigId, info=refers("stock_counts"), index=True)
    product_id: Mapped[int] = mapped_column(BigId, info=refers("products"))
    counted: Mapped[Decimal | None] = mapped_column(Qty, nullable=True)
    expected: Mapped[Decimal | None] = mapped_column(Qty, nullable=True)
    counted_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    # Set on posting: the adjustment made for this line (None: no difference).
    adjustment_id: Mapped[int | None] = mapped_column(
        BigId, info=refers("stock_adjustments"), nullable=True
    )
    difference: Mapped[qty]
    cost_amount: Mapped[money]


__all__ = [
    "StockAdjustment",
    "StockAlert",
    "StockBatch",
    "StockCount",
    "StockCountLine",
    "StockMovement",
    "StockTransfer",
    "StockTransferLine",
]
