"""Till shifts, the cash drawer and receipts (issue 16, parts 3 and 4)."""

from __future__ import annotations

import asyncio
from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy import func, select, update

from tests.factories import Shop, make_shop
from tests.invariants import check_books, gl_balance
from tests.written import snapshot
from tillbook.db import Database
from tillbook.models import Account, ExpenseCategory, Order, Warehouse

D = Decimal
DAY = "2026-11-20"


def sale(shop: Shop, qty: Any = 2, **extra: Any) -> dict[str, Any]:
    return {
        "user_id": shop.customer_id,
        "order_date": DAY,
        "product_items": [
            {"xid": shop.xid("apple"), "quantity": qty, "unit_price": "3.50",
             "tax_id": shop.tax10_id}
        ],
        **extra,
    }  # fmt: skip


async def category(db: Database, shop: Shop) -> int:
    return await db.read(
        lambda s: s.scalar(
            select(ExpenseCategory.id).where(
                ExpenseCategory.company_id == shop.company_id,
                ExpenseCategory.name == "General Expenses",
            )
        )
    )


async def bank_mode(client: Any, shop: Shop) -> int:
    modes = (await client.get("/payment-modes", headers=shop.headers)).json()["data"]
    return next(m["id"] for m in modes if m["code"] not in ("cash",))


async def test_a_shift_from_float_to_z(client, shop, db) -> None:
    cash_before = await db.read(lambda s: gl_balance(s, shop.company_id, "11101"))
    r = await client.post(
        "/shifts", json={"opening_float": "100.00", "register": "till-1"}, headers=shop.headers
    )
    assert r.status_code == 200, r.text
    shift = r.json()["data"]
    assert shift["status"] == "open" and shift["report"] == "X"
    sid = shift["id"]
    # a second shift on the same register is refused
    again = await client.post("/shifts", json={"register": "till-1"}, headers=shop.headers)
    assert again.status_code == 409, again.text

    # two sales (cash, cash + card) and a credit sale; one cash sale voided; a return
    tendered = [
        [{"amount": "7.70", "payment_mode_id": "cash"}],
        [{"amount": "5.00", "payment_mode_id": "cash"},
         {"amount": "2.70", "payment_mode_id": "card"}],
        [],
    ]  # fmt: skip
    made = []
    for tenders in tendered:
        r = await client.post("/sales", json=sale(shop, all_payments=tenders), headers=shop.headers)
        assert r.status_code == 200, r.text
        made.append(r.json())
    detail = (await client.get(f"/sales/{made[0]['order_id']}", headers=shop.headers)).json()
    assert detail["data"]["shift_id"] == sid
    r = await client.post(
        f"/sales/{made[0]['order_id']}/void", json={"reason": "mistake"}, headers=shop.headers
    )
    assert r.status_code == 200, r.text
    r = await client.post(
        "/sales-returns",
        json={
            "user_id": shop.customer_id,
            "order_date": DAY,
            "invoice_number": made[1]["invoice_number"],
            "items": [{"product_id": shop.products["apple"], "quantity": 1, "unit_price": "3.50"}],
            "all_payments": [{"amount": "3.85", "payment_mode_id": "cash"}],
        },
        headers=shop.headers,
    )
    assert r.status_code == 200, r.text
    # petty cash out to an expense, a float top-up from the bank, a drop to the bank
    bank = await bank_mode(client, shop)
    for body in (
        {"direction": "out", "amount": "4.00", "reason": "milk", "expense_category_id":
         await category(db, shop)},
        {"direction": "in", "amount": "50.00", "reason": "float", "payment_mode_id": bank},
        {"direction": "out", "amount": "20.00", "reason": "drop", "payment_mode_id": bank},
    ):  # fmt: skip
        r = await client.post(f"/shifts/{sid}/cash", json=body, headers=shop.headers)
        assert r.status_code == 200, r.text
    x = (await client.get(f"/shifts/{sid}", headers=shop.headers)).json()["data"]
    assert x["report"] == "X"
    assert x["sales"]["count"] == 2 and x["voids"]["count"] == 1 and x["returns"]["count"] == 1
    expected = {row["code"]: row["expected"] for row in x["expected"]}
    # cash: 100 float + 7.70 + 5.00 − 7.70 void − 3.85 refund − 4 + 50 − 20
    assert expected["cash"] == "127.15", x
    assert expected["card"] == "2.70"
    assert [(t["rate"], t["net"], t["tax"]) for t in x["tax_by_rate"]] == [(10, "10.50", "1.05")]

    # close: the cash is 0.15 short, the card batch as expected
    r = await client.post(
        f"/shifts/{sid}/close",
        json={"counted": [{"payment_mode_id": "cash", "amount": "127.00"},
                          {"payment_mode_id": "card", "amount": "2.70"}]},
        headers=shop.headers,
    )  # fmt: skip
    assert r.status_code == 200, r.text
    z = r.json()["data"]
    assert z["report"] == "Z" and z["status"] == "closed" and z["over_short"] == "-0.15"
    assert await db.read(lambda s: gl_balance(s, shop.company_id, "52500")) == D("0.15")
    # the drawer's account moved by what was posted: every cash sale, refund, void,
    # petty cash, top-up and drop, and the shortage
    cash_after = await db.read(lambda s: gl_balance(s, shop.company_id, "11101"))
    assert cash_after - cash_before == D("127.00") - D("100.00")
    # closing twice, cash after the close: refused, nothing written
    before = await snapshot(db, shop)
    close = {"counted": [{"payment_mode_id": "cash", "amount": "127.00"}]}
    assert (
        await client.post(f"/shifts/{sid}/close", json=close, headers=shop.headers)
    ).status_code == 409
    r = await client.post(
        f"/shifts/{sid}/cash",
        json={"direction": "in", "amount": "1.00", "reason": "x", "payment_mode_id": bank},
        headers=shop.headers,
    )
    assert r.status_code == 409
    assert await snapshot(db, shop) == before
    # a sale now carries no shift
    r = await client.post("/sales", json=sale(shop), headers=shop.headers)
    detail = (await client.get(f"/sales/{r.json()['order_id']}", headers=shop.headers)).json()
    assert detail["data"]["shift_id"] is None
    await check_books(db, shop.company_id)


