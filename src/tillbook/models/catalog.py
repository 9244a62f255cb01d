"""Catalog: units, categories, brands, taxes, company-wide products and their
per-warehouse listings."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from sqlalchemy import Boolean, DateTime, Index, String, Text, UniqueConstraint, func
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
    refers,
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
    parent_id: Mapped[int | None] = mapped_column(BigId, info=refers("categories"), nullable=True)
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


class Product(Editable, Base):
    """A product as the company defines it, once for all its branches (DESIGN.md §13).

    What differs per branch (prices, stock, reorder level, whether it is sold
    there) is the product's ``Listing`` in that warehouse. Orders, batches,
    movements and journal entries name the product and their own warehouse.
    """

    __tablename__ = "products"
    __table_args__ = (
        UniqueConstraint("company_id", "item_code", name="uq_products_company_item_code"),
        Index("ix_products_company_name", "company_id", "name"),
        # A till's delta finds the products edited since it last synced by this
        # range (``catalog.changes``); products are not written by sales.
        Index("ix_products_company_updated", "company_id", "updated_at"),
    )

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    name: Mapped[str] = mapped_column(String(200))
    slug: Mapped[str] = mapped_column(String(200))
    item_code: Mapped[str] = mapped_column(String(100))
    # The primary barcode (the first of ``ProductBarcode``), kept here for search.
    barcode: Mapped[str | None] = mapped_column(String(100), nullable=True, index=True)
    product_type: Mapped[str] = mapped_column(String(20), default="single")
    category_id: Mapped[int | None] = mapped_column(
        BigId, info=refers("categories"), nullable=True, index=True
    )
    brand_id: Mapped[int | None] = mapped_column(
        BigId, info=refers("brands"), nullable=True, index=True
    )
    unit_id: Mapped[int | None] = mapped_column(BigId, info=refers("units"), nullable=True)
    tax_id: Mapped[int | None] = mapped_column(BigId, info=refers("taxes"), nullable=True)
    description: Mapped[str] = mapped_column(Text, default="")
    image: Mapped[str | None] = mapped_column(String(500), nullable=True)
    created_at: Mapped[created]
    updated_at: Mapped[dt.datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now(), onupdate=func.now()
    )


class ProductBarcode(Base):
    """Every barcode of a product (a can and its multipack, an old and a new label):
    one barcode names one product in the company."""

    __tablename__ = "product_barcodes"
    __table_args__ = (
        UniqueConstraint("company_id", "barcode", name="uq_product_barcodes_company_barcode"),
        # A page of products reads its barcodes by (company, product ids): with one
        # index on both, no planner statistics of a database of many small companies
        # can send a large company's page through all of its barcodes instead.
        Index("ix_product_barcodes_company_product", "company_id", "product_id"),
    )

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    product_id: Mapped[int] = mapped_column(BigId, info=refers("products"), index=True)
    barcode: Mapped[str] = mapped_column(String(100))


class Listing(Editable, Base):
    """A product as stocked and priced in one warehouse.

    ``current_stock`` lives on this row: the stock level a sale moves (a guarded
    increment in its unit's last statement, ``inventory.repository``).

    ``updated_at`` moves with every change, the stock level's too; ``edited_at``
    only with the listing's own edits (price, active flag, reorder level), and it is
    indexed by warehouse: a till's delta finds the listings edited since it last
    synced by that range, and the stock moved since then by the movements'
    (``catalog.changes``). ``updated_at`` cannot be indexed: every sale moves it, and
    an indexed column changing turns the sale's HOT update of the row into an update
    of every index of the table.
    """

    __tablename__ = "listings"
    __table_args__ = (
        UniqueConstraint(
            "warehouse_id", "product_id", "company_id", name="uq_listings_warehouse_product"
        ),
        Index("ix_listings_warehouse_edited", "warehouse_id", "edited_at"),
    )

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    warehouse_id: Mapped[warehouse_ref]
    product_id: Mapped[int] = mapped_column(BigId, info=refers("products"), index=True)
    sales_price: Mapped[price]
    purchase_price: Mapped[price]
    mrp: Mapped[Decimal | None] = mapped_column(Price, nullable=True)
    current_stock: Mapped[qty]
    reorder_level: Mapped[qty]
    # A listing that is not active is not sold or bought in this warehouse any more;
    # its history stays.
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[created]
    updated_at: Mapped[dt.datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now(), onupdate=func.now()
    )
    edited_at: Mapped[dt.datetime] = mapped_column(
        DateTime(timezone=True),
        default=func.now(),
        server_default=func.now(),
        onupdate=func.now(),
    )


class ProductUnit(Base):
    """An additional selling/buying unit: 1 ``unit`` = ``operator_value`` base units."""

    __tablename__ = "product_units"

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    product_id: Mapped[int] = mapped_column(BigId, info=refers("products"), index=True)
    unit_id: Mapped[int] = mapped_column(BigId, info=refers("units"))
    operator: Mapped[str] = mapped_column(String(1), default="*")
    operator_value: Mapped[Decimal] = mapped_column(Qty)
    alternative_price: Mapped[Decimal] = mapped_column(Price)


__all__ = [
    "Brand",
    "Category",
    "Listing",
    "Product",
    "ProductBarcode",
    "ProductUnit",
    "Tax",
    "Unit",
]
