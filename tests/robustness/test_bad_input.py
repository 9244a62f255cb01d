"""Bad input never reaches a 500: every case is a 4xx with the spec's error envelope,
and a 422 names the offending field in ``errors``."""

from __future__ import annotations

import httpx
import pytest

from tests.factories import Shop, make_shop
from tillbook.db import Database
from tillbook.kit import xid

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
async def shop(db: Database) -> Shop:
    """One shop for the whole module: these tests only read."""
    return await make_shop(db)


def assert_error(r: httpx.Response, status: int) -> dict[str, object]:
    assert r.status_code == status, (r.request.url, r.status_code, r.text)
    body = r.json()
    assert body["status"] == "error"
    assert isinstance(body["message"], str) and body["message"]
    return body  # type: ignore[no-any-return]


def assert_422(r: httpx.Response, field: str) -> None:
    body = assert_error(r, 422)
    errors = body["errors"]
    assert isinstance(errors, dict) and field in errors, errors
    assert all(isinstance(m, str) for m in errors[field])


@pytest.mark.parametrize("path", LISTS)
@pytest.mark.parametrize("value", BAD_PAGE_VALUES)
async def test_bad_page(client: httpx.AsyncClient, shop: Shop, path: str, value: str) -> None:
    assert_422(await client.get(f"{path}?page={value}", headers=shop.headers), "page")


@pytest.mark.parametrize("path", LISTS)
@pytest.mark.parametrize("value", BAD_LIMIT_VALUES)
async def test_bad_limit(client: httpx.AsyncClient, shop: Shop, path: str, value: str) -> None:
    assert_422(await client.get(f"{path}?limit={value}", headers=shop.headers), "limit")


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
    client: httpx.AsyncClient, shop: Shop, path: str, query: str, page: int, per_page: int
) -> None:
    """Blank means the default; a limit above the maximum is clamped, not refused."""
    r = await client.get(f"{path}?{query}", headers=shop.headers)
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
    client: httpx.AsyncClient, shop: Shop, path: str, value: str, field: str
) -> None:
    assert_422(await client.get(f"{path}?search={value}", headers=shop.headers), field)


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
    client: httpx.AsyncClient, shop: Shop, path: str, value: str
) -> None:
    r = await client.get(f"{path}?search={value}", headers=shop.headers)
    assert r.status_code == 200, r.text
    assert r.json()["data"]["total"] == 0


@pytest.mark.parametrize("field", ["category_id", "brand_id"])
@pytest.mark.parametrize("value", BAD_XID_FILTERS)
async def test_bad_xid_filter(
    client: httpx.AsyncClient, shop: Shop, field: str, value: str
) -> None:
    assert_422(await client.get(f"/products?{field}={value}", headers=shop.headers), field)


@pytest.mark.parametrize("field", ["category_id", "brand_id"])
@pytest.mark.parametrize("id_", [2**31, 2**62, 2**63 - 1])
async def test_unknown_xid_filter_matches_nothing(
    client: httpx.AsyncClient, shop: Shop, field: str, id_: int
) -> None:
    for value in (xid.encode(id_), str(id_)):
        r = await client.get("/products", params={field: value}, headers=shop.headers)
        assert r.status_code == 200, r.text
        assert r.json()["data"]["total"] == 0


@pytest.mark.parametrize("path", ITEMS)
@pytest.mark.parametrize("ref", BAD_IDS)
async def test_bad_path_id(client: httpx.AsyncClient, shop: Shop, path: str, ref: str) -> None:
    r = await client.get(path + ref, headers=shop.headers)
    body = assert_error(r, 404)
    assert "errors" not in body


@pytest.mark.parametrize("path", ["/products/../x", "/brands//1", "/nowhere", "/products/1/x"])
async def test_unknown_paths(client: httpx.AsyncClient, shop: Shop, path: str) -> None:
    assert_error(await client.get(path, headers=shop.headers), 404)


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
async def test_wrong_method(client: httpx.AsyncClient, shop: Shop, method: str, path: str) -> None:
    r = await client.request(method, path, headers=shop.headers, content=b"{}")
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
        "2026-01-01%00,2026-02-01",
        "%1F",
        "0001-01-01,2026-01-01",
        "2026-01-01,9999-12-31",
        "1969-12-31,",
        "2026-13-01,",
        "2026-02-01,2026-01-01",
        "2026-01-01",
        "a,b,c",
    ],
)
async def test_bad_dates_filter(
    client: httpx.AsyncClient, shop: Shop, path: str, value: str
) -> None:
    """Days the database cannot hold (``date.min``/``date.max`` are ±infinity on
    PostgreSQL), control characters, malformed ranges: a 422 naming ``dates``."""
    assert_422(await client.get(f"{path}?dates={value}", headers=shop.headers), "dates")


@pytest.mark.parametrize("path", DATED_LISTS)
async def test_dates_filter_edges_are_accepted(
    client: httpx.AsyncClient, shop: Shop, path: str
) -> None:
    for value in ("1970-01-01,9999-12-30", ",", "2026-11-20,", ",2026-11-20"):
        r = await client.get(f"{path}?dates={value}", headers=shop.headers)
        assert r.status_code == 200, (value, r.text)
