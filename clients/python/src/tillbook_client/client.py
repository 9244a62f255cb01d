"""The clients: ``Client`` (sync) and ``AsyncClient``, on httpx.

Every request sends the key pair, and a signature when ``hmac_secret`` is given.
Every POST carries an ``Idempotency-Key`` (yours, or a new one) kept across this
client's own retries, so a retried write is stored once. 429, 503 and connection
failures are retried (``retry.RetryPolicy``). Errors are raised as
``errors.ApiError`` subclasses. ``iter_*`` methods walk every page.

The endpoint methods of the two classes are the same list, one sync and one
async; ``tests/test_client_surface.py`` checks the two stay alike.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from typing import Any
from urllib.parse import quote

import httpx

from tillbook_client._core import PUBLIC, Core, clean, encode, new_key
from tillbook_client.errors import TransportError
from tillbook_client.models import (
    Brand,
    Category,
    Customer,
    Expense,
    ExpenseCategory,
    ExpenseCreated,
    Order,
    Page,
    Payment,
    PaymentMode,
    PriceAdjustmentBatch,
    PriceAdjustmentCreated,
    Product,
    ProductDetail,
    PurchaseCreated,
    ReturnCreated,
    SaleCreated,
    StockAdjustment,
    StockAdjustmentCreated,
    Supplier,
    Tax,
    Unit,
    UserInvoices,
    Warehouse,
)
from tillbook_client.retry import RetryPolicy


def _q(ref: str | int) -> str:
    return quote(str(ref), safe="")


class Client:
    """A synchronous client for one key pair (one warehouse).

    ``base_url`` is the service's root (``http://127.0.0.1:8000``). ``transport``
    and ``sleep`` are for tests (an ``httpx.MockTransport``, a fake clock)."""

    def __init__(
        self,
        base_url: str,
        public_key: str,
        secret_key: str,
        *,
        hmac_secret: str | None = None,
        retry: RetryPolicy | None = None,
        timeout: float = 15.0,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._core = Core(base_url, public_key, secret_key, hmac_secret=hmac_secret, retry=retry)
        self._http = httpx.Client(timeout=timeout, transport=transport)
        self._sleep = sleep

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        idempotency_key: str | None = None,
    ) -> Any:
        """Send one request (``path`` from the root), retrying as the policy says;
        the decoded body of the 2xx answer, else an ``ApiError``."""
        method = method.upper()
        if method == "POST" and idempotency_key is None:
            idempotency_key = new_key()
        body = None if json is None else encode(json)
        query = clean(params)
        attempt = 0
        while True:
            request = self._core.build(self._http, method, path, query, body, idempotency_key)
            try:
                response = self._http.send(request)
            except httpx.TransportError as exc:
                wait = self._core.retry.wait(attempt, None)
                if wait is None:
                    raise TransportError(f"{method} {path}: {exc!r}") from exc
            else:
                payload, error, wait = self._core.judge(response, attempt)
                if error is None:
                    return payload
                if wait is None:
                    raise error
            self._sleep(self._core.resign_wait(method, wait))
            attempt += 1

    def _get(self, path: str, params: Mapping[str, Any] | None) -> Any:
        return self.request("GET", PUBLIC + path, params=params)

    def _post(self, path: str, body: Mapping[str, Any], key: str | None) -> Any:
        return self.request("POST", PUBLIC + path, json=dict(body), idempotency_key=key)

    def warehouses(self) -> list[Warehouse]:
        """The key's warehouse (a list of one)."""
        payload = self._get("/warehouses", None)
        return [Warehouse.model_validate(x) for x in payload["data"]]

    def products(
        self,
        page: int = 1,
        limit: int = 100,
        search: str | None = None,
        category_id: str | int | None = None,
        brand_id: str | int | None = None,
    ) -> Page[Product]:
        """One page of the warehouse's products."""
        payload = self._get(
            "/products",
            dict(page=page, limit=limit, search=search, category_id=category_id, brand_id=brand_id),
        )
        return Page[Product].model_validate(payload["data"])

    def product(self, ref: str | int) -> ProductDetail:
        """One product by id, xid, item code or barcode."""
        payload = self._get(f"/products/{_q(ref)}", None)
        return ProductDetail.model_validate(payload["data"])

    def categories(self) -> list[Category]:
        """The category tree."""
        payload = self._get("/categories", None)
        return [Category.model_validate(x) for x in payload["data"]]

    def category(self, ref: str | int) -> Category:
        """One category."""
        payload = self._get(f"/categories/{_q(ref)}", None)
        return Category.model_validate(payload["data"])

    def brands(self) -> list[Brand]:
        """The brands."""
        payload = self._get("/brands", None)
        return [Brand.model_validate(x) for x in payload["data"]]

    def brand(self, ref: str | int) -> Brand:
        """One brand."""
        payload = self._get(f"/brands/{_q(ref)}", None)
        return Brand.model_validate(payload["data"])

    def customers(
        self, page: int = 1, limit: int = 100, search: str | None = None
    ) -> Page[Customer]:
        """One page of customers."""
        payload = self._get("/customers", dict(page=page, limit=limit, search=search))
        return Page[Customer].model_validate(payload["data"])

    def create_customer(
        self, body: Mapping[str, Any], *, idempotency_key: str | None = None
    ) -> Customer:
        """Sign up a customer."""
        payload = self._post("/customers", body, idempotency_key)
        return Customer.model_validate(payload["data"])

    def suppliers(self, page: int = 1, limit: int = 100) -> Page[Supplier]:
        """One page of suppliers."""
        payload = self._get("/suppliers", dict(page=page, limit=limit))
        return Page[Supplier].model_validate(payload["data"])

    def payment_modes(self) -> list[PaymentMode]:
        """Payment modes."""
        payload = self._get("/payment-modes", None)
        return [PaymentMode.model_validate(x) for x in payload["data"]]

    def taxes(self) -> list[Tax]:
        """Tax rules."""
        payload = self._get("/taxes", None)
        return [Tax.model_validate(x) for x in payload["data"]]

    def units(self) -> list[Unit]:
        """Units of measure."""
        payload = self._get("/units", None)
        return [Unit.model_validate(x) for x in payload["data"]]

    def expense_categories(self) -> list[ExpenseCategory]:
        """Expense categories."""
        payload = self._get("/expense-categories", None)
        return [ExpenseCategory.model_validate(x) for x in payload["data"]]

    def create_sale(
        self, body: Mapping[str, Any], *, idempotency_key: str | None = None
    ) -> SaleCreated:
        """Record a sale (see also ``OfflineQueue``)."""
        payload = self._post("/sales", body, idempotency_key)
        return SaleCreated.model_validate(payload)

    def sales(self, page: int = 1, limit: int = 100, dates: str | None = None) -> Page[Order]:
        """One page of sales."""
        payload = self._get("/sales", dict(page=page, limit=limit, dates=dates))
        return Page[Order].model_validate(payload["data"])

    def sale(self, ref: str | int) -> Order:
        """One sale by id, xid or invoice number."""
        payload = self._get(f"/sales/{_q(ref)}", None)
        return Order.model_validate(payload["data"])

    def create_purchase(
        self, body: Mapping[str, Any], *, idempotency_key: str | None = None
    ) -> PurchaseCreated:
        """Record a purchase."""
        payload = self._post("/purchases", body, idempotency_key)
        return PurchaseCreated.model_validate(payload)

    def purchases(self, page: int = 1, limit: int = 100, dates: str | None = None) -> Page[Order]:
        """One page of purchases."""
        payload = self._get("/purchases", dict(page=page, limit=limit, dates=dates))
        return Page[Order].model_validate(payload["data"])

    def purchase(self, ref: str | int) -> Order:
        """One purchase."""
        payload = self._get(f"/purchases/{_q(ref)}", None)
        return Order.model_validate(payload["data"])

    def create_sales_return(
        self, body: Mapping[str, Any], *, idempotency_key: str | None = None
    ) -> ReturnCreated:
        """Record a sales return."""
        payload = self._post("/sales-returns", body, idempotency_key)
        return ReturnCreated.model_validate(payload)

    def sales_returns(self, page: int = 1, limit: int = 100) -> Page[Order]:
        """One page of sales returns."""
        payload = self._get("/sales-returns", dict(page=page, limit=limit))
        return Page[Order].model_validate(payload["data"])

    def sales_return(self, ref: str | int) -> Order:
        """One sales return."""
        payload = self._get(f"/sales-returns/{_q(ref)}", None)
        return Order.model_validate(payload["data"])

    def create_purchase_return(
        self, body: Mapping[str, Any], *, idempotency_key: str | None = None
    ) -> ReturnCreated:
        """Record a purchase return."""
        payload = self._post("/purchase-returns", body, idempotency_key)
        return ReturnCreated.model_validate(payload)

    def purchase_returns(self, page: int = 1, limit: int = 100) -> Page[Order]:
        """One page of purchase returns."""
        payload = self._get("/purchase-returns", dict(page=page, limit=limit))
        return Page[Order].model_validate(payload["data"])

    def purchase_return(self, ref: str | int) -> Order:
        """One purchase return."""
        payload = self._get(f"/purchase-returns/{_q(ref)}", None)
        return Order.model_validate(payload["data"])

    def create_stock_adjustment(
        self, body: Mapping[str, Any], *, idempotency_key: str | None = None
    ) -> StockAdjustmentCreated:
        """Add or remove stock."""
        payload = self._post("/stock-adjustments", body, idempotency_key)
        return StockAdjustmentCreated.model_validate(payload)

    def stock_adjustments(self, page: int = 1, limit: int = 100) -> Page[StockAdjustment]:
        """One page of stock adjustments."""
        payload = self._get("/stock-adjustments", dict(page=page, limit=limit))
        return Page[StockAdjustment].model_validate(payload["data"])

    def create_price_adjustment(
        self, body: Mapping[str, Any], *, idempotency_key: str | None = None
    ) -> PriceAdjustmentCreated:
        """Change a price."""
        payload = self._post("/price-adjustments", body, idempotency_key)
        return PriceAdjustmentCreated.model_validate(payload)

    def price_adjustments(self, page: int = 1, limit: int = 100) -> Page[PriceAdjustmentBatch]:
        """One page of price changes."""
        payload = self._get("/price-adjustments", dict(page=page, limit=limit))
        return Page[PriceAdjustmentBatch].model_validate(payload["data"])

    def create_payment(
        self, body: Mapping[str, Any], *, idempotency_key: str | None = None
    ) -> Payment:
        """Record a payment."""
        payload = self._post("/payments", body, idempotency_key)
        return Payment.model_validate(payload)

    def user_invoices(self, user_id: str | int) -> UserInvoices:
        """A party's open invoices."""
        payload = self._get("/payments/user-invoices", dict(user_id=user_id))
        return UserInvoices.model_validate(payload["data"])

    def create_expense(
        self, body: Mapping[str, Any], *, idempotency_key: str | None = None
    ) -> ExpenseCreated:
        """Record an expense."""
        payload = self._post("/expenses", body, idempotency_key)
        return ExpenseCreated.model_validate(payload)

    def expenses(self, page: int = 1, limit: int = 100) -> Page[Expense]:
        """One page of expenses."""
        payload = self._get("/expenses", dict(page=page, limit=limit))
        return Page[Expense].model_validate(payload["data"])

    def iter_products(
        self,
        search: str | None = None,
        category_id: str | int | None = None,
        brand_id: str | int | None = None,
        *,
        limit: int = 100,
    ) -> Iterator[Product]:
        """Every record, a page at a time."""
        page = 1
        while True:
            got = self.products(
                page=page, limit=limit, search=search, category_id=category_id, brand_id=brand_id
            )
            yield from got.data
            if page >= got.last_page:
                return
            page += 1

    def iter_customers(self, search: str | None = None, *, limit: int = 100) -> Iterator[Customer]:
        """Every record, a page at a time."""
        page = 1
        while True:
            got = self.customers(page=page, limit=limit, search=search)
            yield from got.data
            if page >= got.last_page:
                return
            page += 1

    def iter_sales(self, dates: str | None = None, *, limit: int = 100) -> Iterator[Order]:
        """Every record, a page at a time."""
        page = 1
        while True:
            got = self.sales(page=page, limit=limit, dates=dates)
            yield from got.data
            if page >= got.last_page:
                return
            page += 1

    def iter_purchases(self, dates: str | None = None, *, limit: int = 100) -> Iterator[Order]:
        """Every record, a page at a time."""
        page = 1
        while True:
            got = self.purchases(page=page, limit=limit, dates=dates)
            yield from got.data
            if page >= got.last_page:
                return
            page += 1

    def iter_stock_adjustments(self, *, limit: int = 100) -> Iterator[StockAdjustment]:
        """Every record, a page at a time."""
        page = 1
        while True:
            got = self.stock_adjustments(page=page, limit=limit)
            yield from got.data
            if page >= got.last_page:
                return
            page += 1

    def iter_expenses(self, *, limit: int = 100) -> Iterator[Expense]:
        """Every record, a page at a time."""
        page = 1
        while True:
            got = self.expenses(page=page, limit=limit)
            yield from got.data
            if page >= got.last_page:
                return
            page += 1


