"""Hostile input to the public API, by surface: query strings, path ids, methods and
key headers on the reads; then the bodies of POST /sales and POST /purchases.

Every case is a 4xx with the spec's error envelope, and a 422 names the offending
field in ``errors``. A refused order records nothing (``tests/written.py``: no
stock moved, no order, journal entry, payment, event, idempotency or
failed-transaction record) and leaves the invoice counter where it was: the next
valid order still gets number 00001.

Values at or beyond what the columns hold (numbers, results, dates), and control
characters in every property the OpenAPI document names, are ``test_bounds.py``'s;
the HTTP edge (body size, quoting, login limits) is ``test_edge.py``'s; hostile
input on the back office's pages is ``test_hostile_pages.py``'s.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import httpx
import pytest

from tests.factories import Shop, make_shop
from tests.invariants import check_books
from tests.written import snapshot
from tillbook.db import Database
from tillbook.kit import xid

D = Decimal
NOWHERE = 2**40  # an id no record has
Body = dict[str, Any]


def assert_error(r: httpx.Response, status: int) -> dict[str, Any]:
    """The spec's error envelope with ``status``: an error and a message that says something."""
    assert r.status_code == status, (r.request.url, r.status_code, r.text)
    body: dict[str, Any] = r.json()
    assert body["status"] == "error", r.text
    assert isinstance(body["message"], str) and body["message"].strip(), r.text
    return body


def assert_422(r: httpx.Response, field: str) -> list[str]:
    """A 422 whose ``errors`` names ``field`` with at least one message; the messages."""
    body = assert_error(r, 422)
    errors = body.get("errors")
    assert isinstance(errors, dict) and field in errors, f"expected errors[{field!r}]: {r.text}"
    messages = errors[field]
    assert isinstance(messages, list) and messages, r.text
    assert all(isinstance(m, str) and m.strip() for m in messages), r.text
    return messages


# ------------------------------------------------- reads: query strings, paths, key headers

LISTS = ["/products", "/customers"]
ITEMS = ["/products/", "/categories/", "/brands/"]

BAD_PAGE_VALUES = [
    "abc",
    "0",
    "-1",
    "1e3",
    "1.5",
    "0x10",
    "%00",
    "%20",
    "2000000",
    "99999999999999999999999",
    "9" * 5000,
    "\u0661e",
    # digits are ASCII 0-9 and nothing else (issue 22, item 5)
    "%C2%B2",  # ²
    "%EF%BC%92",  # full-width ２
    "%D9%A1",  # Arabic-Indic ١
    "%201",
    "1%20",
    "%2B1",
    "1_000",
]
BAD_LIMIT_VALUES = [
    "abc",
    "0",
    "-1",
    "-99999999999999999999999",
    "1e3",
    "1.5",
    "%00",
    "9" * 5000,
    "true",
    "%C2%B2",
    "%EF%BC%92",
    "%D9%A1",
    "%201",
    "%2B5",
    "1_000",
]
BAD_IDS = [
    "0",
    "-5",
    "+5",
    "00",
    "1.5",
    "1e3",
    "99999999999999999999999",
    str(2**63),
    "abc",
    "%00",
    "%20",
    "..%2Fx",
    "%2e%2e",
    "null",
    "true",
    "²",
    "\u0661\u0662",
    "%EF%BC%92",  # full-width ２
    "%D9%A1",  # Arabic-Indic ١
    "%201",
    "1%20",
    "1_000",
    "%F0%9F%92%A9",
    "a" * 32,
    "a" * 5000,
    "x" * 8,
    "0x10",
    "[1]",
    "%7B%7D",
]
BAD_XID_FILTERS = [
    "abc",
    "%1F",
    "a%01",
    "0",
    "-1",
    "%00",
    "1.5",
    "99999999999999999999999",
    "a" * 32,
    "²",
    "%EF%BC%92",
    "%D9%A1",
    "%201",
    "%2B1",
    "1_000",
    "x" * 5000,
]


@pytest.fixture(scope="module")
async def reading_shop(db: Database) -> Shop:
    """One shop for the query, path and header cases: they only read."""
    return await make_shop(db)