async def test_a_warehouse_may_require_a_shift(client, shop, db) -> None:
    await db.write(
        lambda s: s.execute(
            update(Warehouse).where(Warehouse.id == shop.warehouse_id).values(require_shift=True)
        )
    )
    before = await snapshot(db, shop)
    r = await client.post("/sales", json=sale(shop), headers=shop.headers)
    assert r.status_code == 422 and "shift_id" in r.json()["errors"], r.text
    assert await snapshot(db, shop) == before
    sid = (await client.post("/shifts", json={}, headers=shop.headers)).json()["data"]["id"]
    r = await client.post("/sales", json=sale(shop, shift_id=sid), headers=shop.headers)
    assert r.status_code == 200, r.text
    r = await client.post("/sales", json=sale(shop, shift_id=sid + 1000), headers=shop.headers)
    assert r.status_code == 422 and "shift_id" in r.json()["errors"], r.text
    await check_books(db, shop.company_id)


async def test_two_tills_closing_one_shift(client, db) -> None:
    for _ in range(3):
        shop = await make_shop(db)
        sid = (
            await client.post("/shifts", json={"opening_float": "10.00"}, headers=shop.headers)
        ).json()["data"]["id"]
        await client.post(
            "/sales",
            json=sale(shop, all_payments=[{"amount": "7.70", "payment_mode_id": "cash"}]),
            headers=shop.headers,
        )
        close = {"counted": [{"payment_mode_id": "cash", "amount": "17.00"}]}
        a, b = await asyncio.gather(
            client.post(f"/shifts/{sid}/close", json=close, headers=shop.headers),
            client.post(f"/shifts/{sid}/close", json=close, headers=shop.headers),
        )
        assert sorted([a.status_code, b.status_code]) == [200, 409], (a.text, b.text)
        assert await db.read(lambda s, sh=shop: gl_balance(s, sh.company_id, "52500")) == D("0.70")
        await check_books(db, shop.company_id)


