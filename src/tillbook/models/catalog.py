"""Catalog: units, categories, brands, taxes and per-warehouse products."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from sqlalchemy import Boolean, DateTime, ForeignKey, Index, String, Text, UniqueConstraint, func
from sqlalchemy.orm import Mapped, mapped_column

from tillbook.models.base import (
    Base,
    BigId,
    Editable,
    Price,
    Qty,
    Rate,
    company_ref,
    created,
    pk,
    price,
    qty,
    warehouse_ref,
)


class Unit(Editable, Base):
    __tablename__ = "units"

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    name: Mapped[str] = mapped_column(String(100))
    short_name: Mapped[str] = mapped_column(String(20))


class Category(Editable, Base):
    __tablename__ = "categories"

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    name: Mapped[str] = mapped_column(String(200))
    slug: Mapped[str] = mapped_column(String(200))
    parent_id: Mapped[int | None] = mapped_column(BigId, ForeignKey("categories.id"), nullable=True)
    image: Mapped[str | None] = mapped_column(String(500), nullable=True)


class Brand(Editable, Base):
    __tablename__ = "brands"

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    name: Mapped[str] = mapped_column(String(200))
    slug: Mapped[str] = mapped_column(String(200))
    image: Mapped[str | None] = mapped_column(String(500), nullable=True)


class Tax(Editable, Base):
    __tablename__ = "taxes"

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    name: Mapped[str] = mapped_column(String(100))
    rate: Mapped[Decimal] = mapped_column(Rate)
    inclusive: Mapped[bool] = mapped_column(Boolean, default=False)


class Product(Base):
    """A product as stocked and priced in one warehouse.

    ``current_stock`` lives on this row so that the row itself is what a sale
    locks (``FOR UPDATE``, in id order) before it allocates batches.
    """

    __tablename__ = "products"
    __table_args__ = (
        UniqueConstraint("warehouse_id", "item_code", name="uq_products_warehouse_item_code"),
        Index("ix_products_warehouse_name", "warehouse_id", "name"),
    )

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    warehouse_id: Mapped[warehouse_ref]
    name: Mapped[str] = mapped_column(String(200))
    slug: Mapped[str] = mapped_column(String(200))
    item_code: Mapped[str] = mapped_column(String(100))
    barcode: Mapped[str | None] = mapped_column(String(100), nullable=True, index=True)
    product_type: Mapped[str] = mapped_column(String(20), default="single")
    category_id: Mapped[int | None] = mapped_column(
        BigId, ForeignKey("categories.id"), nullable=True, index=True
    )
    brand_id: Mapped[int | None] = mapped_column(
        BigId, ForeignKey("brands.id"), nullable=True, index=True
    )
    unit_id: Mapped[int | None] = mapped_column(BigId, ForeignKey("units.id"), nullable=True)
    tax_id: Mapped[int | None] = mapped_column(BigId, ForeignKey("taxes.id"), nullable=True)
    sales_price: Mapped[price]
    purchase_price: Mapped[price]
    mrp: Mapped[Decimal | None] = mapped_column(Price, nullable=True)
    current_stock: Mapped[qty]
    description: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[created]
    updated_at: Mapped[dt.datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now(), onupdate=func.now()
    )


class ProductUnit(Base):
    """An additional selling/buying unit: 1 ``unit`` = ``operator_value`` base units."""

    __tablename__ = "product_units"

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    product_id: Mapped[int] = mapped_column(BigId, ForeignKey("products.id"), index=True)
    unit_id: Mapped[int] = mapped_column(BigId, ForeignKey("units.id"))
    operator: Mapped[str] = mapped_column(String(1), default="*")
    operator_value: Mapped[Decimal] = mapped_column(Qty)
    alternative_price: Mapped[Decimal] = mapped_column(Price)


__all__ = ["Brand", "Category", "Product", "ProductUnit", "Tax", "Unit"]
