"""The OpenAPI document tells the truth: schemathesis fuzzes every public operation,
and one valid request per operation checks the success shapes the fuzzer rarely
reaches.

Checks on every response: no 5xx; the status code, content type, headers and body
conform to the document; every error body is the envelope. Runs on each backend,
bounded by ``MAX_EXAMPLES`` per operation (``TILLBOOK_FUZZ_EXAMPLES`` overrides it,
``TILLBOOK_FUZZ_SEED`` replays a run).

The app under test runs in schemathesis' own event-loop thread with its own
database connections (asyncpg connections belong to one loop); the shop is made
with the session's ``db``.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from fastapi import FastAPI
from schemathesis.checks import not_a_server_error
from schemathesis.python import asgi
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from sqlalchemy import select, update

from tests.factories import Shop, make_shop
from tests.invariants import check_books
from tillbook.api.body import BODY_SCHEMAS
from tillbook.api.docs import add_components
from tillbook.app import create_app
from tillbook.config import Settings
from tillbook.db import Database
from tillbook.kit import crypto, xid
from tillbook.models import Company, ExpenseCategory
from tillbook.payments import terminal_callbacks as terminals

MAX_EXAMPLES = int(os.environ.get("TILLBOOK_FUZZ_EXAMPLES", "15"))
PUBLIC = "^/api/v1/public/"


def error_envelope(ctx: Any, response: schemathesis.Response, case: schemathesis.Case[Any]) -> None:
    """Every 4xx/5xx body is ``{"status": "error", "message": str, ...}``."""
    if response.status_code < 400:
        return
    body = response.json()
    assert isinstance(body, dict), f"error body is not an object: {response.text[:200]}"
    assert body.get("status") == "error", f"error body without status=error: {body}"
    assert isinstance(body.get("message"), str), f"error body without a message: {body}"
    if response.status_code == 422 and "errors" in body:
        errors = body["errors"]
        assert isinstance(errors, dict) and all(
            isinstance(v, list) and all(isinstance(m, str) for m in v) for v in errors.values()
        ), f"422 errors is not {{field: [message]}}: {errors}"


CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    error_envelope,
]


@pytest.fixture(scope="module")
async def fuzz_shop(db: Database) -> Shop:
    return await make_shop(db)


@pytest.fixture(scope="module")
async def provider(db: Database, fuzz_shop: Shop) -> tuple[str, str]:
    async def add(session: Any) -> tuple[str, str]:
        found, secret = await terminals.add_provider(
            session, fuzz_shop.warehouse_id, "fuzz-pay", "card"
        )
        return xid.encode(found.id), secret

    return await db.write(add)


@pytest.fixture(scope="module")
async def limited_shop(db: Database) -> Shop:
    """One request a minute."""
    return await make_shop(db, rate_limit="1/minute")


@pytest.fixture(scope="module")
async def expired_shop(db: Database) -> Shop:
    """A subscription that ran out yesterday."""
    shop = await make_shop(db)

    async def expire(session: Any) -> None:
        await session.execute(
            update(Company)
            .where(Company.id == shop.company_id)
            .values(subscription_expires_on=dt.date.today() - dt.timedelta(days=1))
        )

    await db.write(expire)
    return shop


@pytest.fixture(scope="module")
async def expense_category(db: Database, fuzz_shop: Shop) -> int:
    async def find(session: Any) -> int:
        found = await session.scalar(
            select(ExpenseCategory.id).where(
                ExpenseCategory.company_id == fuzz_shop.company_id,
                ExpenseCategory.name == "General Expenses",
            )
        )
        assert isinstance(found, int)
        return found

    return await db.read(find)


@pytest.fixture(scope="module")
def fuzz_app(database_url: str) -> Iterator[FastAPI]:
    """A fresh app; its lifespan (and database pool) runs in schemathesis' loop thread."""
    app = create_app(Settings(database_url=database_url, run_worker=False))
    yield app
    asgi.shutdown_lifespans()


