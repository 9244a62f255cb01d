"""Stock transfers between branches: dispatch, receipt in full and in part, cancel,
who sees them, bad input and two receipts at once; the books after each."""

from __future__ import annotations

import asyncio
import datetime as dt
import uuid
from decimal import Decimal
from typing import Any

import httpx
from sqlalchemy import select

from tests.factories import Key, Shop, make_shop
from tests.invariants import check_books, gl_balance
from tillbook.db import Database
from tillbook.kit import xid
from tillbook.models import Listing, OutboxEvent, StockBatch
from tillbook.tenancy import service as tenancy
from tillbook.unit import UnitOfWork

D = Decimal


async def gl(db: Database, shop: Shop, code: str, warehouse_id: int | None = None) -> Decimal:
    return await db.read(lambda s: gl_balance(s, shop.company_id, code, warehouse_id))


async def batches(db: Database, warehouse_id: int, product_id: int) -> list[tuple[Any, ...]]:
    async def read(session: Any) -> list[tuple[Any, ...]]:
        rows = await session.execute(
            select(
                StockBatch.batch_number,
                StockBatch.expiry_date,
                StockBatch.unit_cost,
                StockBatch.quantity_remaining,
                StockBatch.value_remaining,
            )
            .where(StockBatch.warehouse_id == warehouse_id, StockBatch.product_id == product_id)
            .order_by(StockBatch.id)
        )
        return [tuple(r) for r in rows.all()]

    return await db.read(read)


async def stock(db: Database, warehouse_id: int, product_id: int) -> Decimal | None:
    async def read(session: Any) -> Decimal | None:
        value = await session.scalar(
            select(Listing.current_stock).where(
                Listing.warehouse_id == warehouse_id, Listing.product_id == product_id
            )
        )
        return None if value is None else D(str(value))

    return await db.read(read)


async def dispatch(
    client: httpx.AsyncClient, shop: Shop, items: list[dict[str, Any]], **more: Any
) -> httpx.Response:
    body = {"to_warehouse_id": xid.encode(shop.other_warehouse_id), "items": items, **more}
    return await client.post("/stock-transfers", json=body, headers=shop.headers)


async def test_dispatch_and_receive_in_full(client: httpx.AsyncClient, db: Database) -> None:
    shop = await make_shop(db)
    apple = shop.products["apple"]
    # a third batch with a number and an expiry, behind the two opening batches
    r = await client.post(
        "/stock-adjustments",
        json={"product_id": apple, "quantity": 5, "adjustment_type": "add",
              "batch_number": "LOT-7", "expiry_date": "2030-01-31"},
        headers=shop.headers,
    )  # fmt: skip
    assert r.status_code == 200, r.text
    r = await dispatch(client, shop, [{"product_id": xid.encode(apple), "quantity": 23}], notes="n")
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["status"] == "success" and out["transfer_status"] == "dispatched"
    t_id = out["transfer_id"]
    data = out["data"]
    assert data["status"] == "dispatched" and data["direction"] == "out"
    # FIFO: 10 @ 1.50 + 10 @ 2.00 + 3 of LOT-7 @ 2.00 (purchase price)
    assert data["value_sent"] == "41.00"
    assert [b["quantity"] for b in data["items"][0]["batches"]] == [10, 10, 3]
    assert await stock(db, shop.warehouse_id, apple) == 2
    assert await gl(db, shop, "11750") == D("41.00")
    await check_books(db, shop.company_id)

    # the receiving key sees it as incoming; the product is listed there on receipt
    r = await client.get(f"/stock-transfers/{t_id}", headers=shop.other_key.headers)
    assert r.status_code == 200 and r.json()["data"]["direction"] == "in"
    assert await stock(db, shop.other_warehouse_id, apple) is None
    before_other = await gl(db, shop, "11700", shop.other_warehouse_id)
    r = await client.post(
        f"/stock-transfers/{xid.encode(t_id)}/receive", json={}, headers=shop.other_key.headers
    )
    assert r.status_code == 200, r.text
    assert r.json()["transfer_status"] == "received"
    assert r.json()["data"]["value_received"] == "41.00"
    assert r.json()["data"]["value_short"] == "0.00"
    assert await stock(db, shop.other_warehouse_id, apple) == 23
    kept = await batches(db, shop.other_warehouse_id, apple)
    assert [(b[0], b[1] and b[1].isoformat(), D(str(b[3]))) for b in kept] == [
        (None, None, 10),
        (None, None, 10),
        ("LOT-7", "2030-01-31", 3),
    ]
    assert [D(str(b[2])) for b in kept] == [D("1.5"), D("2"), D("2")]
    assert await gl(db, shop, "11700", shop.other_warehouse_id) - before_other == D("41.00")
    assert await gl(db, shop, "11750") == 0
    await check_books(db, shop.company_id)

    # events: dispatched at the sender, received at the receiver
    types = await db.read(
        lambda s: s.execute(
            select(OutboxEvent.type, OutboxEvent.warehouse_id)
            .where(OutboxEvent.company_id == shop.company_id, OutboxEvent.type.like("transfer.%"))
            .order_by(OutboxEvent.id)
        )
    )
    assert [tuple(t) for t in types.all()] == [
        ("transfer.dispatched", shop.warehouse_id),
        ("transfer.received", shop.other_warehouse_id),
    ]
    # received twice: 409, nothing written
    r = await client.post(
        f"/stock-transfers/{t_id}/receive", json={}, headers=shop.other_key.headers
    )
    assert r.status_code == 409, r.text
    assert await stock(db, shop.other_warehouse_id, apple) == 23
    # both directions listed
    for key, direction in ((shop.key, "out"), (shop.other_key, "in")):
        r = await client.get("/stock-transfers", headers=key.headers)
        page = r.json()["data"]
        assert page["total"] == 1 and page["data"][0]["direction"] == direction


