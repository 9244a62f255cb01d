"""Offline tills: change feeds (``updated_since``, cursor, tombstones), ETag and 304,
and a till that goes offline, sells 50 times while the back office changes a price
and archives a product, comes back, posts its queue (twice) and catches up."""

from __future__ import annotations

import asyncio
import base64
import datetime as dt
import json
from decimal import Decimal
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from tests.conftest import PG_URL, _create_pg_database, _drop_pg_database
from tests.factories import Shop, add_products, make_shop, public_client
from tests.invariants import check_books
from tests.plans import generic_plan, outline, rows_examined
from tillbook.catalog import changes as catalog_changes
from tillbook.catalog import products as catalog_products
from tillbook.catalog.import_export import COLUMNS, import_products
from tillbook.catalog.schemas import ListingPatch
from tillbook.config import Settings
from tillbook.db import Database
from tillbook.db import _nest as nest
from tillbook.kit import changes as changes_kit
from tillbook.kit import xid
from tillbook.kit.changes import utc
from tillbook.migrate import upgrade
from tillbook.models import Listing, Order, Product, StockMovement, Warehouse
from tillbook.unit import UnitOfWork

D = Decimal
EPOCH = "1970-01-01T00:00:00Z"


async def walk(
    client: httpx.AsyncClient, shop: Shop, path: str, since: str, limit: int = 2
) -> tuple[list[dict[str, Any]], str]:
    """Every change since ``since``, page by page along the cursor; the sync token."""
    items: list[dict[str, Any]] = []
    r = await client.get(
        path, params={"updated_since": since, "limit": limit}, headers=shop.headers
    )
    while True:
        assert r.status_code == 200, r.text
        data = r.json()["data"]
        assert len(data["data"]) <= limit
        items += data["data"]
        if data["next_cursor"] is None:
            return items, data["sync_token"]
        r = await client.get(
            path, params={"cursor": data["next_cursor"], "limit": limit}, headers=shop.headers
        )


async def back_office(db: Database, shop: Shop, fn: Any) -> Any:
    async def run(uow: UnitOfWork) -> Any:
        return await fn(uow)

    return await db.unit(run)


async def set_price(db: Database, shop: Shop, product: str, price: str) -> None:
    """As the back office does it: based on the listing's current version."""

    async def edit(uow: UnitOfWork) -> Any:
        version = await uow.session.scalar(
            select(Listing.version).where(
                Listing.product_id == shop.products[product],
                Listing.warehouse_id == shop.warehouse_id,
            )
        )
        return await catalog_products.update_listing(
            uow,
            shop.company_id,
            shop.products[product],
            shop.warehouse_id,
            ListingPatch(sales_price=D(price)),
            expected_version=version,
            actor_id=None,
        )

    await back_office(db, shop, edit)


async def archive(db: Database, shop: Shop, product: str) -> None:
    await back_office(
        db,
        shop,
        lambda uow: catalog_products.archive(
            uow, shop.company_id, shop.products[product], actor_id=None
        ),
    )


@pytest.mark.parametrize(
    "path", ["/products", "/categories", "/brands", "/customers", "/payment-modes", "/taxes"]
)
async def test_a_full_walk_is_the_list(client: httpx.AsyncClient, db: Database, path: str) -> None:
    shop = await make_shop(db)
    items, token = await walk(client, shop, path, EPOCH, limit=1)
    assert items and all(i["archived"] is False for i in items)
    ids = [i["id"] for i in items]
    assert len(ids) == len(set(ids)), "a record served twice in one walk"
    plain = (await client.get(path, params={"limit": 100}, headers=shop.headers)).json()["data"]
    rows = plain["data"] if isinstance(plain, dict) else plain
    if path == "/categories":  # the plain list is a tree
        rows = rows + [c for root in rows for c in root["children"]]
    assert sorted(ids) == sorted(r["id"] for r in rows)
    # nothing changed since: the delta is empty (but for the overlap's re-serving)
    again, _ = await walk(client, shop, path, token)
    assert {i["id"] for i in again} <= set(ids)


