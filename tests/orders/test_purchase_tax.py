"""Tax on purchases: a line may name the tax the supplier charged. The stock takes
the cost net of it (Dr 11700), the tax is recoverable (Dr 11800 Input Tax
Recoverable), the supplier is owed the gross (Cr 21100); a purchase return of
taxed units takes their tax back out of 11800. Through the public API, a receipt
against a purchase order and the back office's delivery form; bad tax ids are a
422 naming the line's field with nothing written; the exported journal still
loads in beancount."""

from __future__ import annotations

from decimal import Decimal

import httpx
import pytest
from sqlalchemy import func, select

from tests.admin_helpers import ADMIN, assert_error, login
from tests.factories import Shop, make_shop
from tests.invariants import check_books, gl_balance
from tests.web_helpers import OWNER_PASSWORD, csrf_of, form_token_of, owner_email, sign_in
from tillbook.db import Database
from tillbook.models import JournalEntry, Order, OrderItem, StockBatch, User

D = Decimal
OPENING = D("80.83")  # the factory's opening stock, both branches


async def gl(db: Database, shop: Shop, code: str) -> Decimal:
    return await db.read(lambda s: gl_balance(s, shop.company_id, code))


async def written(db: Database, shop: Shop) -> tuple[int, int]:
    """(orders, journal entries) of the company: what a refused request must not move."""

    async def count(s):
        orders = await s.scalar(
            select(func.count()).select_from(Order).where(Order.company_id == shop.company_id)
        )
        entries = await s.scalar(
            select(func.count())
            .select_from(JournalEntry)
            .where(JournalEntry.company_id == shop.company_id)
        )
        return int(orders), int(entries)

    return await db.read(count)


async def batch_costs(db: Database, shop: Shop, order_id: int) -> dict[int, Decimal]:
    rows = await db.read(
        lambda s: s.execute(
            select(StockBatch.product_id, StockBatch.unit_cost).where(
                StockBatch.source_type == "purchase", StockBatch.source_id == order_id
            )
        )
    )
    return {pid: D(cost) for pid, cost in rows.all()}


def taxed_purchase(shop: Shop, **extra) -> dict:
    return {
        "user_id": shop.supplier_id,
        "order_date": "2026-11-20",
        "invoice_number": "SUP-TAX-1",
        "product_items": [
            # 3 × 4.35 = 13.05 net, 10% added: 1.305 -> 1.31, gross 14.36
            {"xid": shop.xid("tea"), "quantity": 3, "unit_price": "4.35", "tax_id": shop.tax10_id},
            # 2 × 6.00 = 12.00 gross, 20% included: 2.00 tax, 10.00 net
            {
                "xid": shop.xid("apple"),
                "quantity": 2,
                "unit_price": "6.00",
                "tax_id": shop.tax_incl_id,
            },
            # no tax: as before
            {"xid": shop.xid("water"), "quantity": 5, "unit_price": "0.50"},
        ],
        **extra,
    }


async def test_a_taxed_purchase_posts_net_cost_input_tax_and_gross_payable(client, db, shop):
    body = taxed_purchase(shop, all_payments=[{"amount": "10", "payment_mode_id": "cash"}])
    r = await client.post("/purchases", json=body, headers=shop.headers)
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["total"] == "28.86" and out["tax_amount"] == "3.31"
    assert out["due_amount"] == "18.86" and out["payment_status"] == "partially_paid"

    assert await gl(db, shop, "11700") == OPENING + D("25.55")  # 13.05 + 10.00 + 2.50
    assert await gl(db, shop, "11800") == D("3.31")
    assert await gl(db, shop, "21100") == D("-18.86")  # 28.86 owed, 10.00 paid
    assert await gl(db, shop, "11101") == D("-10.00")
    # the batches at the cost net of tax
    costs = await batch_costs(db, shop, out["purchase_id"])
    assert costs == {
        shop.products["tea"]: D("4.35"),
        shop.products["apple"]: D("5.00"),
        shop.products["water"]: D("0.50"),
    }

    got = await client.get(f"/purchases/{out['purchase_id']}", headers=shop.headers)
    data = got.json()["data"]
    assert data["subtotal"] == "25.55" and data["tax_amount"] == "3.31"
    assert data["total"] == "28.86"
    lines = {i["product_id"]: i for i in data["items"]}
    tea = lines[shop.products["tea"]]
    assert (tea["tax_rate"], tea["tax_amount"], tea["subtotal"], tea["total"]) == (
        10,
        "1.31",
        "13.05",
        "14.36",
    )
    apple = lines[shop.products["apple"]]
    assert (apple["tax_amount"], apple["subtotal"], apple["total"]) == ("2.00", "10.00", "12.00")
    water = lines[shop.products["water"]]
    assert (water["tax_rate"], water["tax_amount"], water["total"]) == (0, "0.00", "2.50")

    # the supplier's balance is the gross still owed
    owed = await db.read(
        lambda s: s.scalar(select(User.balance).where(User.id == shop.supplier_id))
    )
    assert D(owed) == D("18.86")
    await check_books(db, shop.company_id)