@pytest.fixture(scope="module")
def api_schema(fuzz_app: FastAPI, fuzz_shop: Shop) -> Any:
    seed = os.environ.get("TILLBOOK_FUZZ_SEED")
    config = schemathesis.Config.from_dict(
        {
            "headers": fuzz_shop.headers,
            "generation": {
                "mode": "all",
                "max-examples": MAX_EXAMPLES,
                "database": "none",
                "with-security-parameters": False,
            },
            **({"seed": int(seed)} if seed else {}),
        }
    )
    return schemathesis.openapi.from_asgi("/openapi.json", fuzz_app, config=config)


schema = schemathesis.pytest.from_fixture("api_schema").include(path_regex=PUBLIC)


@schema.parametrize()
def test_fuzz_public_api(case: schemathesis.Case[Any], fuzz_shop: Shop) -> None:
    case.call_and_validate(headers=fuzz_shop.headers, checks=CHECKS)


# --- valid requests: every success shape, validated by the same checks ----------------


def call(
    api_schema: Any,
    method: str,
    path: str,
    headers: dict[str, str],
    *,
    path_parameters: dict[str, Any] | None = None,
    query: dict[str, Any] | None = None,
    body: Any = None,
    expect: int = 200,
    **kwargs: Any,
) -> Any:
    operation = api_schema[f"/api/v1/public{path}"][method]
    extra: dict[str, Any] = {}
    if body is not None:
        extra["body"] = body
        extra["media_type"] = "application/json"
    case = operation.Case(path_parameters=path_parameters, query=query, **extra)
    response = case.call_and_validate(headers=headers, checks=CHECKS, **kwargs)
    assert response.status_code == expect, response.text
    return response.json()


def credit_body(shop: Shop, day: str) -> dict[str, Any]:
    return {
        "user_id": shop.customer_id,
        "order_date": day,
        "product_items": [{"xid": shop.xid("apple"), "quantity": 1, "unit_price": 3.5}],
    }


