"""Plain factory functions with keyword defaults; they use the same setup services
as the operator CLI and the demo data set."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, TypeVar

import httpx
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.app import create_app
from tillbook.catalog import rows as catalog_rows
from tillbook.catalog import seeding as catalog
from tillbook.config import Settings
from tillbook.db import Database
from tillbook.kit import xid
from tillbook.models.base import Base
from tillbook.tenancy import service as tenancy
from tillbook.unit import UnitOfWork

D = Decimal


@dataclass
class Key:
    public_key: str
    secret_key: str
    hmac_secret: str
    warehouse_id: int

    @property
    def headers(self) -> dict[str, str]:
        return {
            "X-Service-Public-Key": self.public_key,
            "X-Service-Secret-Key": self.secret_key,
            "Accept": "application/json",
        }


@dataclass
class Shop:
    company_id: int
    warehouse_id: int
    other_warehouse_id: int
    key: Key
    other_key: Key
    customer_id: int
    walk_in_id: int
    supplier_id: int
    cash_mode_id: int
    card_mode_id: int
    tax10_id: int
    tax_incl_id: int
    box_unit_id: int
    piece_unit_id: int
    category_id: int
    child_category_id: int
    brand_id: int
    products: dict[str, int] = field(default_factory=dict)  # item_code -> id
    other_products: dict[str, int] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    def xid(self, item_code: str) -> str:
        return xid.encode(self.products[item_code])

    @property
    def headers(self) -> dict[str, str]:
        return self.key.headers


M = TypeVar("M", bound=Base)


async def by_id(session: AsyncSession, model: type[M], id_: int) -> M | None:
    """A row by its id alone, whichever company it is of: a test's look at what
    the service wrote (the service's own lookups name the company, ``session.get(
    Model, (id, company_id))``, as a tenant table's identity is the pair)."""
    found: M | None = await session.scalar(
        select(model).where(model.id == id_)  # type: ignore[attr-defined]
    )
    return found


async def make_shop(
    db: Database, *, rate_limit: str = "100000/minute", allow_negative_stock: bool = False
) -> Shop:
    # 12 hex digits: a test process keeps its database for the whole run (thousands
    # of shops), where 6 digits repeated a shop's admin email about once a run.
    tag = uuid.uuid4().hex[:12]

    async def build(uow: UnitOfWork) -> Shop:
        session = uow.session
        company, _admin = await tenancy.create_company(
            session,
            f"Shop {tag}",
            admin_email=f"admin-{tag}@example.com",
            admin_password="correct horse battery",
        )
        cid = company.id
        wh = await tenancy.create_warehouse(
            session, cid, "Main street", allow_negative_stock=allow_negative_stock
        )
        wh2 = await tenancy.create_warehouse(session, cid, "Harbour")
        k1 = await tenancy.create_api_key(session, wh.id, "till 1", rate_limit=rate_limit)
        k2 = await tenancy.create_api_key(session, wh2.id, "till 2", rate_limit=rate_limit)
        piece = await catalog.create_unit(session, cid, "Piece", "pc")
        box = await catalog.create_unit(session, cid, "Box", "box")
        root = await catalog.create_category(session, cid, "Drinks")
        child = await catalog.create_category(session, cid, "Juice", parent_id=root.id)
        brand = await catalog.create_brand(session, cid, "Acme")
        tax10 = await catalog.create_tax(session, cid, "VAT 10%", D("10"))
        tax_incl = await catalog.create_tax(session, cid, "VAT 20% incl", D("20"), True)
        customer = await catalog.create_party(
            session, cid, "customer", "Ada Customer", phone="555-0100"
        )
        walk_in = await catalog.create_party(session, cid, "customer", "Walk-in", walk_in=True)
        supplier = await catalog.create_party(
            session, cid, "supplier", "Sam Supplier", phone="555-0200"
        )
        products: dict[str, int] = {}
        apple = await catalog.create_product(
            uow,
            company_id=cid,
            warehouse_id=wh.id,
            name="Apple juice",
            item_code=f"AJ-{tag}",
            barcode=f"400{tag}",
            sales_price=D("3.50"),
            purchase_price=D("2.00"),
            unit_id=piece.id,
            category_id=child.id,
            brand_id=brand.id,
            opening_batches=[(D("10"), D("1.50")), (D("10"), D("2.00"))],
        )
        products["apple"] = apple.id
        water = await catalog.create_product(
            uow,
            company_id=cid,
            warehouse_id=wh.id,
            name="Still water",
            item_code=f"SW-{tag}",
            sales_price=D("1.00"),
            purchase_price=D("0.40"),
            unit_id=piece.id,
            category_id=root.id,
            opening_batches=[(D("100"), D("0.3333"))],
        )
        products["water"] = water.id
        await catalog_rows.add_product_unit(session, water, box.id, D("12"), D("10.00"))
        empty = await catalog.create_product(
            uow,
            company_id=cid,
            warehouse_id=wh.id,
            name="Rare tea",
            item_code=f"RT-{tag}",
            sales_price=D("9.99"),
            purchase_price=D("5.00"),
        )
        products["tea"] = empty.id
        other = await catalog.create_product(
            uow,
            company_id=cid,
            warehouse_id=wh2.id,
            name="Harbour coffee",
            item_code=f"HC-{tag}",
            sales_price=D("4.00"),
            purchase_price=D("2.50"),
            opening_batches=[(D("5"), D("2.50"))],
        )
        modes = await _modes(session, cid)
        return Shop(
            company_id=cid,
            warehouse_id=wh.id,
            other_warehouse_id=wh2.id,
            key=Key(k1.key.public_key, k1.secret_key, k1.hmac_secret, wh.id),
            other_key=Key(k2.key.public_key, k2.secret_key, k2.hmac_secret, wh2.id),
            customer_id=customer.id,
            walk_in_id=walk_in.id,
            supplier_id=supplier.id,
            cash_mode_id=modes["cash"],
            card_mode_id=modes["card"],
            tax10_id=tax10.id,
            tax_incl_id=tax_incl.id,
            box_unit_id=box.id,
            piece_unit_id=piece.id,
            category_id=root.id,
            child_category_id=child.id,
            brand_id=brand.id,
            products=products,
            other_products={"coffee": other.id},
        )

    return await db.unit(build)