@pytest.mark.parametrize("path", LISTS)
@pytest.mark.parametrize("value", BAD_PAGE_VALUES)
async def test_bad_page(
    client: httpx.AsyncClient, reading_shop: Shop, path: str, value: str
) -> None:
    assert_422(await client.get(f"{path}?page={value}", headers=reading_shop.headers), "page")


@pytest.mark.parametrize("path", LISTS)
@pytest.mark.parametrize("value", BAD_LIMIT_VALUES)
async def test_bad_limit(
    client: httpx.AsyncClient, reading_shop: Shop, path: str, value: str
) -> None:
    assert_422(await client.get(f"{path}?limit={value}", headers=reading_shop.headers), "limit")


@pytest.mark.parametrize("path", LISTS)
@pytest.mark.parametrize(
    ("query", "page", "per_page"),
    [
        ("page=&limit=", 1, 20),
        ("limit=101", 1, 100),
        ("limit=99999999999999999999999", 1, 100),
        ("page=1000000", 1000000, 20),
        ("page=0005", 5, 20),
    ],
)
async def test_lenient_page_values(
    client: httpx.AsyncClient, reading_shop: Shop, path: str, query: str, page: int, per_page: int
) -> None:
    """Blank means the default; a limit above the maximum is clamped, not refused."""
    r = await client.get(f"{path}?{query}", headers=reading_shop.headers)
    assert r.status_code == 200, r.text
    data = r.json()["data"]
    assert (data["current_page"], data["per_page"]) == (page, per_page)


@pytest.mark.parametrize("path", LISTS)
@pytest.mark.parametrize(
    ("value", "field"),
    [
        ("%00", "search"),
        ("x" * 201, "search"),
        ("a%00b", "search"),
        ("%01", "search"),
        ("milk%0B", "search"),
        ("%1F", "search"),  # Python strips U+001F as white space: refused before that
        ("%7F%1B", "search"),
    ],
)
async def test_bad_search(
    client: httpx.AsyncClient, reading_shop: Shop, path: str, value: str, field: str
) -> None:
    assert_422(await client.get(f"{path}?search={value}", headers=reading_shop.headers), field)


@pytest.mark.parametrize("path", LISTS)
@pytest.mark.parametrize(
    "value",
    [
        "%25",
        "_",
        "%5C",
        "'",
        '"',
        "'; drop table products; --",
        "%F0%9F%92%A9",
        "%FF",
        "%C3%A9",
        "a%20b",
        "*",
        "[a-z]",
    ],
)
async def test_odd_search_is_just_text(
    client: httpx.AsyncClient, reading_shop: Shop, path: str, value: str
) -> None:
    r = await client.get(f"{path}?search={value}", headers=reading_shop.headers)
    assert r.status_code == 200, r.text
    assert r.json()["data"]["total"] == 0


@pytest.mark.parametrize("field", ["category_id", "brand_id"])
@pytest.mark.parametrize("value", BAD_XID_FILTERS)
async def test_bad_xid_filter(
    client: httpx.AsyncClient, reading_shop: Shop, field: str, value: str
) -> None:
    assert_422(await client.get(f"/products?{field}={value}", headers=reading_shop.headers), field)


@pytest.mark.parametrize("field", ["category_id", "brand_id"])
@pytest.mark.parametrize("id_", [2**31, 2**62, 2**63 - 1])
async def test_unknown_xid_filter_matches_nothing(
    client: httpx.AsyncClient, reading_shop: Shop, field: str, id_: int
) -> None:
    for value in (xid.encode(id_), str(id_)):
        r = await client.get("/products", params={field: value}, headers=reading_shop.headers)
        assert r.status_code == 200, r.text
        assert r.json()["data"]["total"] == 0


@pytest.mark.parametrize("path", ITEMS)
@pytest.mark.parametrize("ref", BAD_IDS)
async def test_bad_path_id(
    client: httpx.AsyncClient, reading_shop: Shop, path: str, ref: str
) -> None:
    r = await client.get(path + ref, headers=reading_shop.headers)
    body = assert_error(r, 404)
    assert "errors" not in body