def _forged(**fields: object) -> str:
    """A cursor of this service's shape with some fields replaced."""
    raw = {"u": EPOCH, "t": EPOCH, "i": 1, "s": EPOCH, **fields}
    return base64.urlsafe_b64encode(json.dumps(raw).encode()).decode().rstrip("=")


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"updated_since": "yesterday"}, "updated_since"),
        ({"updated_since": "2026-13-01T00:00:00Z"}, "updated_since"),
        ({"updated_since": "2999-01-01T00:00:00Z"}, "updated_since"),
        ({"updated_since": "1969-12-31T23:59:59Z"}, "updated_since"),
        ({"updated_since": "a\x00b"}, "updated_since"),
        ({"cursor": "not-a-cursor"}, "cursor"),
        ({"updated_since": EPOCH, "limit": "0"}, "limit"),
        # an offset that moves the date-time past the ends of the calendar
        ({"updated_since": "9999-12-31T23:59:59-01:00"}, "updated_since"),
        ({"updated_since": "0001-01-01T00:00:00+01:00"}, "updated_since"),
        # forged cursors: a number where a time goes, ids past BIGINT, times past UTC
        ({"cursor": _forged(u=1)}, "cursor"),
        ({"cursor": _forged(u=None)}, "cursor"),
        ({"cursor": _forged(i=2**70)}, "cursor"),
        ({"cursor": _forged(i=1e300)}, "cursor"),
        ({"cursor": _forged(i=-1)}, "cursor"),
        ({"cursor": _forged(t="9999-12-31T23:59:59-01:00")}, "cursor"),
    ],
)
async def test_bad_updated_since_and_cursor(
    client: httpx.AsyncClient, shop: Shop, params: dict[str, str], field: str
) -> None:
    for path in ("/products", "/categories", "/brands", "/customers", "/payment-modes", "/taxes"):
        r = await client.get(path, params=params, headers=shop.headers)
        assert r.status_code == 422, (path, r.text)
        assert field in r.json()["errors"], (path, r.text)


def _edited(cursor: str, **fields: object) -> str:
    """A cursor the service gave with fields of its position replaced, its
    signature kept: what a till (or anyone) editing one would send."""
    raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
    position = {**json.loads(raw[32:]), **fields}
    edited = raw[:32] + json.dumps(position).encode()
    return base64.urlsafe_b64encode(edited).decode().rstrip("=")


async def _first_cursor(
    client: httpx.AsyncClient, shop: Shop, path: str, headers: dict[str, str] | None = None
) -> str:
    r = await client.get(
        path, params={"updated_since": EPOCH, "limit": 1}, headers=headers or shop.headers
    )
    assert r.status_code == 200, r.text
    cursor = r.json()["data"]["next_cursor"]
    assert cursor
    return str(cursor)


async def test_a_cursor_is_read_back_only_as_given(client: httpx.AsyncClient, db: Database) -> None:
    shop, other = await make_shop(db), await make_shop(db)
    cursor = await _first_cursor(client, shop, "/products")
    # a real cursor pages on exactly: the walk is the plain list, each once
    items, _ = await walk(client, shop, "/products", EPOCH, limit=1)
    plain = (await client.get("/products", params={"limit": 100}, headers=shop.headers)).json()
    assert sorted(i["id"] for i in items) == sorted(p["id"] for p in plain["data"]["data"])
    assert len(items) == len({i["id"] for i in items})
    r = await client.get("/products", params={"cursor": cursor, "limit": 1}, headers=shop.headers)
    assert r.status_code == 200 and r.json()["data"]["data"][0]["id"] == items[1]["id"]

    ten_years = (dt.datetime.now(dt.UTC) + dt.timedelta(days=3650)).isoformat()
    refused = {
        "time ten years ahead": _edited(cursor, t=ten_years),
        "since moved ahead": _edited(cursor, u=ten_years, t=ten_years),
        "id edited": _edited(cursor, i=items[0]["id"] + 1),
        "walk start edited": _edited(cursor, s=EPOCH),
        "truncated": cursor[:-3],
        "a character changed": cursor[:10] + ("A" if cursor[10] != "A" else "B") + cursor[11:],
        "another company's": await _first_cursor(client, other, "/products"),
        "another feed's": await _first_cursor(client, shop, "/categories"),
        "the signature alone": cursor[:43],
    }
    for case, forged in refused.items():
        r = await client.get("/products", params={"cursor": forged}, headers=shop.headers)
        assert r.status_code == 422, (case, r.text)
        assert list(r.json()["errors"]) == ["cursor"], (case, r.text)
    # a feed's cursor from a key of another warehouse (whose balances it served)
    theirs = await _first_cursor(client, shop, "/customers", headers=shop.other_key.headers)
    r = await client.get("/customers", params={"cursor": theirs}, headers=shop.headers)
    assert r.status_code == 422 and list(r.json()["errors"]) == ["cursor"], r.text
    # and every feed refuses a products cursor
    for path in ("/categories", "/brands", "/customers", "/payment-modes", "/taxes"):
        r = await client.get(path, params={"cursor": cursor}, headers=shop.headers)
        assert r.status_code == 422 and "cursor" in r.json()["errors"], (path, r.text)


