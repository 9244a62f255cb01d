"""Products in and out as CSV (DESIGN.md §13): a shop's catalog from a spreadsheet,
all or nothing, every bad row named, re-import changing nothing, exports that
round-trip, opening stock in the books."""

from __future__ import annotations

import csv
import io
from decimal import Decimal
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from tests.catalog.test_products_admin import ADMIN, login
from tests.factories import Shop, by_id, make_shop
from tests.invariants import check_books, gl_balance
from tillbook.catalog import reference
from tillbook.catalog.import_export import COLUMNS, export_products, import_products
from tillbook.db import Database
from tillbook.imports import ImportRejected
from tillbook.models import (
    AuditEvent,
    Category,
    JournalEntry,
    Listing,
    PriceHistory,
    Product,
    ProductBarcode,
    StockBatch,
    Warehouse,
)
from tillbook.unit import UnitOfWork

D = Decimal
HEADER = ",".join(COLUMNS)


async def names(db: Database, shop: Shop) -> tuple[str, str]:
    async def read(s: Any) -> tuple[str, str]:
        main = await by_id(s, Warehouse, shop.warehouse_id)
        other = await by_id(s, Warehouse, shop.other_warehouse_id)
        return main.name, other.name

    return await db.read(read)


def catalog_file(main: str, harbour: str, tag: str = "") -> bytes:
    rows = [
        HEADER,
        f"IMP-1{tag},Oat milk 1L,55501{tag}|55502{tag},Dairy alternatives,Oatly,Piece,"
        f"VAT 10%,2.20,1.10,2.49,{main},12,1.05,3",
        f"IMP-1{tag},,,,,,,2.40,1.10,2.49,{harbour},6,,",
        f"IMP-2{tag},Rye bread,,Bakery,,Piece,,1.80,0.60,,{main},20,,",
        f'IMP-3{tag},"Candles, 6 pack",,Home,,,,,,,,,,',
    ]
    return ("\n".join(rows) + "\n").encode()


async def run_import(db: Database, company_id: int, data: bytes) -> dict[str, int]:
    async def work(uow: UnitOfWork) -> dict[str, int]:
        return (await import_products(uow, company_id, data, actor_id=None)).as_dict()

    return await db.unit(work)


async def counts(db: Database, company_id: int) -> tuple[int, ...]:
    async def read(s: Any) -> tuple[int, ...]:
        out = []
        for model in (Product, Listing, ProductBarcode, StockBatch, Category, JournalEntry):
            out.append(
                await s.scalar(
                    select(func.count()).select_from(model).where(model.company_id == company_id)
                )
            )
        return tuple(out)

    return await db.read(read)