@pytest.mark.parametrize("path", ["/products/../x", "/brands//1", "/nowhere", "/products/1/x"])
async def test_unknown_paths(client: httpx.AsyncClient, reading_shop: Shop, path: str) -> None:
    assert_error(await client.get(path, headers=reading_shop.headers), 404)


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH"])
@pytest.mark.parametrize(
    "path",
    [
        "/warehouses",
        "/categories",
        "/brands",
        "/suppliers",  # /customers takes POST (a new customer at the till)
        "/payment-modes",
        "/taxes",
        "/units",
        "/expense-categories",
        "/products/1",
        "/categories/1",
        "/brands/1",
    ],
)
async def test_wrong_method(
    client: httpx.AsyncClient, reading_shop: Shop, method: str, path: str
) -> None:
    r = await client.request(method, path, headers=reading_shop.headers, content=b"{}")
    assert_error(r, 405)


@pytest.mark.parametrize(
    "path",
    [
        "/products?page=abc",
        "/products/abc",
        "/categories/0",
        "/customers?limit=-1",
        "/products?category_id=%00",
    ],
)
async def test_authentication_comes_first(client: httpx.AsyncClient, path: str) -> None:
    """Without keys a bad request is still a 401: nothing is revealed before auth."""
    body = assert_error(await client.get(path), 401)
    assert body["message"] == "authentication failed; both key headers are required"


@pytest.mark.parametrize(
    "headers",
    [
        {"X-Service-Public-Key": "%00", "X-Service-Secret-Key": "x"},
        {"X-Service-Public-Key": "pk_" + "a" * 5000, "X-Service-Secret-Key": "x"},
        {"X-Service-Public-Key": "pk_\u00e9", "X-Service-Secret-Key": "sk_\u00e9"},
        {"X-Service-Public-Key": " ", "X-Service-Secret-Key": " "},
    ],
)
async def test_odd_key_headers(client: httpx.AsyncClient, headers: dict[str, str]) -> None:
    r = await client.get("/products", headers={k: v.encode("latin-1") for k, v in headers.items()})  # type: ignore[misc]
    assert_error(r, 401)


DATED_LISTS = ["/sales", "/purchases", "/sales-returns", "/purchase-returns", "/expenses"]


@pytest.mark.parametrize("path", DATED_LISTS)
@pytest.mark.parametrize(
    "value",
    [
        "%00",
        "%1F",
        "2026-13-01,",
        "2026-02-01,2026-01-01",
        "2026-01-01",
        "a,b,c",
    ],
)
async def test_bad_dates_filter(
    client: httpx.AsyncClient, reading_shop: Shop, path: str, value: str
) -> None:
    """Control characters and malformed ranges: a 422 naming ``dates``. (Days the
    database cannot hold, and a NUL inside a range: ``test_bounds.py``.)"""
    assert_422(await client.get(f"{path}?dates={value}", headers=reading_shop.headers), "dates")


@pytest.mark.parametrize("path", DATED_LISTS)
async def test_dates_filter_edges_are_accepted(
    client: httpx.AsyncClient, reading_shop: Shop, path: str
) -> None:
    for value in ("1970-01-01,9999-12-30", ",", "2026-11-20,", ",2026-11-20"):
        r = await client.get(f"{path}?dates={value}", headers=reading_shop.headers)
        assert r.status_code == 200, (value, r.text)


# ------------------------------------------------- bodies: POST /sales and POST /purchases


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
        "unit_price beyond NUMERIC(18,4)", line("unit_price", "1e14"), "product_items.0.unit_price"
    ),
    Case("order_date years ahead", put("order_date", "2031-01-01"), "order_date"),
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
]
PURCHASES_ONLY = [
    Case("customer as supplier", lambda s, b: b.__setitem__("user_id", s.customer_id), "user_id"),
    Case(
        "walk-in customer as supplier",
        lambda s, b: b.__setitem__("user_id", s.walk_in_id),
        "user_id",
    ),
    # Common to both bodies, but test_bounds.py sends these very values to POST /sales:
    # here they are the purchase's only.
    Case(
        "quantity beyond NUMERIC(18,4)",
        line("quantity", "100000000000000"),
        "product_items.0.quantity",
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
]


def valid_body(shop: Shop, kind: str) -> Body:
    return {
        "user_id": shop.customer_id if kind == "sales" else shop.supplier_id,
        "order_date": "2026-11-22",
        "product_items": [{"xid": shop.xid("apple"), "quantity": 2, "unit_price": "3.50"}],
    }


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
    if case.status != 422:
        assert_error(r, case.status)
        return
    assert case.field is not None, case.id
    messages = assert_422(r, case.field)
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