async def test_an_unchanged_delta_is_a_304(client: httpx.AsyncClient, db: Database) -> None:
    shop = await make_shop(db)
    _, token = await walk(client, shop, "/products", EPOCH, limit=100)
    for limit in (100, 1):  # one page, and the first of several (its cursor moves)
        params = {"updated_since": token, "limit": limit}
        first = await client.get("/products", params=params, headers=shop.headers)
        assert first.status_code == 200, first.text
        tag = first.headers["ETag"]
        again = await client.get(
            "/products", params=params, headers={**shop.headers, "If-None-Match": tag}
        )
        assert again.status_code == 304 and again.content == b"", (limit, again.text)
    params = {"updated_since": token, "limit": 100}
    first = await client.get("/products", params=params, headers=shop.headers)
    await set_price(db, shop, "water", "1.15")
    changed = await client.get(
        "/products", params=params, headers={**shop.headers, "If-None-Match": first.headers["ETag"]}
    )
    assert changed.status_code == 200, changed.text
    latest = {p["id"]: p for p in changed.json()["data"]["data"]}
    assert latest[shop.products["water"]]["sales_price"] == 1.15
    assert changed.headers["ETag"] != first.headers["ETag"]
    for path in ("/categories", "/brands", "/customers", "/payment-modes", "/taxes"):
        params = {"updated_since": EPOCH, "limit": 1}
        first = await client.get(path, params=params, headers=shop.headers)
        again = await client.get(
            path, params=params, headers={**shop.headers, "If-None-Match": first.headers["ETag"]}
        )
        assert again.status_code == 304, path


async def test_etag_and_304(client: httpx.AsyncClient, db: Database) -> None:
    shop = await make_shop(db)
    for path in ("/products", "/categories", "/brands", "/taxes", "/payment-modes", "/units"):
        r = await client.get(path, headers=shop.headers)
        tag = r.headers["ETag"]
        again = await client.get(path, headers={**shop.headers, "If-None-Match": tag})
        assert again.status_code == 304 and again.content == b"", path
        other = await client.get(path, headers={**shop.headers, "If-None-Match": 'W/"x"'})
        assert other.status_code == 200 and other.json() == r.json()
    r = await client.get("/products", headers=shop.headers)
    await set_price(db, shop, "water", "1.10")
    changed = await client.get(
        "/products", headers={**shop.headers, "If-None-Match": r.headers["ETag"]}
    )
    assert changed.status_code == 200 and changed.headers["ETag"] != r.headers["ETag"]


