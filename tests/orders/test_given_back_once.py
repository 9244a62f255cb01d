"""Nothing is given back twice: every pair of operations that hands goods or money
back (a void, a return, a refund tender, a transfer's receipt or cancel), in either
order and racing each other, gives it back once (issue 22, item 1).

The books' own invariants (tests/invariants.py, section 6) say the same after every
scenario: Σ refunded on a sale ≤ what was paid for it, Σ returned ≤ sold less voided,
per line.
"""

from __future__ import annotations

import asyncio
from decimal import Decimal
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from tests.factories import Shop, by_id, make_shop
from tests.invariants import check_books
from tillbook.db import Database
from tillbook.models import Listing, Order, Payment, StockMovement

D = Decimal


def sale_body(shop: Shop, qty: int = 4, paid: str | None = "14.00") -> dict[str, Any]:
    body: dict[str, Any] = {
        "user_id": shop.customer_id,
        "order_date": "2026-11-20",
        "product_items": [{"xid": shop.xid("apple"), "quantity": qty, "unit_price": "3.50"}],
    }
    if paid is not None:
        body["all_payments"] = [{"amount": paid, "payment_mode_id": "cash"}]
    return body


def return_body(
    shop: Shop, invoice: str | int, qty: int = 4, refund: str | None = "14.00"
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "user_id": shop.customer_id,
        "order_date": "2026-11-21",
        "invoice_number": str(invoice),
        "items": [{"product_id": shop.xid("apple"), "quantity": qty, "unit_price": "3.50"}],
    }
    if refund is not None:
        body["all_payments"] = [{"amount": refund, "payment_mode_id": "cash"}]
    return body


async def sell(client: httpx.AsyncClient, shop: Shop, **kw: Any) -> dict[str, Any]:
    r = await client.post("/sales", json=sale_body(shop, **kw), headers=shop.headers)
    assert r.status_code == 200, r.text
    return dict(r.json())


async def snapshot(db: Database, shop: Shop) -> tuple[Any, ...]:
    """What a refused operation must leave untouched: orders, payments, movements and
    the apple's stock."""

    async def read(s: Any) -> tuple[Any, ...]:
        def count(model: Any) -> Any:
            return s.scalar(
                select(func.count()).select_from(model).where(model.company_id == shop.company_id)
            )

        return (
            await count(Order),
            await count(Payment),
            await count(StockMovement),
            await s.scalar(
                select(Listing.current_stock).where(
                    Listing.product_id == shop.products["apple"],
                    Listing.warehouse_id == shop.warehouse_id,
                )
            ),
        )

    return await db.read(read)


@pytest.mark.parametrize(
    "by, qty",
    [("invoice_number", 4), ("invoice_number", 1), ("id", 4), ("id", 2)],
)
async def test_a_voided_sale_takes_no_return(
    client: httpx.AsyncClient, shop: Shop, db: Database, by: str, qty: int
) -> None:
    sale = await sell(client, shop)
    r = await client.post(
        f"/sales/{sale['order_id']}/void", json={"reason": "rung twice"}, headers=shop.headers
    )
    assert r.status_code == 200, r.text
    before = await snapshot(db, shop)
    ref = sale["invoice_number"] if by == "invoice_number" else sale["order_id"]
    for refund in ("14.00", None):  # cash back, or credited to the customer's account
        body = return_body(shop, ref, qty, refund=None if refund is None else f"{3.5 * qty:.2f}")
        r = await client.post("/sales-returns", json=body, headers=shop.headers)
        assert r.status_code == 422, r.text
        errors = r.json()["errors"]
        assert "invoice_number" in errors, errors
        assert sale["invoice_number"] in errors["invoice_number"][0]
        assert "voided" in errors["invoice_number"][0]
    assert await snapshot(db, shop) == before
    await check_books(db, shop.company_id)


async def test_a_returned_sale_takes_no_void(
    client: httpx.AsyncClient, shop: Shop, db: Database
) -> None:
    sale = await sell(client, shop)
    r = await client.post(
        "/sales-returns",
        json=return_body(shop, sale["invoice_number"], 1, "3.50"),
        headers=shop.headers,
    )
    assert r.status_code == 200, r.text
    before = await snapshot(db, shop)
    r = await client.post(
        f"/sales/{sale['order_id']}/void", json={"reason": "x"}, headers=shop.headers
    )
    assert r.status_code == 422 and "order_id" in r.json()["errors"], r.text
    assert await snapshot(db, shop) == before
    await check_books(db, shop.company_id)


