"""``product.updated``: how the catalog tells a warehouse's tills that a product they
list has changed, from every door (a product or listing edit, a price change from a
till or the back office, a batch price change, a CSV import).

One payload, built in one place (``product_updated``): the product as the
warehouse lists it, with every field a till shows or rings up with (its codes, its
unit, category, brand and tax, the warehouse's prices and stock, and ``active``:
whether it can be sold there now, that is not archived and listed as active). The
OpenAPI document's ``webhooks`` section (``api/docs/events.py``) shows it with every
field required, and a test checks each door's event against that schema.

A change of a category or brand is the other form of the event (the spec names
``product.updated`` as the trigger for a till's reference caches):
``announce_reference_change``, one event per change, company-wide, carrying the
category or brand and the ids of the products it touches rather than one event per
product (``catalog.reference`` says why).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Literal, Protocol

from sqlalchemy import select

from tillbook.events.outbox import emit
from tillbook.kit import xid
from tillbook.kit.money import number
from tillbook.models import Listing, Product
from tillbook.unit import UnitOfWork

EVENT = "product.updated"


class ProductFacts(Protocol):
    """What the event says of the product (an ORM ``Product``, or a ``NewProduct``
    an import has just inserted in bulk)."""

    @property
    def id(self) -> int: ...
    @property
    def name(self) -> str: ...
    @property
    def item_code(self) -> str: ...
    @property
    def barcode(self) -> str | None: ...
    @property
    def unit_id(self) -> int | None: ...
    @property
    def category_id(self) -> int | None: ...
    @property
    def brand_id(self) -> int | None: ...
    @property
    def tax_id(self) -> int | None: ...
    @property
    def archived_at(self) -> dt.datetime | None: ...


class ListingFacts(Protocol):
    """What the event says of the product in the warehouse (an ORM ``Listing`` or a
    ``NewListing``)."""

    @property
    def warehouse_id(self) -> int: ...
    @property
    def sales_price(self) -> Decimal: ...
    @property
    def purchase_price(self) -> Decimal: ...
    @property
    def mrp(self) -> Decimal | None: ...
    @property
    def current_stock(self) -> Decimal: ...
    @property
    def active(self) -> bool: ...


@dataclass(frozen=True)
class NewProduct:
    """A product written in bulk (no ORM object loaded), as the event needs it."""

    id: int
    name: str
    item_code: str
    barcode: str | None
    unit_id: int | None
    category_id: int | None
    brand_id: int | None
    tax_id: int | None
    archived_at: dt.datetime | None = None


@dataclass(frozen=True)
class NewListing:
    """A listing written in bulk, as the event needs it."""

    warehouse_id: int
    sales_price: Decimal
    purchase_price: Decimal
    mrp: Decimal | None
    current_stock: Decimal
    active: bool = True


def product_updated(product: ProductFacts, listing: ListingFacts) -> dict[str, Any]:
    """The ``data`` of a ``product.updated`` event for one warehouse's listing."""
    return {
        "id": product.id,
        "xid": xid.encode(product.id),
        "name": product.name,
        "item_code": product.item_code,
        "barcode": product.barcode,
        "unit_id": product.unit_id,
        "category_id": product.category_id,
        "brand_id": product.brand_id,
        "tax_id": product.tax_id,
        "sales_price": number(listing.sales_price),
        "purchase_price": number(listing.purchase_price),
        "mrp": None if listing.mrp is None else number(listing.mrp),
        "current_stock": number(listing.current_stock),
        "active": product.archived_at is None and listing.active,
    }


def announce(
    uow: UnitOfWork, company_id: int, product: ProductFacts, listing: ListingFacts
) -> None:
    """``product.updated`` to the tills of the listing's warehouse, in the caller's
    unit of work (sent once it commits)."""
    emit(
        uow,
        company_id=company_id,
        warehouse_id=listing.warehouse_id,
        types=[EVENT],
        data=product_updated(product, listing),
    )


async def announce_everywhere(uow: UnitOfWork, product: Product) -> None:
    """``product.updated`` to every warehouse that lists the product (a change of the
    product's own fields: its name, codes, references or archiving)."""
    listings = (
        await uow.session.execute(
            select(Listing)
            .where(Listing.company_id == product.company_id, Listing.product_id == product.id)
            .order_by(Listing.warehouse_id)
        )
    ).scalars()
    for listing in listings:
        announce(uow, product.company_id, product, listing)


def announce_reference_change(
    uow: UnitOfWork,
    company_id: int,
    kind: Literal["category", "brand"],
    view: Mapping[str, Any],
    changed: Sequence[str],
    product_ids: list[int],
    reason: str,
) -> None:
    """One company-wide ``product.updated`` for a change of a category or brand: the
    record (its GET shape, with ``archived``), which fields changed, and the products
    whose ``category`` or ``brand`` reads differently now."""
    thing = {k: v for k, v in view.items() if k not in ("version", "archived_at")}
    thing["archived"] = view["archived_at"] is not None
    emit(
        uow,
        company_id=company_id,
        warehouse_id=None,
        types=[EVENT],
        data={
            "reason": f"{kind}.{reason}",
            kind: thing,
            "changed": sorted(changed),
            "product_ids": product_ids,
        },
    )