def test_every_success_shape_is_documented(
    api_schema: Any, fuzz_shop: Shop, provider: tuple[str, str], expense_category: int
) -> None:
    shop, h = fuzz_shop, fuzz_shop.headers
    day = "2026-11-20"
    sale = call(
        api_schema,
        "POST",
        "/sales",
        h,
        body={
            "user_id": shop.customer_id,
            "order_date": day,
            "product_items": [
                {"xid": shop.xid("apple"), "quantity": 2, "unit_price": "3.50"},
                {
                    "xid": shop.xid("water"),
                    "quantity": 1,
                    "unit_price": "10.00",
                    "selected_unit_id": shop.box_unit_id,
                    "tax_id": shop.tax10_id,
                },
            ],
            # money with a trailing zero beyond the cent is still money: answered "5.00"
            "all_payments": [{"amount": "5.000", "payment_mode_id": "cash"}],
        },
    )
    credit = call(
        api_schema,
        "POST",
        "/sales",
        h,
        body={
            "user_id": shop.customer_id,
            "order_date": day,
            "product_items": [{"xid": shop.xid("apple"), "quantity": 1, "unit_price": 3.5}],
        },
    )
    purchase = call(
        api_schema,
        "POST",
        "/purchases",
        h,
        body={
            "user_id": shop.supplier_id,
            "order_date": day,
            "product_items": [{"xid": shop.xid("tea"), "quantity": 4, "unit_price": "5.0000"}],
            "all_payments": [{"amount": "5.000", "payment_mode_id": "cash"}],
        },
    )
    for adjustment_type in ("add", "subtract"):
        call(
            api_schema,
            "POST",
            "/stock-adjustments",
            h,
            body={
                "product_id": shop.xid("water"),
                "quantity": "1.5",
                "adjustment_type": adjustment_type,
                "notes": "count",
                "batch_number": "B-1" if adjustment_type == "add" else None,
                "expiry_date": "2027-03-31" if adjustment_type == "add" else None,
            },
        )
    call(
        api_schema,
        "POST",
        "/price-adjustments",
        h,
        body={"product_id": shop.products["apple"], "new_sales_price": "3.75"},
    )
    call(
        api_schema,
        "POST",
        "/payments",
        h,
        body={
            "user_id": shop.customer_id,
            "payment_type": "in",
            "amount": "2.00",
            "payment_mode_id": "cash",
            "invoices": [{"order_id": str(credit["order_id"]), "amount": "2.00"}],
        },
    )
    call(
        api_schema,
        "POST",
        "/payments",
        h,
        body={
            "user_id": shop.supplier_id,
            "payment_type": "out",
            "amount": "1.00",
            "payment_mode_id": shop.cash_mode_id,
            "date": day,
            "reference": "wire-1",
        },
    )
    for paid in (True, False):
        call(
            api_schema,
            "POST",
            "/expenses",
            h,
            body={
                "expense_category_id": expense_category,
                "amount": "4.20",
                "date": day,
                **({"payment_mode_id": "cash"} if paid else {"user_id": shop.supplier_id}),
            },
        )
    sales_return = call(
        api_schema,
        "POST",
        "/sales-returns",
        h,
        body={
            "user_id": shop.customer_id,
            "order_date": day,
            "invoice_number": sale["invoice_number"],
            "items": [{"product_id": shop.products["apple"], "quantity": 1, "unit_price": 3.5}],
        },
    )
    purchase_return = call(
        api_schema,
        "POST",
        "/purchase-returns",
        h,
        body={
            "user_id": shop.supplier_id,
            "order_date": day,
            "invoice_number": purchase["invoice_number"],
            "items": [{"product_id": shop.xid("tea"), "quantity": 1, "unit_price": 5}],
        },
    )
    # a replay of a write answers the same documented shape
    replay = {**h, "Idempotency-Key": "fuzz-replay-1"}
    body = {"product_id": shop.xid("apple"), "new_sales_price": 3.8}
    first = call(api_schema, "POST", "/price-adjustments", replay, body=body)
    assert call(api_schema, "POST", "/price-adjustments", replay, body=body) == first

    # terminal callback: confirmed, then the same reference again (duplicate)
    ref, secret = provider
    payload = {
        "order_id": credit["order_id"],
        "status": "confirmed",
        "amount": "1.50",
        "reference": "fuzz-acq-1",
    }
    raw = json.dumps(payload).encode()
    signed = {
        "Content-Type": "application/json",
        "X-Service-Signature": crypto.hmac_hex(secret, raw),
    }
    for _ in range(2):
        out = call(
            api_schema,
            "POST",
            "/terminal-callbacks/{provider}",
            signed,
            path_parameters={"provider": ref},
            body=payload,
        )
    assert out["duplicate"] is True

    # issue 16: preview, void, shifts, receipts
    preview = call(api_schema, "POST", "/sales/preview", h, body=dict(credit_body(shop, day)))
    assert preview["data"]["total"] == "3.50"
    shift = call(
        api_schema, "POST", "/shifts", h, body={"opening_float": "10.00", "register": "fz"}
    )
    sid = shift["data"]["id"]
    tender = [{"amount": "3.50", "payment_mode_id": "cash"}]
    in_shift = call(
        api_schema,
        "POST",
        "/sales",
        h,
        body={**credit_body(shop, day), "shift_id": sid, "all_payments": tender},
    )
    call(
        api_schema,
        "POST",
        "/shifts/{shift_id}/cash",
        h,
        path_parameters={"shift_id": str(sid)},
        body={"direction": "out", "amount": "1.00", "reason": "milk",
              "expense_category_id": expense_category},
    )  # fmt: skip
    call(api_schema, "GET", "/shifts/{shift_id}", h, path_parameters={"shift_id": str(sid)})
    call(api_schema, "GET", "/shifts", h)
    call(
        api_schema,
        "POST",
        "/sales/{order_id}/void",
        h,
        path_parameters={"order_id": str(in_shift["order_id"])},
        body={"reason": "fuzz"},
    )
    z = call(
        api_schema,
        "POST",
        "/shifts/{shift_id}/close",
        h,
        path_parameters={"shift_id": str(sid)},
        body={"counted": [{"payment_mode_id": "cash", "amount": "9.00"}]},
    )
    assert z["data"]["report"] == "Z" and z["data"]["over_short"] == "0.00"
    for path, ref, query in (
        ("/sales/{order_id}/receipt", sale["order_id"], {"format": "html", "size": "a4"}),
        ("/sales/{order_id}/receipt", sale["invoice_number"], {"format": "text", "width": "48"}),
        ("/sales-returns/{order_id}/receipt", sales_return["return_id"], {"format": "text"}),
    ):
        operation = api_schema[f"/api/v1/public{path}"]["GET"]
        case = operation.Case(path_parameters={"order_id": str(ref)}, query=query)
        response = case.call_and_validate(headers=h, checks=CHECKS)
        assert response.status_code == 200, response.text

    # every read, with data in it
    for path in (
        "/warehouses",
        "/categories",
        "/brands",
        "/customers",
        "/suppliers",
        "/payment-modes",
        "/taxes",
        "/units",
        "/expense-categories",
        "/products",
        "/sales",
        "/purchases",
        "/sales-returns",
        "/purchase-returns",
        "/stock-adjustments",
        "/price-adjustments",
        "/expenses",
    ):
        out = call(api_schema, "GET", path, h)
        assert out["status"] == "success"
    customer = {"name": "Fuzz Till Customer", "email": "f@example.com", "unique_id": "fz-c-1"}
    made = call(api_schema, "POST", "/customers", h, body=customer)
    assert call(api_schema, "POST", "/customers", h, body=customer) == made
    call(api_schema, "GET", "/products", h, query={"search": "juice", "limit": "1000"})
    call(api_schema, "GET", "/sales", h, query={"dates": f"{day},{day}", "page": "1"})
    for path, value in (
        ("/products/{ref}", shop.xid("water")),
        ("/categories/{ref}", xid.encode(shop.category_id)),
        ("/brands/{ref}", str(shop.brand_id)),
    ):
        name = path.split("{")[1].rstrip("}")
        call(api_schema, "GET", path, h, path_parameters={name: value})
    for path, ref in (
        ("/sales/{order_id}", sale["order_id"]),
        ("/sales/{order_id}", sale["invoice_number"]),
        ("/purchases/{order_id}", purchase["purchase_id"]),
        ("/sales-returns/{order_id}", sales_return["invoice_number"]),
        ("/purchase-returns/{order_id}", purchase_return["return_id"]),
    ):
        call(api_schema, "GET", path, h, path_parameters={"order_id": ref})
    for party in (shop.customer_id, shop.supplier_id):
        call(api_schema, "GET", "/payments/user-invoices", h, query={"user_id": str(party)})

    # change feeds of an offline till, with a cursor to page on
    for path in ("/products", "/categories", "/brands", "/customers", "/payment-modes", "/taxes"):
        first = call(
            api_schema,
            "GET",
            path,
            h,
            query={"updated_since": "1970-01-01T00:00:00Z", "limit": "1"},
        )
        if first["data"]["next_cursor"]:  # (one brand only: a single page)
            call(api_schema, "GET", path, h, query={"cursor": first["data"]["next_cursor"]})

    # stock transfers: dispatched, received in part, cancelled; read from both ends
    other = shop.other_key.headers
    items = [{"product_id": shop.xid("water"), "quantity": 2}]
    sent = call(
        api_schema,
        "POST",
        "/stock-transfers",
        h,
        body={"to_warehouse_id": shop.other_warehouse_id, "items": items, "notes": "van"},
    )
    call(
        api_schema,
        "POST",
        "/stock-transfers/{ref}/receive",
        other,
        path_parameters={"ref": str(sent["transfer_id"])},
        body={"items": [{"product_id": shop.products["water"], "quantity": 1}], "reason": "wet"},
    )
    back = call(
        api_schema,
        "POST",
        "/stock-transfers",
        h,
        body={"to_warehouse_id": xid.encode(shop.other_warehouse_id), "items": items},
    )
    call(
        api_schema,
        "POST",
        "/stock-transfers/{ref}/cancel",
        h,
        path_parameters={"ref": back["data"]["xid"]},
        body={},
    )
    for headers in (h, other):
        call(api_schema, "GET", "/stock-transfers", headers)
        call(
            api_schema,
            "GET",
            "/stock-transfers/{ref}",
            headers,
            path_parameters={"ref": str(sent["transfer_id"])},
        )


