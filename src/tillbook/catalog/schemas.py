"""Request bodies of the catalog write endpoints: price adjustments (public API),
products with their listings and batch price changes (back office)."""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Literal

from pydantic import Field, StrictBool, StrictInt, StrictStr

from tillbook.fields import Ref, Strict, UniqueId
from tillbook.kit.bounds import (
    AsciiNumber,
    Clean,
    Note,
    PriceMove,
    Quantity,
    UnitPrice,
    stored_length,
)
from tillbook.models import Product, ProductBarcode

Name = Annotated[StrictStr, Field(min_length=1, max_length=stored_length(Product.name)), Clean]
ItemCode = Annotated[
    StrictStr,
    Field(
        min_length=1,
        max_length=stored_length(Product.item_code),
        # printable, no spaces at either end: it is typed into tills and matched on import
        pattern=r"^[^\s](.*[^\s])?$",
    ),
    Clean,
]
Barcode = Annotated[
    StrictStr,
    Field(
        min_length=1,
        max_length=stored_length(ProductBarcode.barcode),
        pattern=r"^[\x21-\x7e]+$",
    ),
    Clean,
]
Description = Annotated[StrictStr, Field(max_length=10_000), Clean]
Image = Annotated[StrictStr, Field(max_length=stored_length(Product.image)), Clean]
# A reference id in the back office: a plain positive id.
Id = Annotated[StrictInt, Field(ge=1, le=2**63 - 1)]
Stock = Annotated[Decimal, AsciiNumber, Field(ge=0)]
Version = Annotated[StrictInt, Field(ge=1, le=2**31 - 1)]


class PriceAdjustmentIn(Strict):
    product_id: Ref
    new_sales_price: UnitPrice
    notes: Note | None = None
    unique_id: UniqueId | None = None


class OpeningStockIn(Strict):
    """Stock a shop already has when it starts with tillbook: a batch at its cost,
    posted Dr 11700 Inventory / Cr 31100 Opening Balance Equity."""

    quantity: Quantity
    unit_cost: UnitPrice


class ListingIn(Strict):
    warehouse_id: Id
    sales_price: UnitPrice
    purchase_price: UnitPrice
    mrp: UnitPrice | None = None
    reorder_level: UnitPrice = Decimal("0")
    active: StrictBool = True
    opening_stock: OpeningStockIn | None = None


class ListingPatch(Strict):
    sales_price: UnitPrice | None = None
    purchase_price: UnitPrice | None = None
    mrp: UnitPrice | None = None
    reorder_level: UnitPrice | None = None
    active: StrictBool | None = None
    version: Version | None = None


class ProductUnitIn(Strict):
    """An additional unit: one ``unit_id`` holds ``operator_value`` base units."""

    unit_id: Id
    operator_value: Quantity
    alternative_price: UnitPrice


class ProductIn(Strict):
    name: Name
    item_code: ItemCode
    barcodes: list[Barcode] = Field(default_factory=list, max_length=20)
    category_id: Id | None = None
    brand_id: Id | None = None
    unit_id: Id | None = None
    tax_id: Id | None = None
    description: Description = ""
    image: Image | None = None
    product_type: Literal["single"] = "single"
    additional_units: list[ProductUnitIn] = Field(default_factory=list, max_length=20)
    listings: list[ListingIn] = Field(default_factory=list, max_length=500)


class ProductPatch(Strict):
    """Only the fields sent change; ``null`` clears an optional reference."""

    name: Name | None = None
    item_code: ItemCode | None = None
    barcodes: list[Barcode] | None = Field(default=None, max_length=20)
    category_id: Id | None = None
    brand_id: Id | None = None
    unit_id: Id | None = None
    tax_id: Id | None = None
    description: Description | None = None
    image: Image | None = None
    additional_units: list[ProductUnitIn] | None = Field(default=None, max_length=20)
    version: Version | None = None


# --- batch price changes (``catalog.batch_prices``) -----------------------------------

PriceScope = Literal["search", "category", "list"]
PriceTarget = Literal["sales", "purchase", "both"]
PriceMethod = Literal["set", "amount", "percent"]
SearchText = Annotated[StrictStr, Field(min_length=1, max_length=200), Clean]
Fingerprint = Annotated[StrictStr, Field(min_length=1, max_length=64), Clean]


class PriceChangeBody(Strict):
    """A batch price change as the admin API takes it: the same choices as the back
    office's form (``web/prices.py``), for ``catalog.batch_prices``. The service
    checks what depends on other fields (a search for ``scope`` search, a category
    for ``category``, item codes for ``list``; the step one of ``PRICE_STEPS``; a
    percentage above -100), each refusal naming its field."""

    warehouse_ids: Annotated[list[Ref], Field(min_length=1, max_length=100)]
    scope: PriceScope
    target: PriceTarget = "sales"
    method: PriceMethod
    value: PriceMove
    step: UnitPrice = Decimal("0.01")
    search: SearchText | None = None
    category_id: Ref | None = None
    item_codes: Annotated[list[ItemCode], Field(max_length=1000)] = Field(default=[])
    notes: Note | None = None


class PriceChangeApplyIn(PriceChangeBody):
    """The change previewed, sent again with the preview's ``fingerprint``: applied
    only if no price it covers moved since (422 on ``preview`` otherwise)."""

    fingerprint: Fingerprint