async def test_partial_receipt_writes_the_shortfall_off(
    client: httpx.AsyncClient, db: Database
) -> None:
    shop = await make_shop(db)
    apple, water = shop.products["apple"], shop.products["water"]
    r = await dispatch(
        client,
        shop,
        [{"product_id": apple, "quantity": 12}, {"product_id": str(water), "quantity": 3}],
    )
    assert r.status_code == 200, r.text
    t_id = r.json()["transfer_id"]
    sent = D(r.json()["data"]["value_sent"])
    assert sent == D("20.00")  # 10 @ 1.50 + 2 @ 2.00 + 3 @ 0.3333 (1.00)
    cogs = await gl(db, shop, "51100")
    r = await client.post(
        f"/stock-transfers/{t_id}/receive",
        json={"items": [{"product_id": xid.encode(apple), "quantity": "11.5"}],
              "reason": "one and a half broken"},
        headers=shop.other_key.headers,
    )  # fmt: skip
    assert r.status_code == 200, r.text
    data = r.json()["data"]
    # 10 @ 1.50 + 1.5 @ 2.00 arrived; the other half apple and the water did not
    assert data["value_received"] == "18.00" and data["value_short"] == "2.00"
    assert data["reason"] == "one and a half broken"
    assert await gl(db, shop, "51100") - cogs == D("2.00")
    assert await stock(db, shop.other_warehouse_id, apple) == D("11.5")
    assert await stock(db, shop.other_warehouse_id, water) == 0
    assert await gl(db, shop, "11750") == 0
    await check_books(db, shop.company_id)


async def test_cancel_returns_the_stock_at_cost(client: httpx.AsyncClient, db: Database) -> None:
    shop = await make_shop(db)
    apple = shop.products["apple"]
    value_before = await gl(db, shop, "11700", shop.warehouse_id)
    r = await dispatch(client, shop, [{"product_id": apple, "quantity": 15}])
    t_id = r.json()["transfer_id"]
    # the receiver cannot cancel, the sender cannot receive
    r = await client.post(
        f"/stock-transfers/{t_id}/cancel", json={}, headers=shop.other_key.headers
    )
    assert r.status_code == 422, r.text
    r = await client.post(f"/stock-transfers/{t_id}/receive", json={}, headers=shop.headers)
    assert r.status_code == 422, r.text
    r = await client.post(
        f"/stock-transfers/{t_id}/cancel", json={"reason": "van broke down"}, headers=shop.headers
    )
    assert r.status_code == 200, r.text
    assert r.json()["transfer_status"] == "cancelled"
    assert await stock(db, shop.warehouse_id, apple) == 20
    assert await gl(db, shop, "11700", shop.warehouse_id) == value_before
    assert await gl(db, shop, "11750") == 0
    cogs = await gl(db, shop, "51100")
    # the units came back as new batches at the cost they left with (behind the 5
    # that stayed): 5 @ 2.00, then 5 of the returned 1.50 ones
    r = await client.post(
        "/sales",
        json={"user_id": shop.customer_id, "order_date": dt.date.today().isoformat(),
              "product_items": [{"xid": shop.xid("apple"), "quantity": 10, "unit_price": "3.50"}]},
        headers=shop.headers,
    )  # fmt: skip
    assert r.status_code == 200, r.text
    assert await gl(db, shop, "51100") - cogs == D("17.50")
    r = await client.post(
        f"/stock-transfers/{t_id}/receive", json={}, headers=shop.other_key.headers
    )
    assert r.status_code == 409, r.text
    await check_books(db, shop.company_id)


async def _third_key(db: Database, shop: Shop) -> Key:
    async def build(uow: UnitOfWork) -> Key:
        wh = await tenancy.create_warehouse(uow.session, shop.company_id, f"Third {uuid.uuid4()}")
        k = await tenancy.create_api_key(uow.session, wh.id, "till 3", rate_limit="1000/minute")
        return Key(k.key.public_key, k.secret_key, k.hmac_secret, wh.id)

    return await db.unit(build)