def test_errors_are_documented_envelopes(
    api_schema: Any, fuzz_shop: Shop, limited_shop: Shop, expired_shop: Shop
) -> None:
    h = fuzz_shop.headers
    call(api_schema, "GET", "/brands", limited_shop.headers)
    call(api_schema, "GET", "/brands", limited_shop.headers, expect=429)
    call(api_schema, "GET", "/brands", expired_shop.headers, expect=403)
    sale = {"user_id": 1, "order_date": "2026-11-20", "product_items": []}
    call(api_schema, "GET", "/warehouses", {"Accept": "application/json"}, expect=401)
    call(api_schema, "POST", "/sales", h, body=sale, expect=422)
    call(api_schema, "GET", "/sales/{order_id}", h, path_parameters={"order_id": "x"}, expect=404)
    call(api_schema, "GET", "/products", h, query={"page": "zero"}, expect=422)
    call(api_schema, "GET", "/payments/user-invoices", h, expect=422)
    operation = api_schema["/api/v1/public/sales"]["POST"]
    for content_type, raw, status in (
        ("text/plain", b"{}", 415),
        ("application/json", b"{not json", 400),
        ("application/json", b"", 400),
    ):
        case = operation.Case(body=raw, media_type="application/octet-stream")
        response = case.call(headers={**h, "Content-Type": content_type})
        assert response.status_code == status, response.text
        case.validate_response(response, checks=CHECKS)


