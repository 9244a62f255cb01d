"""The client against a live ``tillbook serve``: every public endpoint, signed,
typed answers, errors as exceptions, a lost answer retried with the same key."""

from __future__ import annotations

import datetime as dt
import time
from decimal import Decimal
from typing import Any

import httpx
import pytest
from conftest import FAST, Server, books_balanced
from tillbook_client import AsyncClient, Client, NotFound, ServiceUnavailable, ValidationError
from tillbook_client.models import Order, Product

TODAY = dt.date.today().isoformat()


def test_every_public_endpoint(client: Client, demo: dict[str, Any], server: Server) -> None:
    (warehouse,) = client.warehouses()
    assert warehouse.id == demo["warehouses"][0]["id"]
    products = list(client.iter_products(limit=3))  # several pages
    assert len(products) >= 7 and all(isinstance(p, Product) for p in products)
    first = products[0]
    assert client.product(first.xid).id == first.id
    assert client.products(search=first.item_code).data[0].id == first.id
    tree = client.categories()
    assert tree and client.category(tree[0].id).name == tree[0].name
    brands = client.brands()
    assert brands and client.brand(brands[0].xid).id == brands[0].id
    customers = list(client.iter_customers())
    customer = next(c for c in customers if not c.is_walk_in)
    new = client.create_customer({"name": "Client Test Customer", "phone": "555-0199"})
    assert new.name == "Client Test Customer"
    supplier = client.suppliers().data[0]
    modes = {m.code: m for m in client.payment_modes()}
    assert {"cash", "card"} <= set(modes)
    assert client.taxes() and client.units()
    expense_category = client.expense_categories()[0]

    stocked = max(products, key=lambda p: p.current_stock)
    sale = client.create_sale(
        {
            "user_id": customer.id,
            "order_date": TODAY,
            "product_items": [
                {"xid": stocked.xid, "quantity": 2, "unit_price": stocked.sales_price}
            ],
        }
    )
    assert sale.payment_status == "unpaid" and sale.due_amount > 0
    read = client.sale(sale.invoice_number)
    assert isinstance(read, Order) and read.items[0].quantity == 2
    assert any(s.id == sale.order_id for s in client.iter_sales(dates=f"{TODAY},{TODAY}"))

    open_invoices = client.user_invoices(customer.id)
    assert any(i.order_id == sale.order_id for i in open_invoices.invoices)
    payment = client.create_payment(
        {
            "user_id": customer.id,
            "payment_type": "in",
            "amount": sale.due_amount,
            "payment_mode_id": "cash",
            "invoices": [{"order_id": sale.invoice_number, "amount": sale.due_amount}],
        }
    )
    assert payment.allocations[0].payment_status == "paid"
    assert client.sale(sale.order_id).payment_status == "paid"

    returned = client.create_sales_return(
        {
            "user_id": customer.id,
            "order_date": TODAY,
            "invoice_number": sale.invoice_number,
            "items": [{"product_id": stocked.id, "quantity": 1, "unit_price": stocked.sales_price}],
        }
    )
    assert client.sales_return(returned.return_id).original_order_id == sale.order_id
    assert client.sales_returns().total >= 1

    purchase = client.create_purchase(
        {
            "user_id": supplier.id,
            "order_date": TODAY,
            "product_items": [{"xid": stocked.xid, "quantity": 5, "unit_price": "1.00"}],
        }
    )
    assert client.purchase(purchase.purchase_id).total == Decimal("5.00")
    assert client.purchases().total >= 1
    back = client.create_purchase_return(
        {
            "user_id": supplier.id,
            "order_date": TODAY,
            "invoice_number": purchase.invoice_number,
            "items": [{"product_id": stocked.id, "quantity": 1, "unit_price": "1.00"}],
        }
    )
    assert client.purchase_return(back.return_id).order_type == "purchase-returns"
    assert client.purchase_returns().total >= 1

    adjusted = client.create_stock_adjustment(
        {"product_id": stocked.id, "quantity": "1", "adjustment_type": "subtract", "notes": "count"}
    )
    assert any(a.id == adjusted.adjustment_id for a in client.iter_stock_adjustments())
    priced = client.create_price_adjustment(
        {"product_id": stocked.id, "new_sales_price": stocked.sales_price + 1}
    )
    assert priced.new_price == stocked.sales_price + 1
    assert client.price_adjustments().total >= 1
    expense = client.create_expense(
        {
            "expense_category_id": expense_category.id,
            "amount": "3.50",
            "payment_mode_id": "cash",
            "date": TODAY,
        }
    )
    assert expense.expense_status == "paid"
    assert any(e.id == expense.expense_id for e in client.iter_expenses())
    books_balanced(server, demo["id"])


def test_errors_are_exceptions_with_fields(client: Client, demo: dict[str, Any]) -> None:
    with pytest.raises(NotFound) as missing:
        client.sale("SAL-99999")
    assert missing.value.status == 404 and missing.value.message
    with pytest.raises(ValidationError) as bad:
        client.create_sale(
            {"user_id": demo["customers"][0]["id"], "order_date": TODAY, "product_items": []}
        )
    assert bad.value.status == 422 and "product_items" in bad.value.errors