async def test_an_offline_till_catches_up(client: httpx.AsyncClient, db: Database) -> None:
    shop = await make_shop(db)
    # 1. first full sync
    catalog, token = await walk(client, shop, "/products", EPOCH, limit=2)
    local = {p["id"]: p for p in catalog}
    apple, water = shop.products["apple"], shop.products["water"]
    assert local[apple]["sales_price"] == 3.5 and local[water]["sales_price"] == 1

    # 2. offline: 50 sales rung up locally, each with its time, its own invoice
    # number and idempotency key, at the price the till knew
    started = dt.datetime.now(dt.UTC).replace(microsecond=0) - dt.timedelta(minutes=10)
    queue = []
    for i in range(50):
        product = apple if i % 3 == 0 else water
        price = D(str(local[product]["sales_price"]))
        quantity = 1 if product == apple else 2
        queue.append(
            (
                f"till-1-{i:05d}",
                {
                    "user_id": shop.walk_in_id,
                    "order_date": (started + dt.timedelta(seconds=i)).isoformat(),
                    "invoice_number": f"T1-{i:05d}",
                    "product_items": [
                        {"product_id": product, "xid": local[product]["xid"],
                         "quantity": quantity, "unit_price": f"{price:.2f}"}
                    ],
                    "all_payments": [
                        {"amount": f"{price * quantity:.2f}", "payment_mode_id": "cash"}
                    ],
                },
                price * quantity,
            )
        )  # fmt: skip

    # 3. meanwhile the back office raises the water price and archives the apple juice
    await set_price(db, shop, "water", "1.25")
    await archive(db, shop, "apple")

    # 4. back online: the queue in order, then once more (a retry after a lost answer)
    answers = []
    for token_, body, expected in queue:
        r = await client.post(
            "/sales", json=body, headers={**shop.headers, "Idempotency-Key": token_}
        )
        assert r.status_code == 200, (body["invoice_number"], r.text)
        out = r.json()
        assert D(str(out["total_amount"])) == expected, body["invoice_number"]
        assert out["invoice_number"] == body["invoice_number"]
        assert out["payment_status"] == "paid"
        answers.append(out)
    for (token_, body, _), first in zip(queue, answers, strict=True):
        r = await client.post(
            "/sales", json=body, headers={**shop.headers, "Idempotency-Key": token_}
        )
        assert r.status_code == 200 and r.json() == first
        assert r.headers.get("Idempotent-Replayed") == "true"
    sales = await db.read(
        lambda s: s.scalar(
            select(func.count())
            .select_from(Order)
            .where(Order.warehouse_id == shop.warehouse_id, Order.order_type == "sales")
        )
    )
    assert sales == 50

    # 5. catch up: the new water price, the apple juice as a tombstone
    delta, _ = await walk(client, shop, "/products", token, limit=1)
    latest = {p["id"]: p for p in delta}
    assert latest[water]["sales_price"] == 1.25 and latest[water]["archived"] is False
    assert latest[apple] == {"id": apple, "xid": local[apple]["xid"], "archived": True}

    # 6. a sale of the archived product rung up after it was archived is refused
    r = await client.post(
        "/sales",
        json={"user_id": shop.walk_in_id, "order_date": dt.datetime.now(dt.UTC).isoformat(),
              "product_items": [{"xid": local[apple]["xid"], "quantity": 1,
                                 "unit_price": "3.50"}]},
        headers=shop.headers,
    )  # fmt: skip
    assert r.status_code == 422 and "product_items.0.xid" in r.json()["errors"], r.text
    await check_books(db, shop.company_id)


async def _change_times(db: Database, shop: Shop) -> list[dt.datetime]:
    """Every time at which something of the shop's catalog in its branch changed,
    as stored (products, listings, stock movements)."""

    async def read(s: Any) -> list[dt.datetime]:
        times: set[dt.datetime] = set()
        for statement in (
            select(Product.updated_at).where(Product.company_id == shop.company_id),
            select(Listing.updated_at).where(Listing.company_id == shop.company_id),
            select(StockMovement.created_at).where(StockMovement.company_id == shop.company_id),
        ):
            times.update(utc(t) for t in (await s.scalars(statement)).all())
        return sorted(times)

    found: list[dt.datetime] = await db.read(read)
    return found