async def test_books_balance_after_fuzzing(db: Database, fuzz_shop: Shop) -> None:
    await check_books(db, fuzz_shop.company_id)


def test_document_names_do_not_collide() -> None:
    """Request schemas are merged in beside FastAPI's and the answers' types: a
    response shape named like a request body would silently replace it (or be
    replaced). ``api.docs.add_components`` refuses it wherever the two meet; the
    document builds, and a clash either way is refused."""
    doc = create_app(Settings(database_url="sqlite:///:memory:")).openapi()
    for name, body in BODY_SCHEMAS.items():
        assert doc["components"]["schemas"][name] == body, name
    name, body = next(iter(BODY_SCHEMAS.items()))
    answer = {"type": "object", "properties": {"answer": {"type": "string"}}}
    with pytest.raises(ValueError, match=name):
        add_components({"components": {"schemas": {name: answer}}}, {name: body})
    with pytest.raises(ValueError, match=name):
        add_components({"components": {"schemas": {name: body}}}, {name: answer})


# --- the back office --------------------------------------------------------------------

# Every admin operation but the session's own (a fuzzed logout would end it).
ADMIN = "^/api/v1/admin/(?!login|logout)"


@pytest.fixture(scope="module")
async def admin_headers(db: Database, fuzz_shop: Shop) -> dict[str, str]:
    """A session of the fuzz shop's owner, opened through the login service."""
    from tillbook.auth import admin
    from tillbook.auth.ratelimit import RateLimiter
    from tillbook.models import User

    email = await db.read(
        lambda s: s.scalar(
            select(User.email).where(User.company_id == fuzz_shop.company_id, User.role == "owner")
        )
    )
    assert isinstance(email, str)
    session = await admin.login(db, RateLimiter(None), email, "correct horse battery", "127.0.0.1")
    return {"Authorization": f"Bearer {session.token}"}


admin_schema = schemathesis.pytest.from_fixture("api_schema").include(path_regex=ADMIN)


@admin_schema.parametrize()
def test_fuzz_admin_api(case: schemathesis.Case[Any], admin_headers: dict[str, str]) -> None:
    """The back office under the same checks as the public API: no 5xx, answers as
    documented, every error the envelope."""
    case.call_and_validate(headers=admin_headers, checks=CHECKS)