async def _modes(session: AsyncSession, company_id: int) -> dict[str, int]:
    from sqlalchemy import select

    from tillbook.models import PaymentMode

    rows = await session.execute(
        select(PaymentMode.code, PaymentMode.id).where(PaymentMode.company_id == company_id)
    )
    return {code: id_ for code, id_ in rows.all()}


async def add_products(
    db: Database,
    shop: Shop,
    count: int,
    *,
    name: str,
    code: str,
    opening_batches: list[tuple[Decimal, Decimal]] | None = None,
) -> list[int]:
    """``count`` more products listed in ``shop``'s first branch, in one unit, named
    ``name`` and item-coded ``code`` with their number (3 digits): their ids."""

    async def add(uow: UnitOfWork) -> list[int]:
        made = []
        for n in range(count):
            product = await catalog.create_product(
                uow,
                company_id=shop.company_id,
                warehouse_id=shop.warehouse_id,
                name=f"{name} {n:03d}",
                item_code=f"{code}-{n:03d}",
                sales_price=Decimal("1"),
                purchase_price=Decimal("0.5"),
                opening_batches=opening_batches,
            )
            made.append(product.id)
        return made

    return await db.unit(add)


def reading_the_database(client: httpx.AsyncClient, monkeypatch: Any) -> None:
    """The app behind ``client`` (``public_client``) reads every catalog read from the
    database for the rest of the test, none from its worker's memory
    (``api.answers``): what a test counting a read's statements counts."""
    app = client._transport.app  # type: ignore[attr-defined]
    monkeypatch.setattr(app.state.answers, "max_age_s", 0)


@asynccontextmanager
async def public_client(settings: Settings, db: Database) -> AsyncIterator[httpx.AsyncClient]:
    """The public API served in process on ``db``, as a till reaches it (its lifespan
    started: the rate limiter, the outbox's wake-ups)."""
    app = create_app(settings, database=db)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://testserver/api/v1/public"
        ) as client:
            yield client