async def test_a_recent_delta_serves_what_the_whole_walk_serves(
    client: httpx.AsyncClient, db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A recent delta (``kit.changes.RECENT``) finds the products that may have
    changed through three indexes (``catalog.changes._touched``: products by change
    time, listings by edit time, stock movements by time) instead of comparing the
    change time of every listing of the branch. From every moment something changed,
    for every kind of change (a sale, a void, a price, a deactivated listing, an
    archived or renamed product, a new one, an adjustment, a transfer out and one
    received), it serves exactly what the walk of the whole branch serves."""
    shop = await make_shop(db)
    other = {**shop.headers}
    other.update(shop.other_key.headers)
    water, apple = shop.xid("water"), shop.xid("apple")

    async def post(path: str, body: dict[str, Any], headers: dict[str, str] = shop.headers) -> Any:
        r = await client.post(path, json=body, headers=headers)
        assert r.status_code == 200, (path, r.text)
        return r.json()

    today = dt.datetime.now(dt.UTC).date().isoformat()
    line = {"xid": water, "quantity": 2, "unit_price": "1.00"}
    sold = await post(
        "/sales", {"user_id": shop.walk_in_id, "order_date": today, "product_items": [line]}
    )
    await set_price(db, shop, "apple", "3.75")
    await post(
        "/stock-adjustments",
        {"product_id": apple, "quantity": 1, "adjustment_type": "add", "notes": "found"},
    )
    await post(f"/sales/{sold['order_id']}/void", {"reason": "rung twice"})
    out = [{"product_id": water, "quantity": 1}]
    moved = await post(
        "/stock-transfers", {"to_warehouse_id": shop.other_warehouse_id, "items": out}
    )
    # stock arriving from the other branch: dispatched there, received here, where
    # the product was not listed yet (its listing is made on receipt)
    coffee = xid.encode(shop.other_products["coffee"])
    inbound = await post(
        "/stock-transfers",
        {"to_warehouse_id": shop.warehouse_id, "items": [{"product_id": coffee, "quantity": 1}]},
        other,
    )
    await post(f"/stock-transfers/{inbound['transfer_id']}/receive", {}, shop.headers)
    await post(f"/stock-transfers/{moved['transfer_id']}/receive", {}, other)
    await archive(db, shop, "tea")

    async def deactivate(uow: UnitOfWork) -> Any:
        version = await uow.session.scalar(
            select(Listing.version).where(
                Listing.product_id == shop.products["water"],
                Listing.warehouse_id == shop.warehouse_id,
            )
        )
        return await catalog_products.update_listing(
            uow, shop.company_id, shop.products["water"], shop.warehouse_id,
            ListingPatch(active=False), expected_version=version, actor_id=None,
        )  # fmt: skip

    await back_office(db, shop, deactivate)
    await add_products(db, shop, 2, name="Biscuit", code=f"BIS-{shop.company_id}")

    times = await _change_times(db, shop)
    # SQLite's clock counts whole seconds: there the scenario is one moment or two
    assert len(times) >= (1 if db.is_sqlite else 10), times
    served_any = 0
    for moment in times:
        since = changes_kit.iso(moment)
        monkeypatch.setattr(changes_kit, "RECENT", dt.timedelta(days=36500))
        recent, _ = await walk(client, shop, "/products", since, limit=2)
        # more touched than a page is chosen among: the walk in id order after all
        monkeypatch.setattr(changes_kit, "TOUCHED_MOST", 1)
        crowded, _ = await walk(client, shop, "/products", since, limit=2)
        monkeypatch.setattr(changes_kit, "TOUCHED_MOST", 1000)
        monkeypatch.setattr(changes_kit, "RECENT", -dt.timedelta(days=1))
        whole, _ = await walk(client, shop, "/products", since, limit=2)
        assert recent == whole == crowded, since
        served_any += bool(whole)
    assert served_any >= len(times) - 1
    await check_books(db, shop.company_id)


async def test_a_delta_with_nothing_changed_reads_no_listing(database_url: str) -> None:
    """A till polling its delta with nothing changed costs PostgreSQL a few index
    probes, not a look at every listing of its branch (4 ms of PostgreSQL's CPU at
    10,000 products, whatever had changed). The plan is the generic one the service
    runs, in a database of its own whose statistics describe the shop's
    3,000-product branch (the shared test database's thousands of tiny shops make
    another plan look cheaper to the planner)."""
    if not database_url.startswith("postgresql"):
        pytest.skip("PostgreSQL's generic plans")
    assert PG_URL is not None
    url, name = await _create_pg_database(PG_URL)
    db = Database(url, pool_size=5)
    try:
        await asyncio.to_thread(upgrade, url)
        async with public_client(Settings(database_url=url), db) as client:
            await _poll_a_quiet_branch(client, db, url)
    finally:
        await db.dispose()
        await _drop_pg_database(PG_URL, name)


async def _poll_a_quiet_branch(client: httpx.AsyncClient, db: Database, url: str) -> None:
    shop = await make_shop(db)
    branch = await db.read(lambda s: s.scalar(select(Warehouse.name).where(
        Warehouse.id == shop.warehouse_id)))  # fmt: skip
    # a branch of 3,000 products, as a shop imports its catalog
    rows = [",".join(COLUMNS)] + [
        f"BIG-{n:04d},Item {n},,,,,,1.00,0.50,,{branch},,," for n in range(3000)
    ]
    await db.unit(
        lambda uow: import_products(
            uow, shop.company_id, ("\n".join(rows) + "\n").encode(), actor_id=None
        )
    )
    _, token = await walk(client, shop, "/products", EPOCH, limit=1000)
    line = {"xid": shop.xid("water"), "quantity": 1, "unit_price": "1.00"}
    body = {
        "user_id": shop.walk_in_id,
        "order_date": dt.datetime.now(dt.UTC).date().isoformat(),
        "product_items": [line],
    }
    r = await client.post("/sales", json=body, headers=shop.headers)
    assert r.status_code == 200, r.text
    sold_at = await db.read(lambda s: s.scalar(select(func.max(StockMovement.created_at))))
    feed = catalog_changes._PRODUCTS
    assert feed.recent is not None and feed.touched is not None
    # the two statements the service runs: the products touched since (with the
    # database's time), then the page among them, its barcodes and units
    gather, _ = nest(changes_kit.HORIZON, {"ids": feed.touched})
    page, _ = nest(changes_kit.HORIZON, {"_rows": feed.recent.rows, **feed.recent.lists})
    tables = ("products", "listings", "stock_movements")
    for since, touched in (
        (utc(sold_at) + dt.timedelta(microseconds=1), []),
        (utc(sold_at), [shop.products["water"]]),
    ):
        values: dict[str, Any] = {
            "company_id": shop.company_id,
            "warehouse_id": shop.warehouse_id,
            "walk_since": since,
            "walk_after": 0,
            "walk_limit": 101,
        }
        # (no overlap here: the shop was made a moment ago)
        window = {"walk_touched_since": since, "walk_touched_until": changes_kit._END_OF_TIME}
        for statement, more in ((gather, window), (page, {"walk_touched": touched})):
            plan = await generic_plan(url, statement, {**values, **more}, analyze=tables)
            # the rows looked at are the ones touched (the sale's water) and the
            # page's, each found by an index: none of the branch's 3,000 others
            for table in tables:
                assert rows_examined(plan, table) <= 10, (table, outline(plan))
    # what the walk of the whole branch looks at for the same delta
    whole, _ = nest(changes_kit.HORIZON, {"_rows": feed.rows})
    plan = await generic_plan(url, whole, values)
    assert rows_examined(plan, "listings") >= 3000, outline(plan)
    delta, _ = await walk(client, shop, "/products", token, limit=100)
    assert shop.products["water"] in {p["id"] for p in delta}


async def test_a_sale_moves_a_listings_stock_not_its_edit_time(
    client: httpx.AsyncClient, db: Database
) -> None:
    """Every sale updates its listings; PostgreSQL keeps that update HOT (no index
    touched, the hot item's contention) only while no indexed column changes. The
    listing's change time moves with its stock and is in no index; its edit time is
    indexed (a delta finds edited listings by it) and a sale leaves it alone, while
    a price edit moves it."""
    indexed = {c.name for index in Listing.__table__.indexes for c in index.columns}
    indexed |= {c.name for c in Listing.__table__.primary_key.columns}
    for constraint in Listing.__table__.constraints:
        indexed |= {c.name for c in getattr(constraint, "columns", ())}
    assert "edited_at" in indexed
    assert not indexed & {"current_stock", "updated_at"}, indexed

    shop = await make_shop(db)

    async def times() -> tuple[dt.datetime, dt.datetime, Decimal]:
        row = (
            await db.read(
                lambda s: s.execute(
                    select(Listing.edited_at, Listing.updated_at, Listing.current_stock).where(
                        Listing.product_id == shop.products["water"],
                        Listing.warehouse_id == shop.warehouse_id,
                    )
                )
            )
        ).one()
        return utc(row[0]), utc(row[1]), row[2]

    edited, changed, stock = await times()
    body = {
        "user_id": shop.walk_in_id,
        "order_date": dt.datetime.now(dt.UTC).date().isoformat(),
        "product_items": [{"xid": shop.xid("water"), "quantity": 3, "unit_price": "1.00"}],
    }
    r = await client.post("/sales", json=body, headers=shop.headers)
    assert r.status_code == 200, r.text
    after_sale = await times()
    assert after_sale[0] == edited and after_sale[1] >= changed and after_sale[2] == stock - 3
    await set_price(db, shop, "water", "1.05")
    after_edit = await times()
    assert after_edit[0] >= after_sale[1] and after_edit[1] >= after_sale[1]
    if not db.is_sqlite:  # PostgreSQL's clock moves between transactions
        assert after_sale[1] > changed and after_edit[0] > edited
