"""Orders of every type (sales, purchases, returns), their lines and invoice counters."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from sqlalchemy import BigInteger, Date, DateTime, ForeignKey, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from tillbook.models.base import (
    Base,
    BigId,
    FxRate,
    Money,
    Price,
    Rate,
    company_ref,
    created,
    money,
    pk,
    qty,
    refers,
    warehouse_ref,
)


class Order(Base):
    __tablename__ = "orders"
    __table_args__ = (
        UniqueConstraint(
            "warehouse_id",
            "order_type",
            "invoice_number",
            "company_id",
            name="uq_orders_invoice_number",
        ),
        Index("ix_orders_listing", "warehouse_id", "order_type", "order_date", "id"),
        Index("ix_orders_party_due", "user_id", "order_type"),
    )

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    warehouse_id: Mapped[warehouse_ref]
    order_type: Mapped[str] = mapped_column(String(20))
    unique_id: Mapped[str] = mapped_column(String(100))
    # NULL only inside the unit that creates the order: numbered in its closing step
    # (``orders.repository``), always before COMMIT.
    invoice_number: Mapped[str] = mapped_column(String(100), nullable=True)
    order_date: Mapped[dt.date] = mapped_column(Date)
    order_datetime: Mapped[dt.datetime | None] = mapped_column(
        DateTime(timezone=True), nullable=True
    )
    user_id: Mapped[int] = mapped_column(BigId, info=refers("users"))
    staff_user_id: Mapped[int | None] = mapped_column(BigId, info=refers("users"), nullable=True)
    original_order_id: Mapped[int | None] = mapped_column(
        BigId, info=refers("orders"), nullable=True
    )
    subtotal: Mapped[money]
    tax_amount: Mapped[money]
    discount: Mapped[money]
    shipping: Mapped[money]
    total: Mapped[money]
    paid_amount: Mapped[money]
    due_amount: Mapped[money]
    # Part of the total settled by returns against this invoice (not by payments):
    # due_amount = total - paid_amount - credited_amount.
    credited_amount: Mapped[money]
    order_status: Mapped[str] = mapped_column(String(20))
    payment_status: Mapped[str] = mapped_column(String(20))
    notes: Mapped[str] = mapped_column(Text, default="")
    journal_entry_id: Mapped[int | None] = mapped_column(BigId, nullable=True)
    # The till shift the order was made in (None: no shift was open).
    shift_id: Mapped[int | None] = mapped_column(BigId, info=refers("shifts"), nullable=True)
    # A voided sale (``order_status`` cancelled): why, when, and the shift that voided it.
    void_reason: Mapped[str | None] = mapped_column(String(500), nullable=True)
    voided_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    void_shift_id: Mapped[int | None] = mapped_column(BigId, nullable=True)
    # A document in a foreign currency (DESIGN §16): its amounts above are in
    # ``currency``, converted at ``exchange_rate``; ``base_total`` is the total in the
    # base currency and ``base_due`` the base value still carried for it in 11500 or
    # 21100 (what a payment settling it at another rate is measured against). All
    # NULL on a base-currency document.
    currency: Mapped[str | None] = mapped_column(String(3), nullable=True)
    exchange_rate: Mapped[Decimal | None] = mapped_column(FxRate, nullable=True)
    base_total: Mapped[Decimal | None] = mapped_column(Money, nullable=True)
    base_due: Mapped[Decimal | None] = mapped_column(Money, nullable=True)
    created_at: Mapped[created]


class OrderItem(Base):
    __tablename__ = "order_items"

    id: Mapped[pk]
    order_id: Mapped[int] = mapped_column(BigId, info=refers("orders"), index=True)
    company_id: Mapped[company_ref]
    product_id: Mapped[int] = mapped_column(BigId, info=refers("products"))
    unit_id: Mapped[int | None] = mapped_column(BigId, nullable=True)
    quantity: Mapped[qty]
    base_quantity: Mapped[qty]
    unit_price: Mapped[Decimal] = mapped_column(Price)
    discount_rate: Mapped[Decimal] = mapped_column(Rate, default=Decimal("0"))
    tax_id: Mapped[int | None] = mapped_column(BigId, nullable=True)
    tax_rate: Mapped[Decimal] = mapped_column(Rate, default=Decimal("0"))
    tax_amount: Mapped[money]
    subtotal: Mapped[money]
    total: Mapped[money]
    cost_amount: Mapped[money]
    returned_quantity: Mapped[qty]
    # The promotion that priced this line (DESIGN §18), what it took off on the
    # price as given (the receipt's figure) and what that cost the revenue net of
    # tax (the line's share of the sale's 41300 debit): both 0 without one.
    promotion_id: Mapped[int | None] = mapped_column(BigId, nullable=True, index=True)
    promotion_discount: Mapped[money]
    promotion_cost: Mapped[money]


class InvoiceCounter(Base):
    """Per warehouse and document type; locked in the issuing transaction."""

    __tablename__ = "invoice_counters"

    warehouse_id: Mapped[int] = mapped_column(BigId, primary_key=True)
    counter_type: Mapped[str] = mapped_column(String(20), primary_key=True)
    company_id: Mapped[int] = mapped_column(
        BigId, ForeignKey("companies.id"), primary_key=True, autoincrement=False
    )
    last_value: Mapped[int] = mapped_column(BigInteger, default=0)


__all__ = ["InvoiceCounter", "Order", "OrderItem"]