async def test_returns_of_a_taxed_purchase_take_back_its_tax(client, db, shop):
    r = await client.post("/purchases", json=taxed_purchase(shop), headers=shop.headers)
    assert r.status_code == 200, r.text
    assert await gl(db, shop, "21100") == D("-28.86")

    def ret(items, n):
        return {
            "user_id": shop.supplier_id,
            "order_date": "2026-11-21",
            "invoice_number": "SUP-TAX-1",
            "items": items,
            "unique_id": f"ret-{n}",
        }

    tea = shop.products["tea"]
    # 1 of 3 tea at the price paid: the line's tax pro rata, 1.31 / 3 -> 0.44
    one = await client.post(
        "/purchase-returns",
        json=ret([{"product_id": tea, "quantity": 1, "unit_price": "4.35"}], 1),
        headers=shop.headers,
    )
    assert one.status_code == 200, one.text
    assert one.json()["total"] == "4.79" and one.json()["tax_amount"] == "0.44"
    assert await gl(db, shop, "11800") == D("2.87")
    assert await gl(db, shop, "21100") == D("-24.07")  # 28.86 − 4.79
    assert await gl(db, shop, "51200") == D("0.00")  # credit 4.35 net = FIFO cost 4.35
    await check_books(db, shop.company_id)

    # the other 2 at an agreed lower price: 10% of 8.00 = 0.80 back (not the 0.87 left)
    two = await client.post(
        "/purchase-returns",
        json=ret([{"product_id": tea, "quantity": 2, "unit_price": "4.00"}], 2),
        headers=shop.headers,
    )
    assert two.status_code == 200, two.text
    assert two.json()["total"] == "8.80" and two.json()["tax_amount"] == "0.80"
    assert await gl(db, shop, "11800") == D("2.07")
    assert await gl(db, shop, "21100") == D("-15.27")
    # net credit 8.00 against a cost of 8.70: 0.70 more cost, Dr 51200
    assert await gl(db, shop, "51200") == D("0.70")
    await check_books(db, shop.company_id)

    # 1 of 2 apples at the inclusive price: 6.00 back, of which 1.00 tax; FIFO takes the
    # oldest apple batch (1.50), so 5.00 − 1.50 = 3.50 goes to 51200 (credit)
    apple = await client.post(
        "/purchase-returns",
        json=ret([{"product_id": shop.products["apple"], "quantity": 1, "unit_price": "6"}], 3),
        headers=shop.headers,
    )
    assert apple.status_code == 200, apple.text
    assert apple.json()["total"] == "6.00" and apple.json()["tax_amount"] == "1.00"
    assert await gl(db, shop, "11800") == D("1.07")
    assert await gl(db, shop, "51200") == D("-2.80")  # 0.70 − 3.50
    assert await gl(db, shop, "21100") == D("-9.27")

    # a return without the invoice is at the agreed price, without tax (as before)
    plain = await client.post(
        "/purchase-returns",
        json={
            "user_id": shop.supplier_id,
            "order_date": "2026-11-21",
            "items": [{"product_id": shop.products["water"], "quantity": 1, "unit_price": "0.5"}],
        },
        headers=shop.headers,
    )
    assert plain.status_code == 200, plain.text
    assert plain.json()["tax_amount"] == "0.00" and plain.json()["total"] == "0.50"
    assert await gl(db, shop, "11800") == D("1.07")
    await check_books(db, shop.company_id)


async def test_a_full_return_leaves_no_input_tax_of_the_line(client, db, shop):
    body = {
        "user_id": shop.supplier_id,
        "order_date": "2026-11-20",
        "invoice_number": "SUP-3",
        "product_items": [
            {"xid": shop.xid("tea"), "quantity": 3, "unit_price": "3.33", "tax_id": shop.tax10_id}
        ],
    }
    r = await client.post("/purchases", json=body, headers=shop.headers)
    assert r.status_code == 200, r.text
    assert r.json()["tax_amount"] == "1.00"  # 9.99 × 10% = 0.999 -> 1.00
    # one unit at a time, cumulatively pro rata: 0.33, 0.67 − 0.33, 1.00 − 0.67
    for n, tax in enumerate(("0.33", "0.34", "0.33")):
        back = await client.post(
            "/purchase-returns",
            json={
                "user_id": shop.supplier_id,
                "order_date": "2026-11-21",
                "invoice_number": "SUP-3",
                "items": [
                    {"product_id": shop.products["tea"], "quantity": 1, "unit_price": "3.33"}
                ],
                "unique_id": f"unit-{n}",
            },
            headers=shop.headers,
        )
        assert back.status_code == 200, back.text
        assert back.json()["tax_amount"] == tax
    assert await gl(db, shop, "11800") == D("0.00")
    assert await gl(db, shop, "21100") == D("0.00")
    assert await gl(db, shop, "51200") == D("0.00")
    await check_books(db, shop.company_id)