async def test_sales_racing_the_close_land_in_it_or_outside_it(client, db) -> None:
    shop = await make_shop(db)
    sid = (await client.post("/shifts", json={}, headers=shop.headers)).json()["data"]["id"]
    paid = sale(shop, all_payments=[{"amount": "7.70", "payment_mode_id": "cash"}])
    close = {"counted": [{"payment_mode_id": "cash", "amount": "0.00"}]}
    results = await asyncio.gather(
        *[client.post("/sales", json=paid, headers=shop.headers) for _ in range(4)],
        client.post(f"/shifts/{sid}/close", json=close, headers=shop.headers),
    )
    assert all(r.status_code == 200 for r in results), [r.text for r in results]
    z = results[-1].json()["data"]
    in_shift = await db.read(lambda s: s.scalar(select(func.count()).where(Order.shift_id == sid)))
    assert z["sales"]["count"] == in_shift
    expected = next(row for row in z["expected"] if row["code"] == "cash")
    assert D(expected["expected"]) == D("7.70") * in_shift
    await check_books(db, shop.company_id)


async def test_a_drawer_cannot_be_emptied_past_what_a_count_can_close(client, shop, db) -> None:
    """Cash out is refused beyond what the drawer holds, so no run of cash-outs can
    leave a shift whose close the books cannot hold."""
    opened = {"register": "main", "opening_float": "20"}
    sid = (await client.post("/shifts", json=opened, headers=shop.headers)).json()["data"]["id"]
    out = {"direction": "out", "reason": "to the bank", "payment_mode_id": "card"}
    for amount, status in (("9999999999999999.99", 422), ("12.50", 200), ("7.51", 422)):
        r = await client.post(
            f"/shifts/{sid}/cash", json={**out, "amount": amount}, headers=shop.headers
        )
        assert r.status_code == status, r.text
    r = await client.post(
        f"/shifts/{sid}/close",
        json={"counted": [{"payment_mode_id": "cash", "amount": "7.50"}]},
        headers=shop.headers,
    )
    assert r.status_code == 200, r.text
    await check_books(db, shop.company_id)