async def test_refunds_never_exceed_what_was_paid(
    client: httpx.AsyncClient, shop: Shop, db: Database
) -> None:
    # On account: nothing was paid, so nothing can be paid back in cash; the return
    # is credited against what is owed instead.
    on_account = await sell(client, shop, paid=None)
    before = await snapshot(db, shop)
    r = await client.post(
        "/sales-returns",
        json=return_body(shop, on_account["invoice_number"], 2, "7.00"),
        headers=shop.headers,
    )
    assert r.status_code == 422 and "all_payments" in r.json()["errors"], r.text
    assert await snapshot(db, shop) == before
    r = await client.post(
        "/sales-returns",
        json=return_body(shop, on_account["invoice_number"], 2, None),
        headers=shop.headers,
    )
    assert r.status_code == 200, r.text

    # Partly paid (10.00 of 14.00): two returns may pay back 10.00 between them, no more.
    partly = await sell(client, shop, paid="10.00")
    first = await client.post(
        "/sales-returns",
        json=return_body(shop, partly["invoice_number"], 2, "7.00"),
        headers=shop.headers,
    )
    assert first.status_code == 200, first.text
    before = await snapshot(db, shop)
    second = await client.post(
        "/sales-returns",
        json=return_body(shop, partly["invoice_number"], 2, "7.00"),
        headers=shop.headers,
    )
    assert second.status_code == 422, second.text
    assert "3.00" in second.json()["errors"]["all_payments"][0]
    assert await snapshot(db, shop) == before
    rest = await client.post(
        "/sales-returns",
        json=return_body(shop, partly["invoice_number"], 2, "3.00"),
        headers=shop.headers,
    )
    assert rest.status_code == 200, rest.text
    order = await db.read(lambda s: by_id(s, Order, partly["order_id"]))
    assert order.due_amount == D("0.00")
    await check_books(db, shop.company_id)


async def test_void_and_return_racing_one_wins(
    client: httpx.AsyncClient, db: Database, backend: str
) -> None:
    rounds = 6 if backend == "postgresql" else 2
    for _ in range(rounds):
        shop = await make_shop(db)
        sale = await sell(client, shop)
        void, ret = await asyncio.gather(
            client.post(
                f"/sales/{sale['order_id']}/void", json={"reason": "x"}, headers=shop.headers
            ),
            client.post(
                "/sales-returns",
                json=return_body(shop, sale["invoice_number"], 4, "14.00"),
                headers=shop.headers,
            ),
        )
        won = [r for r in (void, ret) if r.status_code == 200]
        assert len(won) == 1, (void.text, ret.text)
        assert all(r.status_code == 422 for r in (void, ret) if r not in won)
        refunds = await db.read(
            lambda s, sh=shop: s.scalar(
                select(func.coalesce(func.sum(Payment.amount), 0)).where(
                    Payment.company_id == sh.company_id, Payment.payment_type == "out"
                )
            )
        )
        assert D(refunds) == D("14.00")
        stock = await db.read(
            lambda s, sh=shop: s.scalar(
                select(Listing.current_stock).where(
                    Listing.product_id == sh.products["apple"],
                    Listing.warehouse_id == sh.warehouse_id,
                )
            )
        )
        assert stock == D("20")  # the four apples came back once
        await check_books(db, shop.company_id)


async def test_two_returns_racing_for_the_last_units(
    client: httpx.AsyncClient, db: Database, backend: str
) -> None:
    rounds = 4 if backend == "postgresql" else 1
    for _ in range(rounds):
        shop = await make_shop(db)
        sale = await sell(client, shop)
        answers = await asyncio.gather(
            *(
                client.post(
                    "/sales-returns",
                    json=return_body(shop, sale["invoice_number"], 3, "10.50"),
                    headers=shop.headers,
                )
                for _ in range(3)
            )
        )
        assert sorted(a.status_code for a in answers) == [200, 422, 422], [a.text for a in answers]
        await check_books(db, shop.company_id)


async def test_two_voids_racing_one_wins(
    client: httpx.AsyncClient, db: Database, backend: str
) -> None:
    shop = await make_shop(db)
    sale = await sell(client, shop)
    answers = await asyncio.gather(
        *(
            client.post(
                f"/sales/{sale['order_id']}/void", json={"reason": "x"}, headers=shop.headers
            )
            for _ in range(3)
        )
    )
    assert sorted(a.status_code for a in answers) == [200, 409, 409], [a.text for a in answers]
    await check_books(db, shop.company_id)


async def test_a_transfer_is_received_or_cancelled_once(
    client: httpx.AsyncClient, db: Database, backend: str
) -> None:
    rounds = 4 if backend == "postgresql" else 1
    for _ in range(rounds):
        shop = await make_shop(db)
        body = {
            "to_warehouse_id": shop.other_warehouse_id,
            "items": [{"product_id": shop.xid("apple"), "quantity": 3}],
        }
        r = await client.post("/stock-transfers", json=body, headers=shop.headers)
        assert r.status_code == 200, r.text
        t_id = r.json()["transfer_id"]
        answers = await asyncio.gather(
            client.post(
                f"/stock-transfers/{t_id}/receive", json={}, headers=shop.other_key.headers
            ),
            client.post(f"/stock-transfers/{t_id}/cancel", json={}, headers=shop.headers),
            client.post(
                f"/stock-transfers/{t_id}/receive", json={}, headers=shop.other_key.headers
            ),
        )
        codes = sorted(a.status_code for a in answers)
        assert codes == [200, 409, 409], [a.text for a in answers]
        await check_books(db, shop.company_id)