async def test_bad_tax_ids_name_the_line_and_write_nothing(client, db, shop):
    other = await make_shop(db)
    before = await written(db, shop)
    cases = [
        ("nope", "unknown tax"),
        (999_999_999, "unknown tax"),
        (other.tax10_id, "unknown tax"),  # another company's tax is not ours
    ]
    for bad, said in cases:
        body = taxed_purchase(shop)
        body["product_items"][0]["tax_id"] = bad
        r = await client.post("/purchases", json=body, headers=shop.headers)
        err = assert_error(r, 422, "product_items.0.tax_id")
        assert said in " ".join(err["errors"]["product_items.0.tax_id"]), err
    wrong_type = taxed_purchase(shop)
    wrong_type["product_items"][1]["tax_id"] = {"id": 1}
    assert_error(
        await client.post("/purchases", json=wrong_type, headers=shop.headers),
        422,
        "product_items.1.tax_id",
    )
    assert await written(db, shop) == before
    assert await gl(db, shop, "11800") == D("0.00")
    await check_books(db, shop.company_id)


async def test_a_receipt_against_a_purchase_order_takes_tax_per_line(client, db, shop):
    headers = await login(client, db, shop)
    po = f"{ADMIN}/purchase-orders"
    created = await client.post(
        po,
        json={
            "warehouse_id": shop.warehouse_id,
            "supplier_id": shop.supplier_id,
            "lines": [{"product_id": shop.products["tea"], "quantity": "4", "unit_cost": "5.00"}],
        },
        headers=headers,
    )
    assert created.status_code == 201, created.text
    oid = created.json()["data"]["id"]
    assert (await client.post(f"{po}/{oid}/order", headers=headers)).status_code == 200
    before = await written(db, shop)
    bad = await client.post(
        f"{po}/{oid}/receipts",
        json={
            "order_date": "2026-11-20",
            "lines": [{"product_id": shop.products["tea"], "quantity": "2", "tax_id": "zz"}],
        },
        headers=headers,
    )
    assert_error(bad, 422, "lines.0.tax_id")
    assert await written(db, shop) == before
    got = await client.post(
        f"{po}/{oid}/receipts",
        json={
            "order_date": "2026-11-20",
            "lines": [
                {"product_id": shop.products["tea"], "quantity": "2", "tax_id": shop.tax10_id}
            ],
        },
        headers=headers,
    )
    assert got.status_code == 201, got.text
    purchase = got.json()["purchase"]
    assert purchase["total"] == "11.00" and purchase["tax_amount"] == "1.00"
    assert await gl(db, shop, "11800") == D("1.00")
    assert await gl(db, shop, "21100") == D("-11.00")
    assert await batch_costs(db, shop, purchase["purchase_id"]) == {shop.products["tea"]: D("5.00")}
    await check_books(db, shop.company_id)


# --- the back office's delivery form ---------------------------------------------------


async def test_the_delivery_form_takes_a_tax_per_line(web, db, shop):
    other = await make_shop(db)
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    tea = shop.products["tea"]
    page = await web.get("/purchases/new")
    assert page.status_code == 200
    assert f'name="tax-{tea}"' in page.text and "VAT 10% (10%, added)" in page.text
    base = {
        "warehouse_id": str(shop.warehouse_id),
        "user_id": str(shop.supplier_id),
        f"qty-{tea}": "3",
        f"cost-{tea}": "4.35",
    }

    async def send(extra: dict) -> httpx.Response:
        page = await web.get("/purchases/new")
        form = {"csrf": csrf_of(page.text), "form_token": form_token_of(page.text)}
        return await web.post("/purchases/new", data={**form, **base, **extra})

    before = await written(db, shop)
    for bad in ("x", str(other.tax10_id)):
        r = await send({f"tax-{tea}": bad})
        assert r.status_code == 422 and f'id="e-tax-{tea}"' in r.text, r.text
    assert await written(db, shop) == before
    done = await send({f"tax-{tea}": str(shop.tax10_id)})
    assert done.status_code == 303, done.text
    oid = int(done.headers["location"].rsplit("/", 1)[1])
    item = await db.read(lambda s: s.scalar(select(OrderItem).where(OrderItem.order_id == oid)))
    assert (item.subtotal, item.tax_amount, item.total) == (D("13.05"), D("1.31"), D("14.36"))
    assert await gl(db, shop, "11800") == D("1.31")
    shown = await web.get(f"/purchases/{oid}")
    assert shown.status_code == 200 and "1.31" in shown.text and "14.36" in shown.text
    await check_books(db, shop.company_id)


async def test_the_exported_journal_with_input_tax_passes_beancount(client, db, shop):
    loader = pytest.importorskip("beancount.loader")
    from tests.reports.test_journal_export import collect

    r = await client.post("/purchases", json=taxed_purchase(shop), headers=shop.headers)
    assert r.status_code == 200, r.text
    back = await client.post(
        "/purchase-returns",
        json={
            "user_id": shop.supplier_id,
            "order_date": "2026-11-21",
            "invoice_number": "SUP-TAX-1",
            "items": [{"product_id": shop.products["tea"], "quantity": 1, "unit_price": "4.35"}],
        },
        headers=shop.headers,
    )
    assert back.status_code == 200, back.text
    text = await collect(db, shop.company_id, "beancount")
    assert "Assets:11800-Input-Tax-Recoverable" in text
    _entries, errors, _options = loader.load_string(text)
    assert errors == [], errors