async def test_a_catalog_from_a_spreadsheet(
    client: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    main, harbour = await names(db, shop)
    inventory = await db.read(lambda s: gl_balance(s, shop.company_id, "11700"))
    first = await run_import(db, shop.company_id, catalog_file(main, harbour))
    assert first == {"created": 4, "updated": 0, "unchanged": 0}
    await check_books(db, shop.company_id)
    # opening stock 12 x 1.05 + 6 x 1.10 (the purchase price) + 20 x 0.60
    after = await db.read(lambda s: gl_balance(s, shop.company_id, "11700"))
    assert after - inventory == D("12.60") + D("6.60") + D("12.00")

    # each till sees its own warehouse's price and stock; the category was created
    found = await client.get("/products", params={"search": "IMP-1"}, headers=shop.headers)
    (oat,) = found.json()["data"]["data"]
    assert (oat["sales_price"], oat["current_stock"], oat["mrp"]) == (2.2, 12, 2.49)
    assert oat["category"]["name"] == "Dairy alternatives"
    there = await client.get(f"/products/{oat['id']}", headers=shop.other_key.headers)
    assert there.json()["data"]["sales_price"] == 2.4
    assert there.json()["data"]["barcodes"] == ["55501", "55502"]
    # a product defined without a listing is in the catalog, but no till sees it
    candles = await client.get("/products", params={"search": "IMP-3"}, headers=shop.headers)
    assert candles.json()["data"]["data"] == []

    # the same file again changes nothing
    before = await counts(db, shop.company_id)
    again = await run_import(db, shop.company_id, catalog_file(main, harbour))
    assert again == {"created": 0, "updated": 0, "unchanged": 4}
    assert await counts(db, shop.company_id) == before

    # the export round-trips: importing it changes nothing either
    exported = await db.read(lambda s: export_products(s, shop.company_id))
    rows = list(csv.DictReader(io.StringIO(exported)))
    assert {(r["item_code"], r["warehouse"]) for r in rows} >= {
        ("IMP-1", main),
        ("IMP-1", harbour),
        ("IMP-2", main),
        ("IMP-3", ""),
    }
    oat_main = next(r for r in rows if (r["item_code"], r["warehouse"]) == ("IMP-1", main))
    assert oat_main["barcode"] == "55501|55502" and oat_main["opening_stock"] == "12"
    assert oat_main["opening_cost"] == "1.05"
    assert await run_import(db, shop.company_id, exported.encode()) == {
        "created": 0,
        "updated": 0,
        "unchanged": len(rows),
    }
    assert await counts(db, shop.company_id) == before
    await check_books(db, shop.company_id)


async def test_the_export_moves_a_catalog_with_its_stock_value(db: Database, shop: Shop) -> None:
    """Into a new company, the export recreates the catalog, the stock on hand and
    its value (at each listing's average cost)."""
    exported = await db.read(lambda s: export_products(s, shop.company_id))
    other = await make_shop(db)

    async def same_names(s: Any) -> None:
        for theirs, mine in (
            (other.warehouse_id, shop.warehouse_id),
            (other.other_warehouse_id, shop.other_warehouse_id),
        ):
            (await by_id(s, Warehouse, theirs)).name = (await by_id(s, Warehouse, mine)).name

    await db.write(same_names)
    pairs = (
        (shop.warehouse_id, other.warehouse_id),
        (shop.other_warehouse_id, other.other_warehouse_id),
    )
    before = {
        to: await db.read(lambda s, w=to: gl_balance(s, other.company_id, "11700", w))
        for _, to in pairs
    }
    result = await run_import(db, other.company_id, exported.encode())
    assert result["created"] == len(exported.splitlines()) - 1
    main, harbour = await names(db, shop)
    rows = list(csv.DictReader(io.StringIO(exported)))
    for (mine, theirs), name in zip(pairs, (main, harbour), strict=True):
        carried = sum(
            (
                (D(r["opening_stock"]) * D(r["opening_cost"])).quantize(D("0.01"))
                for r in rows
                if r["warehouse"] == name and r["opening_cost"]
            ),
            D("0"),
        )
        now = await db.read(lambda s, w=theirs: gl_balance(s, other.company_id, "11700", w))
        assert now - before[theirs] == carried
        was = await db.read(lambda s, w=mine: gl_balance(s, shop.company_id, "11700", w))
        assert abs(carried - was) <= D("0.01") * len(rows)
    await check_books(db, other.company_id)


async def test_a_changed_price_is_an_update_with_its_history(db: Database, shop: Shop) -> None:
    main, harbour = await names(db, shop)
    await run_import(db, shop.company_id, catalog_file(main, harbour))
    changed = catalog_file(main, harbour).replace(b",2.40,1.10,2.49,", b",2.45,1.10,2.49,")
    result = await run_import(db, shop.company_id, changed)
    assert result == {"created": 0, "updated": 1, "unchanged": 3}
    history = await db.read(
        lambda s: s.execute(
            select(PriceHistory.old_price, PriceHistory.new_price)
            .join(Product, Product.id == PriceHistory.product_id)
            .where(Product.item_code == "IMP-1", Product.company_id == shop.company_id)
        )
    )
    assert [(D(str(a)), D(str(b))) for a, b in history.all()] == [(D("2.4"), D("2.45"))]
    audited = await db.read(
        lambda s: s.scalar(
            select(func.count())
            .select_from(AuditEvent)
            .where(AuditEvent.company_id == shop.company_id, AuditEvent.action == "imported")
        )
    )
    assert audited >= 4 + 3  # products and listings created, the listing updated


BAD_ROWS = [
    ("line 2", "warehouse", "IMP-9,Tea,,,,,,1.00,0.50,,Nowhere,,,"),
    ("line 2", "tax", "IMP-9,Tea,,,,,No such tax,1.00,0.50,,{main},,,"),
    ("line 2", "sales_price", "IMP-9,Tea,,,,,,3.00,0.50,2.00,{main},,,"),
    ("line 2", "sales_price", "IMP-9,Tea,,,,,,,0.50,,{main},,,"),
    ("line 2", "opening_stock", "IMP-9,Tea,,,,,,1.00,0.50,,{main},-3,,"),
    ("line 2", "sales_price", "IMP-9,Tea,,,,,,1.00,,,,,,"),
    ("line 2", "sales_price", "IMP-9,Tea,,,,,,1.001x,0.50,,{main},,,"),
    ("line 2", "barcode", "IMP-9,Tea,bad code,,,,,1.00,0.50,,{main},,,"),
    ("line 2", "name", "IMP-9,,,,,,,1.00,0.50,,{main},,,"),
    ("line 2", "item_code", " ,Tea,,,,,,1.00,0.50,,{main},,,"),
    ("line 2", "name", "IMP-9,Te\x00a,,,,,,1.00,0.50,,{main},,,"),
]


@pytest.mark.parametrize(("key", "column", "row"), BAD_ROWS, ids=[r[1] for r in BAD_ROWS])
async def test_a_bad_row_is_named_and_nothing_is_written(
    db: Database, shop: Shop, key: str, column: str, row: str
) -> None:
    main, _ = await names(db, shop)
    data = f"{HEADER}\n{row.format(main=main)}\n".encode()
    before = await counts(db, shop.company_id)
    with pytest.raises(ImportRejected) as caught:
        await run_import(db, shop.company_id, data)
    assert key in caught.value.errors, caught.value.errors
    assert any(m.startswith(f"{column}:") for m in caught.value.errors[key]), caught.value.errors
    assert await counts(db, shop.company_id) == before


async def test_every_bad_row_is_reported_at_once(db: Database, shop: Shop) -> None:
    main, harbour = await names(db, shop)
    apple = await db.read(
        lambda s: s.scalar(select(Product.item_code).where(Product.id == shop.products["apple"]))
    )
    apple_barcode = await db.read(
        lambda s: s.scalar(
            select(ProductBarcode.barcode).where(
                ProductBarcode.product_id == shop.products["apple"]
            )
        )
    )

    async def archive_drinks(uow: UnitOfWork) -> None:
        cat = await reference.add_category(
            uow.session,
            shop.company_id,
            None,
            name="Old stuff",
            slug=None,
            parent_id=None,
            image=None,
        )
        await reference.archive_category(uow, shop.company_id, None, cat.id, cat.version)

    await db.unit(archive_drinks)
    rows = [
        HEADER,
        f"IMP-1,Oat milk,,,,,,2.20,1.10,,{main},,,",  # fine
        f"IMP-1,Oat drink,,,,,,2.40,1.10,,{harbour},,,",  # a second name for IMP-1
        f"IMP-1,Oat milk,,,,,,2.40,1.10,,{main},,,",  # the same warehouse twice
        f"IMP-2,Juice,{apple_barcode},,,,,1.00,0.50,,{main},,,",  # another product's barcode
        f"IMP-3,Relic,,Old stuff,,,,1.00,0.50,,{main},,,",  # an archived category
        f"{apple},Renamed apple,,,,,,1.00,0.50,,{main},,,",  # fine: an update
        "IMP-4,Short row,1",
    ]
    before = await counts(db, shop.company_id)
    with pytest.raises(ImportRejected) as caught:
        await run_import(db, shop.company_id, ("\n".join(rows) + "\n").encode())
    errors = caught.value.errors
    assert set(errors) == {"line 3", "line 4", "line 5", "line 6", "line 8"}, errors
    assert errors["line 3"][0].startswith("name:")
    assert errors["line 4"][0].startswith("item_code:")
    assert errors["line 5"][0].startswith("barcode:")
    assert errors["line 6"][0].startswith("category:") and "archived" in errors["line 6"][0]
    assert errors["line 8"][0].startswith("row:")
    assert [line.split(":")[0] for line in caught.value.lines()] == [
        "line 3",
        "line 4",
        "line 5",
        "line 6",
        "line 8",
    ]
    assert await counts(db, shop.company_id) == before


async def test_through_the_back_office(client: httpx.AsyncClient, db: Database, shop: Shop) -> None:
    auth = await login(client, db, shop)
    main, harbour = await names(db, shop)
    files = {"file": ("catalog.csv", catalog_file(main, harbour), "text/csv")}
    r = await client.post(f"{ADMIN}/import/products", files=files, headers=auth)
    assert r.status_code == 200, r.text
    assert r.json()["data"] == {"created": 4, "updated": 0, "unchanged": 0}
    bad = {"file": ("bad.csv", f"{HEADER}\nIMP-9,Tea,,,,,,1,1,,Nowhere,,,\n".encode(), "text/csv")}
    r = await client.post(f"{ADMIN}/import/products", files=bad, headers=auth)
    assert r.status_code == 422 and "line 2" in r.json()["errors"], r.text
    r = await client.get(f"{ADMIN}/export/products", headers=auth)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")
    assert r.text.splitlines()[0] == HEADER
    assert "IMP-1" in r.text
    # another company's session sees none of it
    other = await make_shop(db)
    theirs = await client.get(f"{ADMIN}/export/products", headers=await login(client, db, other))
    assert "IMP-1" not in theirs.text
    not_csv = await client.post(f"{ADMIN}/import/products", json={"file": "x"}, headers=auth)
    assert not_csv.status_code == 415


async def test_imports_have_their_own_body_cap(db: Database, settings: Any) -> None:
    """A CSV upload may be larger than any other body (TILLBOOK_MAX_IMPORT_BYTES),
    and is still refused while it arrives, before authentication, past its cap."""
    from tillbook.app import create_app

    app = create_app(
        settings.model_copy(update={"max_body_bytes": 1000, "max_import_bytes": 5000}),
        database=db,
    )
    transport = httpx.ASGITransport(app=app)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=transport, base_url="http://testserver") as c,
    ):
        big = {"file": ("a.csv", b"x" * 3000, "text/csv")}
        within = await c.post("/api/v1/admin/import/products", files=big)
        assert within.status_code == 401  # read whole, then refused for want of a session
        huge = {"file": ("a.csv", b"x" * 6000, "text/csv")}
        over = await c.post("/api/v1/admin/import/products", files=huge)
        assert over.status_code == 413, over.text
        elsewhere = await c.post("/api/v1/public/sales", content=b"x" * 3000)
        assert elsewhere.status_code == 413


async def test_large_files_go_in_chunks(
    db: Database, shop: Shop, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bulk statements take CHUNK rows at a time (2,000 in the service): the same file
    in chunks of two writes the same catalog and books."""
    from tillbook.catalog import import_export

    monkeypatch.setattr(import_export, "CHUNK", 2)
    main, harbour = await names(db, shop)
    rows = [HEADER] + [
        f"CH-{i},Chunked {i},77{i:04d},Bulk,,Piece,,1.{i:02d},0.50,,{wh},{i + 1},,"
        for i in range(7)
        for wh in (main, harbour)
    ]
    result = await run_import(db, shop.company_id, ("\n".join(rows) + "\n").encode())
    assert result == {"created": 14, "updated": 0, "unchanged": 0}
    versions = await db.read(
        lambda s: s.execute(
            select(Product.version, Product.archived_at).where(
                Product.company_id == shop.company_id, Product.item_code.like("CH-%")
            )
        )
    )
    assert set(versions.all()) == {(1, None)}
    await check_books(db, shop.company_id)
