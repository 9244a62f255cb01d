"""Bad bodies for POST /sales and POST /purchases: each is refused with the spec's
envelope and a field-by-field ``errors`` object naming the field, and nothing is
recorded — no stock moved, no order, journal entry, payment, event, idempotency
record or failed-transaction record, and the invoice counter did not move (the
next valid order still gets number 00001)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from tests.factories import Shop
from tests.invariants import check_books
from tillbook.db import Database
from tillbook.kit import xid
from tillbook.models import (
    FailedTransaction,
    IdempotencyRecord,
    JournalEntry,
    Listing,
    Order,
    OutboxEvent,
    Payment,
    StockBatch,
    StockMovement,
)

D = Decimal
NOWHERE = 2**40  # an id no record has
Body = dict[str, Any]


@dataclass(frozen=True)
class Case:
    """One bad request: an edit of a valid body (or a raw body), and what to expect."""

    id: str
    edit: Callable[[Shop, Body], None] | None = None
    field: str | None = None  # the key expected in ``errors`` (422 only)
    mentions: str | None = None  # text the field's messages must contain (the value)
    status: int = 422
    raw: bytes | None = None  # sent as is instead of the JSON body
    rewrite: Callable[[str], str] | None = None  # applied to the JSON text of the body
    headers: dict[str, str] = dataclasses.field(default_factory=dict)


def drop(name: str) -> Callable[[Shop, Body], None]:
    return lambda shop, body: body.pop(name)


def put(name: str, value: Any) -> Callable[[Shop, Body], None]:
    return lambda shop, body: body.__setitem__(name, value)


def line(name: str, value: Any) -> Callable[[Shop, Body], None]:
    return lambda shop, body: body["product_items"][0].__setitem__(name, value)


def tenders(*pairs: tuple[Any, Any]) -> Callable[[Shop, Body], None]:
    return put("all_payments", [{"amount": a, "payment_mode_id": m} for a, m in pairs])


def other_warehouse_product(shop: Shop, body: Body) -> None:
    body["product_items"][0]["xid"] = xid.encode(shop.other_products["coffee"])


def wrong_unit(shop: Shop, body: Body) -> None:  # Box is a unit of water, not of apple
    body["product_items"][0]["selected_unit_id"] = shop.box_unit_id


# Cases both endpoints share; the valid body is 2 apples at 3.50 = 7.00.
COMMON = [
    # digits are ASCII 0-9 (issue 22, item 5): pydantic's Decimal, like Python's,
    # read "２" as 2 and took " 1", "+1" and "1_000"
    *(
        Case(f"{name} {bad!r}", line(name, bad), f"product_items.0.{name}")
        for name in ("quantity", "unit_price")
        for bad in ("２", "١", "²", " 1", "+1", "1_000")
    ),
    Case("user_id full-width", put("user_id", "２"), "user_id"),
    Case("missing user_id", drop("user_id"), "user_id"),
    Case("missing order_date", drop("order_date"), "order_date"),
    Case("missing product_items", drop("product_items"), "product_items"),
    Case("empty product_items", put("product_items", []), "product_items"),
    Case("product_items not a list", put("product_items", {"xid": 1}), "product_items"),
    Case("unknown product id", line("xid", NOWHERE), "product_items.0.xid", str(NOWHERE)),
    Case(
        "unknown product xid",
        line("xid", xid.encode(NOWHERE)),
        "product_items.0.xid",
        xid.encode(NOWHERE),
    ),
    Case(
        "garbage product ref",
        line("xid", "no-such-product"),
        "product_items.0.xid",
        "no-such-product",
    ),
    Case("missing xid", lambda s, b: b["product_items"][0].pop("xid"), "product_items.0.xid"),
    Case("another warehouse's product", other_warehouse_product, "product_items.0.xid"),
    Case("quantity 0", line("quantity", 0), "product_items.0.quantity"),
    Case("quantity -1", line("quantity", -1), "product_items.0.quantity"),
    Case("quantity 0.00001", line("quantity", "0.00001"), "product_items.0.quantity"),
    Case(
        "quantity 1e-05 as a JSON number",
        field="product_items.0.quantity",
        rewrite=lambda text: text.replace('"quantity": 2', '"quantity": 1e-05'),
    ),
    Case(
        "quantity 1e400",
        field="product_items.0.quantity",
        rewrite=lambda text: text.replace('"quantity": 2', '"quantity": 1e400'),
    ),
    Case("quantity abc", line("quantity", "abc"), "product_items.0.quantity", "abc"),
    Case("quantity true", line("quantity", True), "product_items.0.quantity"),
    Case("quantity null", line("quantity", None), "product_items.0.quantity"),
    Case(
        "quantity missing",
        lambda s, b: b["product_items"][0].pop("quantity"),
        "product_items.0.quantity",
    ),
    Case("unit_price -1", line("unit_price", -1), "product_items.0.unit_price"),
    Case("unit_price 1.123456", line("unit_price", "1.123456"), "product_items.0.unit_price"),
    Case("unit_price NaN", line("unit_price", "NaN"), "product_items.0.unit_price"),
    Case("order_date 2026-13-01", put("order_date", "2026-13-01"), "order_date", "2026-13-01"),
    Case("order_date 22/11/2026", put("order_date", "22/11/2026"), "order_date", "22/11/2026"),
    Case("order_date 20261122", put("order_date", 20261122), "order_date"),
    Case("tenders above the total", tenders(("5.00", "cash"), ("2.01", "card")), "all_payments"),
    Case("tender of 0", tenders((0, "cash")), "all_payments.0.amount"),
    Case("tender of 3 decimals", tenders(("1.005", "cash")), "all_payments.0.amount"),
    Case(
        "unknown payment mode", tenders((1, "bitcoin")), "all_payments.0.payment_mode_id", "bitcoin"
    ),
    Case("unknown payment mode id", tenders((1, NOWHERE)), "all_payments.0.payment_mode_id"),
    Case("wrong unit for the product", wrong_unit, "product_items.0.selected_unit_id"),
    Case("invoice_number of 500 chars", put("invoice_number", "X" * 500), "invoice_number"),
    Case("unique_id of 300 chars", put("unique_id", "u" * 300), "unique_id"),
    Case(
        "Idempotency-Key of 300 chars",
        field="Idempotency-Key",
        headers={"Idempotency-Key": "k" * 300},
    ),
    Case("user_id true", put("user_id", True), "user_id"),
    Case("user_id 0", put("user_id", 0), "user_id"),
    Case("user_id -1", put("user_id", -1), "user_id"),
    Case("user_id empty string", put("user_id", ""), "user_id"),
    Case("xid 1.5", line("xid", 1.5), "product_items.0.xid"),
    Case("unit_price too large", line("unit_price", "1" * 20), "product_items.0.unit_price"),
    Case("unknown unit", line("selected_unit_id", NOWHERE), "product_items.0.selected_unit_id"),
    Case("order_date empty", put("order_date", ""), "order_date"),
    Case("all_payments not a list", put("all_payments", {"amount": 1}), "all_payments"),
    Case(
        "tender without a mode",
        put("all_payments", [{"amount": 1}]),
        "all_payments.0.payment_mode_id",
    ),
    Case(
        "tender without an amount",
        put("all_payments", [{"payment_mode_id": "cash"}]),
        "all_payments.0.amount",
    ),
    Case("21 tenders", tenders(*[("0.01", "cash")] * 21), "all_payments"),
    Case(
        "501 lines",
        lambda s, b: b.__setitem__("product_items", b["product_items"] * 501),
        "product_items",
    ),
    Case("invoice_number with a newline", put("invoice_number", "INV\n1"), "invoice_number"),
    Case("notes of 3000 chars", put("notes", "n" * 3000), "notes"),
    Case(
        "NaN literal",
        rewrite=lambda text: text.replace('"quantity": 2', '"quantity": NaN'),
        status=400,
    ),
    *[
        Case(
            f"quantity {number} (beyond any Decimal)",
            rewrite=lambda text, n=number: text.replace('"quantity": 2', f'"quantity": {n}'),
            status=400,
        )
        for number in (
            "1e99999999999999999999",
            "1e-99999999999999999999",
            "-1.5E+9999999999999999999",
        )
    ],
    *[
        Case(
            f"quantity {number} (Decimal's extremes)",
            field="product_items.0.quantity",
            rewrite=lambda text, n=number: text.replace('"quantity": 2', f'"quantity": {n}'),
        )
        for number in ("1e999999999999999999", "1e-999999999999999999", "-1E+999999")
    ],
    Case("malformed JSON", raw=b'{"user_id": 1, "order_date": ', status=400),
    Case("deeply nested JSON", raw=b"[" * 100_000 + b"]" * 100_000, status=400),
    Case("not UTF-8", raw=b'{"user_id": "\xff\xfe"}', status=400),
    Case("empty body", raw=b"", status=400),
    Case("blank body", raw=b"  \n", status=400),
    Case("JSON array body", raw=b"[]", field="body"),
    Case("JSON string body", raw=b'"sale"', field="body"),
    Case("wrong Content-Type", headers={"Content-Type": "text/plain"}, status=415),
    # DESIGN.md §12: text the database cannot store, numbers and results beyond the
    # columns, dates it cannot hold or years ahead
    *[
        Case(f"NUL in {name}", put(name, "a\x00b"), name)
        for name in ("notes", "invoice_number", "unique_id", "user_id", "order_date")
    ],
    Case("NUL in a product ref", line("xid", "ab\x00"), "product_items.0.xid"),
    Case(
        "NUL in a unit ref", line("selected_unit_id", "1\x00"), "product_items.0.selected_unit_id"
    ),
    Case("NUL in a quantity", line("quantity", "2\x00"), "product_items.0.quantity"),
    Case("NUL in a tender's mode", tenders(("1.00", "cash\x00")), "all_payments.0.payment_mode_id"),
    Case(
        "NUL in a tender's reference",
        put("all_payments", [{"amount": 1, "payment_mode_id": "cash", "reference": "\x00"}]),
        "all_payments.0.reference",
    ),
    Case(
        "NUL in a tender's notes",
        put("all_payments", [{"amount": 1, "payment_mode_id": "cash", "notes": "x\x00"}]),
        "all_payments.0.notes",
    ),
    Case("U+001F in notes", put("notes", "a\x1fb"), "notes"),
    Case("lone surrogate in notes", put("notes", "a\ud800b"), "notes"),
    Case("unique_id longer than stored", put("unique_id", "u" * 101), "unique_id"),
    Case(
        "quantity × unit_price beyond money",
        lambda s, b: (
            line("quantity", "99999999999999")(s, b) or line("unit_price", "99999999999999")(s, b)
        ),
        "product_items.0.quantity",
    ),
    Case(
        "quantity beyond NUMERIC(18,4)",
        line("quantity", "100000000000000"),
        "product_items.0.quantity",
    ),
    Case(
        "unit_price beyond NUMERIC(18,4)", line("unit_price", "1e14"), "product_items.0.unit_price"
    ),
    Case("quantity 1E-99999999", line("quantity", "1E-99999999"), "product_items.0.quantity"),
    Case(
        "unit_price 5E-1000000000",
        line("unit_price", "5E-1000000000"),
        "product_items.0.unit_price",
    ),
    Case(
        "lines summing beyond money",
        lambda s, b: b.__setitem__(
            "product_items",
            [{"xid": s.xid("apple"), "quantity": 1000, "unit_price": "6000000000000"}] * 2,
        ),
        "product_items.1.quantity",
    ),
    Case("tender beyond money", tenders(("10000000000000000", "cash")), "all_payments.0.amount"),
    Case("order_date 0001-01-01", put("order_date", "0001-01-01"), "order_date"),
    Case("order_date 9999-12-31", put("order_date", "9999-12-31"), "order_date"),
    Case("order_date 1969-12-31", put("order_date", "1969-12-31"), "order_date"),
    Case("order_date years ahead", put("order_date", "2031-01-01"), "order_date"),
    Case(
        "order_date 0001-01-01T00:00:00+14:00",
        put("order_date", "0001-01-01T00:00:00+14:00"),
        "order_date",
    ),
]
SALES_ONLY = [
    Case("supplier as customer", lambda s, b: b.__setitem__("user_id", s.supplier_id), "user_id"),
    Case("discount_rate 101", line("discount_rate", 101), "product_items.0.discount_rate"),
    Case("discount_rate -5", line("discount_rate", -5), "product_items.0.discount_rate"),
    Case("unknown tax_id", line("tax_id", NOWHERE), "product_items.0.tax_id", str(NOWHERE)),
    Case("client total off by 0.02", put("total", "7.02"), "total", "7.02"),
    Case("client subtotal off by 0.02", put("subtotal", "6.98"), "subtotal", "6.98"),
    Case("client tax_amount off", put("tax_amount", "0.50"), "tax_amount"),
    Case("discount above the order value", put("discount", "7.01"), "discount", "7.01"),
    Case("negative shipping", put("shipping", -1), "shipping"),
    Case("discount of 3 decimals", put("discount", "0.001"), "discount"),
    Case("NUL in a tax ref", line("tax_id", "1\x00"), "product_items.0.tax_id"),
    Case("discount beyond money", put("discount", "10000000000000000"), "discount"),
    Case("shipping beyond money", put("shipping", "10000000000000000"), "shipping"),
    Case("client total beyond money", put("total", "10000000000000000"), "total"),
    Case(
        "a line pushed beyond money by its tax",
        lambda s, b: b.__setitem__(
            "product_items",
            [
                {
                    "xid": s.xid("apple"),
                    "quantity": 100,
                    "unit_price": "95000000000000",
                    "tax_id": s.tax10_id,
                }
            ],
        ),
        "product_items.0.quantity",
    ),
    Case(
        "boxes beyond the quantity column in base units",
        lambda s, b: b.__setitem__(
            "product_items",
            [
                {
                    "xid": s.xid("water"),
                    "quantity": "9999999999999.9999",
                    "unit_price": 0,
                    "selected_unit_id": s.box_unit_id,
                }
            ],
        ),
        "product_items.0.quantity",
    ),
]
PURCHASES_ONLY = [
    Case("customer as supplier", lambda s, b: b.__setitem__("user_id", s.customer_id), "user_id"),
    Case(
        "walk-in customer as supplier",
        lambda s, b: b.__setitem__("user_id", s.walk_in_id),
        "user_id",
    ),
    Case(
        "stock pushed beyond NUMERIC(18,4)",
        lambda s, b: line("quantity", "99999999999999")(s, b) or line("unit_price", 0)(s, b),
        "product_items.0.quantity",
    ),
    Case(
        "a unit cost beyond NUMERIC(18,4)",
        lambda s, b: (
            line("quantity", "0.0001")(s, b) or line("unit_price", "99999999999999.9999")(s, b)
        ),
        "product_items.0.quantity",
    ),
]


def valid_body(shop: Shop, kind: str) -> Body:
    return {
        "user_id": shop.customer_id if kind == "sales" else shop.supplier_id,
        "order_date": "2026-11-22",
        "product_items": [{"xid": shop.xid("apple"), "quantity": 2, "unit_price": "3.50"}],
    }


async def snapshot(db: Database, shop: Shop) -> dict[str, Any]:
    """Everything a write could leave behind for this company."""

    async def read(session: AsyncSession) -> dict[str, Any]:
        cid = shop.company_id

        async def count(model: Any, *where: Any) -> int:
            n = await session.scalar(select(func.count()).select_from(model).where(*where))
            return int(n or 0)

        stock = {
            pid: D(str(q))
            for pid, q in (
                await session.execute(
                    select(Listing.product_id, Listing.current_stock).where(
                        Listing.company_id == cid
                    )
                )
            ).all()
        }
        return {
            "stock": stock,
            "orders": await count(Order, Order.company_id == cid),
            "entries": await count(JournalEntry, JournalEntry.company_id == cid),
            "events": await count(OutboxEvent, OutboxEvent.company_id == cid),
            "payments": await count(Payment, Payment.company_id == cid),
            "movements": await count(StockMovement, StockMovement.company_id == cid),
            "batches": await count(StockBatch, StockBatch.company_id == cid),
            "tokens": await count(
                IdempotencyRecord,
                IdempotencyRecord.warehouse_id.in_([shop.warehouse_id, shop.other_warehouse_id]),
            ),
            "failed": await count(FailedTransaction, FailedTransaction.company_id == cid),
        }

    return await db.read(read)


def request_of(case: Case, shop: Shop, kind: str) -> dict[str, Any]:
    """httpx keyword arguments for the case."""
    headers = {**shop.headers, "Content-Type": "application/json", **case.headers}
    if case.raw is not None:
        return {"content": case.raw, "headers": headers}
    body = valid_body(shop, kind)
    if case.edit is not None:
        case.edit(shop, body)
    text = json.dumps(body)
    if case.rewrite is not None:
        changed = case.rewrite(text)
        assert changed != text, f"{case.id}: the rewrite changed nothing"
        text = changed
    return {"content": text.encode(), "headers": headers}


def assert_refused(r: httpx.Response, case: Case) -> None:
    assert r.status_code == case.status, f"{case.id}: {r.status_code} {r.text}"
    out = r.json()
    assert out["status"] == "error", r.text
    assert isinstance(out["message"], str) and out["message"].strip(), r.text
    if case.status != 422:
        return
    errors = out.get("errors")
    assert isinstance(errors, dict) and errors, f"{case.id}: no errors object: {r.text}"
    assert case.field in errors, f"{case.id}: expected errors[{case.field!r}]: {r.text}"
    messages = errors[case.field]
    assert isinstance(messages, list) and messages, r.text
    assert all(isinstance(m, str) and m.strip() for m in messages), r.text
    if case.mentions is not None:
        assert any(case.mentions in m for m in messages), (
            f"{case.id}: the message should name the value {case.mentions!r}: {r.text}"
        )


async def refused_and_nothing_recorded(
    client: httpx.AsyncClient, db: Database, shop: Shop, kind: str, case: Case
) -> None:
    before = await snapshot(db, shop)
    r = await client.post(f"/{kind}", **request_of(case, shop, kind))
    assert_refused(r, case)
    assert await snapshot(db, shop) == before, f"{case.id}: something was recorded"
    # the invoice counter did not move: the next valid order is still number 1
    ok = await client.post(f"/{kind}", json=valid_body(shop, kind), headers=shop.headers)
    assert ok.status_code == 200, ok.text
    assert ok.json()["invoice_number"] == ("SAL-00001" if kind == "sales" else "PUR-00001")
    await check_books(db, shop.company_id)


@pytest.mark.parametrize("case", COMMON + SALES_ONLY, ids=lambda c: c.id)
async def test_bad_sale(client: httpx.AsyncClient, db: Database, shop: Shop, case: Case) -> None:
    await refused_and_nothing_recorded(client, db, shop, "sales", case)


@pytest.mark.parametrize("case", COMMON + PURCHASES_ONLY, ids=lambda c: c.id)
async def test_bad_purchase(
    client: httpx.AsyncClient, db: Database, shop: Shop, case: Case
) -> None:
    await refused_and_nothing_recorded(client, db, shop, "purchases", case)


@pytest.mark.parametrize("kind", ["sales", "purchases"])
@pytest.mark.parametrize("where", ["header", "body"])
async def test_token_reused_with_another_body(
    client: httpx.AsyncClient, db: Database, shop: Shop, kind: str, where: str
) -> None:
    token = f"till-1-{kind}-{where}"
    first_body = valid_body(shop, kind)
    headers = dict(shop.headers)
    if where == "header":
        headers["Idempotency-Key"] = token
    else:
        first_body["unique_id"] = token
    first = await client.post(f"/{kind}", json=first_body, headers=headers)
    assert first.status_code == 200, first.text
    id_key = "order_id" if kind == "sales" else "purchase_id"
    first_id = first.json()[id_key]
    detail_before = (await client.get(f"/{kind}/{first_id}", headers=shop.headers)).json()
    before = await snapshot(db, shop)

    second_body = valid_body(shop, kind)
    second_body["product_items"][0]["quantity"] = 3
    if where == "body":
        second_body["unique_id"] = token
    r = await client.post(f"/{kind}", json=second_body, headers=headers)
    assert r.status_code == 422, r.text
    assert r.json()["status"] == "error" and token in r.json()["message"], r.text
    assert await snapshot(db, shop) == before
    assert (await client.get(f"/{kind}/{first_id}", headers=shop.headers)).json() == (detail_before)
    # the same body again is still the first order, replayed
    again = await client.post(f"/{kind}", json=first_body, headers=headers)
    assert again.status_code == 200 and again.json()[id_key] == first_id, again.text
    assert again.headers.get("Idempotent-Replayed") == "true"
    assert await snapshot(db, shop) == before
    # and the counter moved exactly once
    nxt = await client.post(f"/{kind}", json=valid_body(shop, kind), headers=shop.headers)
    assert nxt.json()["invoice_number"] == ("SAL-00002" if kind == "sales" else "PUR-00002")
    await check_books(db, shop.company_id)
