"""The wire shapes of the catalog's reads, declared once (``kit/shapes.py``): what
``catalog/queries.py`` and the change feeds (``catalog/changes.py``) build, and what
the OpenAPI document shows (``api/public/openapi.py`` wraps them)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field
from typing_extensions import TypedDict

from tillbook.kit.changes import Live
from tillbook.kit.shapes import DateStr, DateTimeStr, answer


@answer
class Warehouse(TypedDict):
    id: int
    xid: str
    name: str
    allow_negative_stock: bool


@answer
class UnitItem(TypedDict):
    id: int
    xid: str
    name: str
    short_name: str


@answer
class TaxItem(TypedDict):
    id: int
    xid: str
    name: str
    rate: Annotated[float, Field(description="percent")]
    inclusive: bool


class CategoryFields(TypedDict):
    """A category as the change feed shows it, flat: a till rebuilds the tree from
    ``parent_id``."""

    id: int
    xid: str
    name: str
    slug: str
    parent_id: int | None
    image: str | None


@answer
class Category(CategoryFields):
    # With its subtree.
    children: list[Category]


@answer
class Brand(TypedDict):
    id: int
    xid: str
    name: str
    slug: str
    image: str | None


@answer
class XidNamed(TypedDict):
    xid: str
    name: str


@answer
class UnitRef(TypedDict):
    xid: str
    name: str
    short_name: str


@answer
class UnitName(TypedDict):
    name: str
    short_name: str


@answer
class AdditionalUnit(TypedDict):
    child_unit_id: str
    operator: str
    operator_value: float
    alternative_price: float
    unit: UnitName


class ProductHead(TypedDict):
    """What every answer about a product starts with (``product_head``)."""

    id: int
    xid: str
    name: str
    slug: str
    item_code: str
    product_type: str
    sales_price: float
    purchase_price: float
    mrp: float | None
    current_stock: float
    category: XidNamed | None
    brand: XidNamed | None
    unit: UnitRef | None
    # Additive to the spec (DESIGN.md §13): the primary barcode, this warehouse's
    # reorder level, whether the product is still sold here, and whether it has
    # additional units (so a till fetches only those products' detail).
    barcode: str | None
    reorder_level: float
    active: bool
    has_additional_units: bool
    # Additive (register-contract.md, Changes): what a register needs to price a line
    # offline without asking for each product's detail.
    tax_id: int | None


@answer
class ProductListItem(ProductHead):
    # A product as a till sees it in a list and in the change feed.
    barcodes: list[str]
    additional_units: list[AdditionalUnit]


@answer
class Batch(TypedDict):
    id: int
    batch_number: str | None
    expiry_date: DateStr | None
    quantity_remaining: float
    unit_cost: float
    received_at: DateTimeStr


@answer
class ProductDetail(ProductListItem):
    description: str
    batches: list[Batch]


# --- the change feeds' items (``catalog/changes.py``, ``kit/changes.py``) ---------------


@answer
class ProductChange(ProductListItem, Live):
    pass


@answer
class FlatCategory(CategoryFields, Live):
    pass


@answer
class BrandChange(Brand, Live):
    pass


@answer
class TaxChange(TaxItem, Live):
    pass