@pytest.mark.parametrize(
    ("path", "body", "status", "field"),
    [
        ("/shifts", {"opening_float": "1.001"}, 422, "opening_float"),
        ("/shifts", {"opening_float": "-1"}, 422, "opening_float"),
        ("/shifts", {"opening_float": "1e30"}, 422, "opening_float"),
        ("/shifts", {"register": "a\x00b"}, 422, "register"),
        ("/shifts", {"register": "   "}, 422, "register"),
        ("/shifts", {"register": "x" * 51}, 422, "register"),
        ("/shifts", {"cash_payment_mode_id": "nope"}, 422, "cash_payment_mode_id"),
        ("/shifts", {"notes": "a\x1bb"}, 422, "notes"),
        ("/shifts/{sid}/cash", {"direction": "sideways", "amount": "1", "reason": "r"}, 422,
         "direction"),
        ("/shifts/{sid}/cash", {"direction": "in", "amount": "0", "reason": "r",
                                "payment_mode_id": "card"}, 422, "amount"),
        ("/shifts/{sid}/cash", {"direction": "in", "amount": "1", "reason": "",
                                "payment_mode_id": "card"}, 422, "reason"),
        ("/shifts/{sid}/cash", {"direction": "in", "amount": "1", "reason": "r"}, 422,
         "payment_mode_id"),
        ("/shifts/{sid}/cash", {"direction": "in", "amount": "1", "reason": "r",
                                "payment_mode_id": "cash"}, 422, "payment_mode_id"),
        ("/shifts/{sid}/cash", {"direction": "out", "amount": "1", "reason": "r"}, 422,
         "expense_category_id"),
        ("/shifts/{sid}/cash", {"direction": "out", "amount": "1", "reason": "r",
                                "expense_category_id": 10**9}, 422, "expense_category_id"),
        ("/shifts/{sid}/cash", {"direction": "out", "amount": "99999999999999999", "reason": "r",
                                "payment_mode_id": "card"}, 422, "amount"),
        # more than the drawer holds (its float of 50.00)
        ("/shifts/{sid}/cash", {"direction": "out", "amount": "50.01", "reason": "r",
                                "payment_mode_id": "card"}, 422, "amount"),
        ("/shifts/{sid}/cash", {"direction": "in", "amount": "9999999999999999.99",
                                "reason": "r", "payment_mode_id": "card"}, 422, "amount"),
        ("/shifts/{sid}/close", {"counted": []}, 422, "counted"),
        ("/shifts/{sid}/close", {"counted": [{"payment_mode_id": "card", "amount": "1"}]}, 422,
         "counted"),
        ("/shifts/{sid}/close", {"counted": [{"payment_mode_id": "cash", "amount": "1.005"}]},
         422, "counted.0.amount"),
        ("/shifts/{sid}/close", {"counted": [{"payment_mode_id": "cash", "amount": "1"},
                                             {"payment_mode_id": "cash", "amount": "1"}]},
         422, "counted.1.payment_mode_id"),
        ("/shifts/{sid}/close", {"counted": [{"payment_mode_id": "nope", "amount": "1"}]}, 422,
         "counted.0.payment_mode_id"),
        ("/shifts/{other}/close", {"counted": [{"payment_mode_id": "cash", "amount": "1"}]},
         404, None),
        ("/shifts/999999999/cash", {"direction": "in", "amount": "1", "reason": "r",
                                    "payment_mode_id": "card"}, 404, None),
        ("/shifts/abc/close", {"counted": [{"payment_mode_id": "cash", "amount": "1"}]}, 404,
         None),
    ],
)  # fmt: skip
async def test_shift_bad_input(client, shop, db, path, body, status, field) -> None:
    opened = {"register": "main", "opening_float": "50"}
    sid = (await client.post("/shifts", json=opened, headers=shop.headers)).json()["data"]["id"]
    other = (
        await client.post("/shifts", json={"register": "main"}, headers=shop.other_key.headers)
    ).json()["data"]["id"]
    before = await snapshot(db, shop)
    r = await client.post(path.format(sid=sid, other=other), json=body, headers=shop.headers)
    assert r.status_code == status, r.text
    if field:
        assert field in r.json()["errors"], r.text
    assert await snapshot(db, shop) == before
    assert (await client.get(f"/shifts/{other}", headers=shop.headers)).status_code == 404


async def test_52500_is_in_the_chart(db, shop) -> None:
    name = await db.read(
        lambda s: s.scalar(
            select(Account.name).where(
                Account.company_id == shop.company_id, Account.code == "52500"
            )
        )
    )
    assert name == "Cash Over/Short"


# --------------------------------------------------------------------------- receipts