class AsyncClient:
    """The asynchronous twin of ``Client``: the same methods, awaited."""

    def __init__(
        self,
        base_url: str,
        public_key: str,
        secret_key: str,
        *,
        hmac_secret: str | None = None,
        retry: RetryPolicy | None = None,
        timeout: float = 15.0,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Callable[[float], Any] = asyncio.sleep,
    ) -> None:
        self._core = Core(base_url, public_key, secret_key, hmac_secret=hmac_secret, retry=retry)
        self._http = httpx.AsyncClient(timeout=timeout, transport=transport)
        self._sleep = sleep

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        idempotency_key: str | None = None,
    ) -> Any:
        """As ``Client.request``."""
        method = method.upper()
        if method == "POST" and idempotency_key is None:
            idempotency_key = new_key()
        body = None if json is None else encode(json)
        query = clean(params)
        attempt = 0
        while True:
            request = self._core.build(self._http, method, path, query, body, idempotency_key)
            try:
                response = await self._http.send(request)
            except httpx.TransportError as exc:
                wait = self._core.retry.wait(attempt, None)
                if wait is None:
                    raise TransportError(f"{method} {path}: {exc!r}") from exc
            else:
                payload, error, wait = self._core.judge(response, attempt)
                if error is None:
                    return payload
                if wait is None:
                    raise error
            await self._sleep(self._core.resign_wait(method, wait))
            attempt += 1

    async def _get(self, path: str, params: Mapping[str, Any] | None) -> Any:
        return await self.request("GET", PUBLIC + path, params=params)

    async def _post(self, path: str, body: Mapping[str, Any], key: str | None) -> Any:
        return await self.request("POST", PUBLIC + path, json=dict(body), idempotency_key=key)

    async def warehouses(self) -> list[Warehouse]:
        """The key's warehouse (a list of one)."""
        payload = await self._get("/warehouses", None)
        return [Warehouse.model_validate(x) for x in payload["data"]]

    async def products(
        self,
        page: int = 1,
        limit: int = 100,
        search: str | None = None,
        category_id: str | int | None = None,
        brand_id: str | int | None = None,
    ) -> Page[Product]:
        """One page of the warehouse's products."""
        payload = await self._get(
            "/products",
            dict(page=page, limit=limit, search=search, category_id=category_id, brand_id=brand_id),
        )
        return Page[Product].model_validate(payload["data"])

    async def product(self, ref: str | int) -> ProductDetail:
        """One product by id, xid, item code or barcode."""
        payload = await self._get(f"/products/{_q(ref)}", None)
        return ProductDetail.model_validate(payload["data"])

    async def categories(self) -> list[Category]:
        """The category tree."""
        payload = await self._get("/categories", None)
        return [Category.model_validate(x) for x in payload["data"]]

    async def category(self, ref: str | int) -> Category:
        """One category."""
        payload = await self._get(f"/categories/{_q(ref)}", None)
        return Category.model_validate(payload["data"])

    async def brands(self) -> list[Brand]:
        """The brands."""
        payload = await self._get("/brands", None)
        return [Brand.model_validate(x) for x in payload["data"]]

    async def brand(self, ref: str | int) -> Brand:
        """One brand."""
        payload = await self._get(f"/brands/{_q(ref)}", None)
        return Brand.model_validate(payload["data"])

    async def customers(
        self, page: int = 1, limit: int = 100, search: str | None = None
    ) -> Page[Customer]:
        """One page of customers."""
        payload = await self._get("/customers", dict(page=page, limit=limit, search=search))
        return Page[Customer].model_validate(payload["data"])

    async def create_customer(
        self, body: Mapping[str, Any], *, idempotency_key: str | None = None
    ) -> Customer:
        """Sign up a customer."""
        payload = await self._post("/customers", body, idempotency_key)
        return Customer.model_validate(payload["data"])

    async def suppliers(self, page: int = 1, limit: int = 100) -> Page[Supplier]:
        """One page of suppliers."""
        payload = await self._get("/suppliers", dict(page=page, limit=limit))
        return Page[Supplier].model_validate(payload["data"])

    async def payment_modes(self) -> list[PaymentMode]:
        """Payment modes."""
        payload = await self._get("/payment-modes", None)
        return [PaymentMode.model_validate(x) for x in payload["data"]]

    async def taxes(self) -> list[Tax]:
        """Tax rules."""
        payload = await self._get("/taxes", None)
        return [Tax.model_validate(x) for x in payload["data"]]

    async def units(self) -> list[Unit]:
        """Units of measure."""
        payload = await self._get("/units", None)
        return [Unit.model_validate(x) for x in payload["data"]]

    async def expense_categories(self) -> list[ExpenseCategory]:
        """Expense categories."""
        payload = await self._get("/expense-categories", None)
        return [ExpenseCategory.model_validate(x) for x in payload["data"]]

    async def create_sale(
        self, body: Mapping[str, Any], *, idempotency_key: str | None = None
    ) -> SaleCreated:
        """Record a sale (see also ``OfflineQueue``)."""
        payload = await self._post("/sales", body, idempotency_key)
        return SaleCreated.model_validate(payload)

    async def sales(self, page: int = 1, limit: int = 100, dates: str | None = None) -> Page[Order]:
        """One page of sales."""
        payload = await self._get("/sales", dict(page=page, limit=limit, dates=dates))
        return Page[Order].model_validate(payload["data"])

    async def sale(self, ref: str | int) -> Order:
        """One sale by id, xid or invoice number."""
        payload = await self._get(f"/sales/{_q(ref)}", None)
        return Order.model_validate(payload["data"])

    async def create_purchase(
        self, body: Mapping[str, Any], *, idempotency_key: str | None = None
    ) -> PurchaseCreated:
        """Record a purchase."""
        payload = await self._post("/purchases", body, idempotency_key)
        return PurchaseCreated.model_validate(payload)

    async def purchases(
        self, page: int = 1, limit: int = 100, dates: str | None = None
    ) -> Page[Order]:
        """One page of purchases."""
        payload = await self._get("/purchases", dict(page=page, limit=limit, dates=dates))
        return Page[Order].model_validate(payload["data"])

    async def purchase(self, ref: str | int) -> Order:
        """One purchase."""
        payload = await self._get(f"/purchases/{_q(ref)}", None)
        return Order.model_validate(payload["data"])

    async def create_sales_return(
        self, body: Mapping[str, Any], *, idempotency_key: str | None = None
    ) -> ReturnCreated:
        """Record a sales return."""
        payload = await self._post("/sales-returns", body, idempotency_key)
        return ReturnCreated.model_validate(payload)

    async def sales_returns(self, page: int = 1, limit: int = 100) -> Page[Order]:
        """One page of sales returns."""
        payload = await self._get("/sales-returns", dict(page=page, limit=limit))
        return Page[Order].model_validate(payload["data"])

    async def sales_return(self, ref: str | int) -> Order:
        """One sales return."""
        payload = await self._get(f"/sales-returns/{_q(ref)}", None)
        return Order.model_validate(payload["data"])

    async def create_purchase_return(
        self, body: Mapping[str, Any], *, idempotency_key: str | None = None
    ) -> ReturnCreated:
        """Record a purchase return."""
        payload = await self._post("/purchase-returns", body, idempotency_key)
        return ReturnCreated.model_validate(payload)

    async def purchase_returns(self, page: int = 1, limit: int = 100) -> Page[Order]:
        """One page of purchase returns."""
        payload = await self._get("/purchase-returns", dict(page=page, limit=limit))
        return Page[Order].model_validate(payload["data"])

    async def purchase_return(self, ref: str | int) -> Order:
        """One purchase return."""
        payload = await self._get(f"/purchase-returns/{_q(ref)}", None)
        return Order.model_validate(payload["data"])

    async def create_stock_adjustment(
        self, body: Mapping[str, Any], *, idempotency_key: str | None = None
    ) -> StockAdjustmentCreated:
        """Add or remove stock."""
        payload = await self._post("/stock-adjustments", body, idempotency_key)
        return StockAdjustmentCreated.model_validate(payload)

    async def stock_adjustments(self, page: int = 1, limit: int = 100) -> Page[StockAdjustment]:
        """One page of stock adjustments."""
        payload = await self._get("/stock-adjustments", dict(page=page, limit=limit))
        return Page[StockAdjustment].model_validate(payload["data"])

    async def create_price_adjustment(
        self, body: Mapping[str, Any], *, idempotency_key: str | None = None
    ) -> PriceAdjustmentCreated:
        """Change a price."""
        payload = await self._post("/price-adjustments", body, idempotency_key)
        return PriceAdjustmentCreated.model_validate(payload)

    async def price_adjustments(
        self, page: int = 1, limit: int = 100
    ) -> Page[PriceAdjustmentBatch]:
        """One page of price changes."""
        payload = await self._get("/price-adjustments", dict(page=page, limit=limit))
        return Page[PriceAdjustmentBatch].model_validate(payload["data"])

    async def create_payment(
        self, body: Mapping[str, Any], *, idempotency_key: str | None = None
    ) -> Payment:
        """Record a payment."""
        payload = await self._post("/payments", body, idempotency_key)
        return Payment.model_validate(payload)

    async def user_invoices(self, user_id: str | int) -> UserInvoices:
        """A party's open invoices."""
        payload = await self._get("/payments/user-invoices", dict(user_id=user_id))
        return UserInvoices.model_validate(payload["data"])

    async def create_expense(
        self, body: Mapping[str, Any], *, idempotency_key: str | None = None
    ) -> ExpenseCreated:
        """Record an expense."""
        payload = await self._post("/expenses", body, idempotency_key)
        return ExpenseCreated.model_validate(payload)

    async def expenses(self, page: int = 1, limit: int = 100) -> Page[Expense]:
        """One page of expenses."""
        payload = await self._get("/expenses", dict(page=page, limit=limit))
        return Page[Expense].model_validate(payload["data"])

    async def iter_products(
        self,
        search: str | None = None,
        category_id: str | int | None = None,
        brand_id: str | int | None = None,
        *,
        limit: int = 100,
    ) -> AsyncIterator[Product]:
        """Every record, a page at a time."""
        page = 1
        while True:
            got = await self.products(
                page=page, limit=limit, search=search, category_id=category_id, brand_id=brand_id
            )
            for item in got.data:
                yield item
            if page >= got.last_page:
                return
            page += 1

    async def iter_customers(
        self, search: str | None = None, *, limit: int = 100
    ) -> AsyncIterator[Customer]:
        """Every record, a page at a time."""
        page = 1
        while True:
            got = await self.customers(page=page, limit=limit, search=search)
            for item in got.data:
                yield item
            if page >= got.last_page:
                return
            page += 1

    async def iter_sales(
        self, dates: str | None = None, *, limit: int = 100
    ) -> AsyncIterator[Order]:
        """Every record, a page at a time."""
        page = 1
        while True:
            got = await self.sales(page=page, limit=limit, dates=dates)
            for item in got.data:
                yield item
            if page >= got.last_page:
                return
            page += 1

    async def iter_purchases(
        self, dates: str | None = None, *, limit: int = 100
    ) -> AsyncIterator[Order]:
        """Every record, a page at a time."""
        page = 1
        while True:
            got = await self.purchases(page=page, limit=limit, dates=dates)
            for item in got.data:
                yield item
            if page >= got.last_page:
                return
            page += 1

    async def iter_stock_adjustments(self, *, limit: int = 100) -> AsyncIterator[StockAdjustment]:
        """Every record, a page at a time."""
        page = 1
        while True:
            got = await self.stock_adjustments(page=page, limit=limit)
            for item in got.data:
                yield item
            if page >= got.last_page:
                return
            page += 1

    async def iter_expenses(self, *, limit: int = 100) -> AsyncIterator[Expense]:
        """Every record, a page at a time."""
        page = 1
        while True:
            got = await self.expenses(page=page, limit=limit)
            for item in got.data:
                yield item
            if page >= got.last_page:
                return
            page += 1