async def test_only_the_two_warehouses_see_it_and_bad_input(
    client: httpx.AsyncClient, db: Database
) -> None:
    shop = await make_shop(db)
    stranger = await make_shop(db)
    third = await _third_key(db, shop)
    apple = shop.products["apple"]
    r = await dispatch(client, shop, [{"product_id": apple, "quantity": 1}])
    t_id = r.json()["transfer_id"]
    for key in (third, stranger.key):
        assert (
            await client.get(f"/stock-transfers/{t_id}", headers=key.headers)
        ).status_code == 404
        r = await client.post(f"/stock-transfers/{t_id}/receive", json={}, headers=key.headers)
        assert r.status_code == 404, r.text
        assert (await client.get("/stock-transfers", headers=key.headers)).json()["data"][
            "total"
        ] == 0

    def body(**over: Any) -> dict[str, Any]:
        base: dict[str, Any] = {
            "to_warehouse_id": shop.other_warehouse_id,
            "items": [{"product_id": apple, "quantity": 1}],
        }
        return {**base, **over}

    cases: list[tuple[dict[str, Any], str]] = [
        (body(to_warehouse_id=shop.warehouse_id), "to_warehouse_id"),
        (body(to_warehouse_id=stranger.warehouse_id), "to_warehouse_id"),
        (body(to_warehouse_id="nope"), "to_warehouse_id"),
        (body(items=[]), "items"),
        (body(items=[{"product_id": "nope", "quantity": 1}]), "items.0.product_id"),
        (body(items=[{"product_id": stranger.products["apple"], "quantity": 1}]),
         "items.0.product_id"),
        (body(items=[{"product_id": apple, "quantity": 1}, {"product_id": apple, "quantity": 1}]),
         "items.1.product_id"),
        (body(items=[{"product_id": apple, "quantity": 0}]), "items.0.quantity"),
        (body(items=[{"product_id": apple, "quantity": "1.00001"}]), "items.0.quantity"),
        (body(items=[{"product_id": apple, "quantity": 1000}]), "items.0.quantity"),
        (body(notes="a\x00b"), "notes"),
    ]  # fmt: skip
    for sent, field in cases:
        r = await client.post("/stock-transfers", json=sent, headers=shop.headers)
        assert r.status_code == 422, (sent, r.text)
        assert field in r.json()["errors"], (field, r.text)
    for sent, field in [
        ({"items": [{"product_id": apple, "quantity": 2}]}, "items.0.quantity"),
        ({"items": [{"product_id": shop.products["water"], "quantity": 1}]}, "items.0.product_id"),
        ({"items": [{"product_id": apple, "quantity": -1}]}, "items.0.quantity"),
        ({"reason": "\x00"}, "reason"),
    ]:
        r = await client.post(
            f"/stock-transfers/{t_id}/receive", json=sent, headers=shop.other_key.headers
        )
        assert r.status_code == 422, (sent, r.text)
        assert field in r.json()["errors"], (field, r.text)
    r = await client.get("/stock-transfers?status=lost", headers=shop.headers)
    assert r.status_code == 422 and "status" in r.json()["errors"]
    # nothing of that was written: one transfer, still on the road
    assert (await client.get("/stock-transfers", headers=shop.headers)).json()["data"]["total"] == 1
    assert await gl(db, shop, "11750") == D("1.50")
    await check_books(db, shop.company_id)


async def test_idempotent_dispatch(client: httpx.AsyncClient, db: Database) -> None:
    shop = await make_shop(db)
    headers = {**shop.headers, "Idempotency-Key": "trf-1"}
    body = {"to_warehouse_id": shop.other_warehouse_id,
            "items": [{"product_id": shop.products["apple"], "quantity": 2}]}  # fmt: skip
    first = await client.post("/stock-transfers", json=body, headers=headers)
    again = await client.post("/stock-transfers", json=body, headers=headers)
    assert first.status_code == again.status_code == 200
    assert again.headers.get("Idempotent-Replayed") == "true"
    assert first.json() == again.json()
    assert await stock(db, shop.warehouse_id, shop.products["apple"]) == 18
    await check_books(db, shop.company_id)


async def test_two_receipts_at_once(client: httpx.AsyncClient, db: Database) -> None:
    shop = await make_shop(db)
    r = await dispatch(client, shop, [{"product_id": shop.products["apple"], "quantity": 5}])
    t_id = r.json()["transfer_id"]
    answers = await asyncio.gather(
        *(
            client.post(
                f"/stock-transfers/{t_id}/receive",
                json={"reason": f"till {i}"},
                headers=shop.other_key.headers,
            )
            for i in range(2)
        ),
        client.post(f"/stock-transfers/{t_id}/cancel", json={}, headers=shop.headers),
    )
    codes = sorted(a.status_code for a in answers)
    assert codes == [200, 409, 409], [a.text for a in answers]
    total = (await stock(db, shop.warehouse_id, shop.products["apple"]) or D(0)) + (
        await stock(db, shop.other_warehouse_id, shop.products["apple"]) or D(0)
    )
    assert total == 20
    await check_books(db, shop.company_id)