class LoseFirstAnswer(httpx.BaseTransport):
    """Forwards every request to the server, but answers the first POST with a 503
    as if the real answer had been lost on the way back."""

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.keys: list[str | None] = []
        self.signatures: list[str | None] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        if request.method != "POST":
            return response
        self.keys.append(request.headers.get("idempotency-key"))
        self.signatures.append(request.headers.get("x-service-signature"))
        if len(self.keys) == 1:
            response.read()
            return httpx.Response(
                503, headers={"Retry-After": "0"}, json={"status": "error", "message": "injected"}
            )
        return response


def test_a_lost_answer_is_retried_and_recorded_once(
    server: Server, key: dict[str, Any], demo: dict[str, Any]
) -> None:
    transport = LoseFirstAnswer()
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        time.sleep(seconds)

    with Client(
        server.url,
        key["public_key"],
        key["secret_key"],
        hmac_secret=key["hmac_secret"],
        retry=FAST,
        transport=transport,
        sleep=sleep,
    ) as c:
        product = next(p for p in c.iter_products() if p.current_stock > 5)
        before = c.sales().total
        sale = c.create_sale(
            {
                "user_id": demo["walk_in_customer_id"],
                "order_date": TODAY,
                "product_items": [
                    {"xid": product.xid, "quantity": 1, "unit_price": product.sales_price}
                ],
                "all_payments": [{"amount": product.sales_price, "payment_mode_id": "cash"}],
            }
        )
        assert c.sales().total == before + 1
        assert c.sale(sale.order_id).payment_status == "paid"
    assert len(transport.keys) == 2 and transport.keys[0] == transport.keys[1] is not None
    assert transport.signatures[0] != transport.signatures[1]  # signed anew, a second later
    assert len(sleeps) == 1 and 0 < sleeps[0] <= 1.1
    books_balanced(server, demo["id"])


def test_503_bounded(server: Server, key: dict[str, Any]) -> None:
    def always_503(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            503, headers={"Retry-After": "1"}, json={"status": "error", "message": "down"}
        )

    sleeps: list[float] = []
    c = Client(
        server.url,
        key["public_key"],
        key["secret_key"],
        retry=FAST,
        transport=httpx.MockTransport(always_503),
        sleep=sleeps.append,
    )
    with c, pytest.raises(ServiceUnavailable) as down:
        c.warehouses()
    assert down.value.retry_after == 1 and sleeps == [1.0, 1.0]  # 3 sends, 2 waits


async def test_async_client(server: Server, key: dict[str, Any], demo: dict[str, Any]) -> None:
    async with AsyncClient(
        server.url, key["public_key"], key["secret_key"], hmac_secret=key["hmac_secret"], retry=FAST
    ) as c:
        products = [p async for p in c.iter_products(limit=4)]
        assert len(products) >= 7
        product = next(p for p in products if p.current_stock > 3)
        sale = await c.create_sale(
            {
                "user_id": demo["walk_in_customer_id"],
                "order_date": TODAY,
                "product_items": [
                    {"xid": product.xid, "quantity": 1, "unit_price": product.sales_price}
                ],
            }
        )
        assert (await c.sale(sale.order_id)).invoice_number == sale.invoice_number
        with pytest.raises(NotFound):
            await c.product("no-such-product")


def test_a_sale_and_its_payment_in_a_foreign_currency(
    client: Client, demo: dict[str, Any], server: Server
) -> None:
    """The client sends ``currency`` like any field and reads the base totals back
    (DESIGN §16); the currency and its rate are set with the operator's CLI."""
    company = str(demo["id"])
    server.cli("currency", "enable", "EUR", "--company", company, "--json")
    server.cli(
        "rates",
        "set",
        "--company",
        company,
        "--currency",
        "EUR",
        "--date",
        "2020-01-01",
        "--rate",
        "1.25",
        "--json",
    )
    customer = next(c for c in client.iter_customers() if not c.is_walk_in)
    stocked = max(client.iter_products(), key=lambda p: p.current_stock)
    sale = client.create_sale(
        {
            "user_id": customer.id,
            "order_date": TODAY,
            "currency": "EUR",
            "product_items": [{"xid": stocked.xid, "quantity": 1, "unit_price": "8.00"}],
        }
    )
    assert (sale.currency, sale.exchange_rate) == ("EUR", Decimal("1.25"))
    assert sale.due_amount == Decimal("8.00") and sale.base_total == Decimal("10.00")
    read = client.sale(sale.invoice_number)
    assert read.currency == "EUR" and read.base_due == Decimal("10.00")
    payment = client.create_payment(
        {
            "user_id": customer.id,
            "payment_type": "in",
            "amount": "8.00",
            "payment_mode_id": "cash",
            "currency": "EUR",
            "exchange_rate": "1.30",
            "invoices": [{"order_id": sale.order_id, "amount": "8.00"}],
        }
    )
    assert payment.currency == "EUR" and payment.base_amount == Decimal("10.40")
    assert client.sale(sale.order_id).base_due == Decimal("0.00")
    books_balanced(server, demo["id"])