async def test_receipts_of_a_sale_and_its_return(client, shop, db) -> None:
    await db.write(
        lambda s: s.execute(
            update(Warehouse)
            .where(Warehouse.id == shop.warehouse_id)
            .values(receipt_header="Open 8-20 <b>daily</b>", receipt_footer="Thank you!\nBye",
                    address="1 Quay", phone="555-0001")
        )
    )  # fmt: skip
    body = sale(
        shop,
        qty=3,
        all_payments=[{"amount": "10.00", "payment_mode_id": "cash"},
                      {"amount": "1.55", "payment_mode_id": "card"}],
    )  # fmt: skip
    made = (await client.post("/sales", json=body, headers=shop.headers)).json()
    invoice = made["invoice_number"]
    url = f"/sales/{made['order_id']}/receipt"
    page = await client.get(url, params={"size": "80mm", "tendered": "20.00"}, headers=shop.headers)
    assert page.status_code == 200, page.text
    assert page.headers["content-type"].startswith("text/html")
    html = page.text
    for part in (invoice, "Main street", "1 Quay", "555-0001", "Thank you!", "11.55", "10.00",
                 "1.55", "<svg", "10.00", "Change"):  # fmt: skip
        assert part in html, part
    assert "<b>daily</b>" not in html and "&lt;b&gt;daily&lt;/b&gt;" in html
    assert "10.00</td>" in html and ">10.00<" in html  # tendered 20.00 − cash 10.00
    a4 = await client.get(url, params={"size": "a4"}, headers=shop.headers)
    assert a4.status_code == 200 and "size: A4" in a4.text
    for width in (42, 48):
        text = await client.get(
            url, params={"format": "text", "width": str(width)}, headers=shop.headers
        )
        assert text.status_code == 200, text.text
        assert text.headers["content-type"].startswith("text/plain")
        lines = text.text.splitlines()
        assert all(len(line) <= width for line in lines), [ln for ln in lines if len(ln) > width]
        assert any(invoice in line for line in lines)
        assert any(line.startswith("TOTAL") and line.endswith("11.55") for line in lines)
        assert any(line.startswith("Tax 10% on 10.50") and line.endswith("1.05") for line in lines)
        assert any(line.startswith("Change") and line.endswith("0.00") for line in lines)
        assert all(ch == "\n" or ch >= " " for ch in text.text)
    r = await client.post(
        "/sales-returns",
        json={"user_id": shop.customer_id, "order_date": DAY, "invoice_number": invoice,
              "items": [{"product_id": shop.products["apple"], "quantity": 1,
                         "unit_price": "3.50"}],
              "all_payments": [{"amount": "3.85", "payment_mode_id": "cash"}]},
        headers=shop.headers,
    )  # fmt: skip
    ret = r.json()
    back = await client.get(
        f"/sales-returns/{ret['invoice_number']}/receipt",
        params={"format": "text", "width": "42"},
        headers=shop.headers,
    )
    assert back.status_code == 200, back.text
    assert "Return receipt" in back.text and invoice in back.text and "3.85" in back.text
    html = await client.get(f"/sales-returns/{ret['return_id']}/receipt", headers=shop.headers)
    assert html.status_code == 200 and "<svg" in html.text


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"format": "pdf"}, "format"),
        ({"size": "a5"}, "size"),
        ({"format": "text", "width": "40"}, "width"),
        ({"format": "text", "width": "4\x002"}, "width"),
        ({"tendered": "1.001"}, "tendered"),
        ({"tendered": "abc"}, "tendered"),
        ({"tendered": "1e40"}, "tendered"),
        ({"tendered": "1.00"}, "tendered"),
        ({"tendered": "NaN"}, "tendered"),
        ({"tendered": "1_000"}, "tendered"),
        ({"tendered": "\u0663"}, "tendered"),  # an Arabic-Indic three
        ({"tendered": "1e99999999"}, "tendered"),  # refused as text, not written out
        ({"tendered": "99999999999999999999.99"}, "tendered"),  # beyond money
    ],
)
async def test_receipt_bad_input(client, shop, params, field) -> None:
    body = sale(shop, all_payments=[{"amount": "7.70", "payment_mode_id": "cash"}])
    made = (await client.post("/sales", json=body, headers=shop.headers)).json()
    r = await client.get(f"/sales/{made['order_id']}/receipt", params=params, headers=shop.headers)
    assert r.status_code == 422, r.text
    assert field in r.json()["errors"], r.text
    assert len(r.content) < 2000
    other = await client.get(f"/sales/{made['order_id']}/receipt", headers=shop.other_key.headers)
    assert other.status_code == 404
