"""Random sequences of writes against the real app; the books hold after every step.

A hypothesis state machine (one fresh shop per example) drives POST /sales and
POST /purchases — and POST /payments, /stock-adjustments, /sales-returns,
/purchase-returns and /expenses when the app answers them — with random
quantities, prices, discounts, taxes, units, shipping and split tenders. After
every step: no 5xx; a 422 explains itself (and names a field the test expected to
be refused); a success reports the total that DESIGN.md §3 rounding gives,
computed here independently; stock matches a model of the shop; and
``check_books`` (DESIGN.md §5) passes.

The fixtures live on pytest-asyncio's session loop, and hypothesis runs
synchronous code: the machine runs in a worker thread and hands each coroutine
back to the session loop (which is free, awaiting that thread).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Coroutine
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, TypeVar

import httpx
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from sqlalchemy import func, select

from tests.factories import Shop, by_id, make_shop
from tests.invariants import check_books, gl_balance
from tillbook.db import Database
from tillbook.kit import xid
from tillbook.models import ExpenseCategory, Listing, Product

D = Decimal
T = TypeVar("T")
CENT = D("0.01")
NOTHING = D(0)
OPTIONAL = {
    "payments": "/payments",
    "stock_adjustments": "/stock-adjustments",
    "sales_returns": "/sales-returns",
    "purchase_returns": "/purchase-returns",
    "expenses": "/expenses",
}
OPENING_STOCK = {"apple": D(20), "water": D(100), "tea": D(0)}
BOX = D(12)  # water: a Box of 12 pieces
TAX_RATES = {"excl": (D(10), False), "incl": (D(20), True)}  # tests/factories.py
SALES_PRICE = {"apple": D("3.50"), "water": D("1.00"), "tea": D("9.99")}  # tests/factories.py
PRODUCT_TAX = {"apple": "incl", "water": "excl", "tea": None}  # set by open_shop
# Business dates lie from 1970-01-01 to one day after today (UTC): past days only.
DATES = ["2026-10-20", "2026-10-21", "2026-11-01T09:30:00Z", "2026-11-02"]


def r2(value: Decimal) -> Decimal:
    """DESIGN.md §3: ROUND_HALF_UP to the cent (on purpose not kit/money.py)."""
    return value.quantize(CENT, rounding=ROUND_HALF_UP)


def r4(value: Decimal) -> Decimal:
    return value.quantize(D("0.0001"), rounding=ROUND_HALF_UP)


def taxed(gross: Decimal, tax: str | None) -> tuple[Decimal, Decimal]:
    """(net, tax) of a line's gross before tax, DESIGN.md §3."""
    if tax is None:
        return gross, D(0)
    rate, inclusive = TAX_RATES[tax]
    if inclusive:
        amount = r2(gross * rate / (100 + rate))
        return gross - amount, amount
    return gross, r2(gross * rate / 100)


def dec(lo: str, hi: str, places: int = 2) -> st.SearchStrategy[Decimal]:
    return st.decimals(
        min_value=D(lo), max_value=D(hi), places=places, allow_nan=False, allow_infinity=False
    )


def wire(value: Decimal, as_text: bool) -> str | float:
    """A decimal as the client sends it: a JSON string, or a JSON number (floats of
    at most 4 decimals round-trip exactly through repr)."""
    return str(value) if as_text else float(value)


@dataclass
class Env:
    loop: asyncio.AbstractEventLoop
    client: httpx.AsyncClient
    db: Database
    available: frozenset[str]

    def run(self, coro: Coroutine[Any, Any, T] | Awaitable[T]) -> T:
        async def wrap() -> T:
            return await coro

        return asyncio.run_coroutine_threadsafe(wrap(), self.loop).result(timeout=120)


@dataclass
class LineRecord:
    """A sale line as a return sees it (DESIGN.md §5 "Sales returns and tax")."""

    product: str
    base: Decimal  # base units sold
    price: Decimal  # per base unit, 4 places
    discount_rate: Decimal
    tax: str | None
    net: Decimal
    tax_amount: Decimal
    share: Decimal = NOTHING  # of the order-level discount
    returned: Decimal = NOTHING

    def part(self, quantity: Decimal, price: Decimal) -> tuple[Decimal, Decimal, bool]:
        """(refund, tax, exact) for ``quantity`` more units back at ``price``: the
        line's figures pro rata and cumulative (the last units take what is left);
        below the line's price its discount and tax on that price, capped. With an
        order-discount share a lower price's refund is only bounded (not exact)."""
        before, after = self.returned, self.returned + quantity

        def cum(x: Decimal, n: Decimal) -> Decimal:
            return x if n >= self.base else r2(x * n / self.base)

        def part(x: Decimal) -> Decimal:
            return cum(x, after) - cum(x, before)

        net, tax = part(self.net), part(self.tax_amount)
        refund = part(self.net + self.tax_amount - self.share) if self.share else net + tax
        if price >= self.price:
            return refund, tax, True
        low_net, low_tax = taxed(r2(quantity * price * (1 - self.discount_rate / 100)), self.tax)
        if self.share:
            return refund, min(tax, low_tax), False
        net, tax = min(net, low_net), min(tax, low_tax)
        return net + tax, tax, True


@dataclass
class SaleRecord:
    order_id: int
    invoice_number: str
    customer_id: int
    lines: list[LineRecord] = field(default_factory=list)
    # What its returns have paid back: refunds never exceed what was paid for it.
    refunded: Decimal = field(default_factory=Decimal)

    def left(self, product: str) -> Decimal:
        return sum((ln.base - ln.returned for ln in self.lines if ln.product == product), D(0))


sale_line: st.SearchStrategy[dict[str, Any]] = st.fixed_dictionaries(
    {
        "product": st.sampled_from(["apple", "water", "tea"]),
        "quantity": dec("0.01", "25"),
        "unit_price": dec("0", "99.99"),
        "discount_rate": st.one_of(st.just(D(0)), dec("0", "50")),
        "tax": st.sampled_from([None, "excl", "incl"]),
        "box": st.booleans(),
        "ref": st.sampled_from(["xid", "int", "str"]),
    }
)
purchase_line: st.SearchStrategy[dict[str, Any]] = st.fixed_dictionaries(
    {
        "product": st.sampled_from(["apple", "water", "tea"]),
        "quantity": dec("0.01", "25"),
        "unit_price": st.one_of(dec("0", "99.99"), dec("0", "99.99", 4)),
        "box": st.booleans(),
        "ref": st.sampled_from(["xid", "int", "str"]),
    }
)


class BooksMachine(RuleBasedStateMachine):
    def __init__(self, env: Env) -> None:
        super().__init__()
        self.env = env
        self.shop: Shop | None = None
        self.negative = False
        self.stock: dict[str, Decimal] = {}
        self.sales: list[SaleRecord] = []
        self.dues: dict[tuple[str, int], tuple[int, Decimal]] = {}  # order -> party, due
        self.replayable: tuple[dict[str, Any], str, dict[str, Any]] | None = None
        self.expense_category_id: int | None = None
        self.tax_payable = D(0)  # GL 21200, credit
        self.returns_value = D(0)  # GL 41200, debit: refunds net of tax

    # -- helpers -----------------------------------------------------------

    @property
    def s(self) -> Shop:
        assert self.shop is not None
        return self.shop

    def ref(self, product: str, form: str) -> int | str:
        pid = self.s.products[product]
        forms: dict[str, int | str] = {"xid": xid.encode(pid), "int": pid, "str": str(pid)}
        return forms[form]

    def post(
        self, path: str, body: dict[str, Any], headers: dict[str, str] | None = None
    ) -> httpx.Response:
        r = self.env.run(
            self.env.client.post(path, json=body, headers={**self.s.headers, **(headers or {})})
        )
        assert r.status_code < 500, f"{path} {body} -> {r.status_code} {r.text}"
        assert r.status_code in (200, 422), f"{path} {body} -> {r.status_code} {r.text}"
        out = r.json()
        if r.status_code == 422:
            assert out["status"] == "error", r.text
            assert isinstance(out["message"], str) and out["message"], r.text
        else:
            assert out["status"] == "success", r.text
        return r

    def refused_fields(self, r: httpx.Response) -> set[str]:
        errors = r.json().get("errors")
        assert isinstance(errors, dict) and errors, f"422 without field errors: {r.text}"
        for messages in errors.values():
            assert messages and all(isinstance(m, str) and m for m in messages), r.text
        return set(errors)

    def expect_refusal(self, r: httpx.Response, problems: set[str], body: Any) -> None:
        """200 when no problem was predicted; else a 422 naming only predicted fields."""
        if not problems:
            assert r.status_code == 200, f"expected success for {body}: {r.text}"
            return
        assert r.status_code == 422, f"expected a 422 on {sorted(problems)} for {body}: {r.text}"
        named = self.refused_fields(r)
        assert named <= problems, f"refused {sorted(named)}, expected {sorted(problems)}: {r.text}"

    def draw_tenders(
        self, data: st.DataObject, total: Decimal, kinds: list[str]
    ) -> list[tuple[Decimal, int | str]]:
        kind = data.draw(st.sampled_from(kinds), label="tender kind")
        if kind == "partial" and total >= D("0.02"):
            amount = data.draw(dec("0.01", str(total - CENT)), label="partial")
        elif kind == "exact" and total > 0:
            amount = total
        elif kind == "over":
            amount = total + data.draw(dec("0.01", "5"), label="over by")
        else:
            return []
        modes: st.SearchStrategy[int | str] = st.sampled_from(
            [
                "cash",
                "card",
                "CASH",
                self.s.cash_mode_id,
                self.s.card_mode_id,
                str(self.s.card_mode_id),
            ]
        )
        parts = [amount]
        if amount >= D("0.02") and data.draw(st.booleans(), label="split"):
            first = data.draw(dec("0.01", str(amount - CENT)), label="first tender")
            parts = [first, amount - first]
        return [(a, data.draw(modes, label="mode")) for a in parts]

    async def _stocks(self) -> dict[str, Decimal]:
        ids = {v: k for k, v in self.s.products.items()}

        async def read(session: Any) -> dict[str, Decimal]:
            rows = await session.execute(
                select(Listing.product_id, Listing.current_stock).where(Listing.product_id.in_(ids))
            )
            return {ids[pid]: D(str(stock)) for pid, stock in rows.all()}

        return await self.env.db.read(read)

    # -- setup ---------------------------------------------------------------

    @initialize(negative=st.booleans())
    def open_shop(self, negative: bool) -> None:
        self.negative = negative
        self.shop = self.env.run(make_shop(self.env.db, allow_negative_stock=negative))
        self.stock = dict(OPENING_STOCK)

        async def product_taxes(session: Any) -> None:
            for name, tax in PRODUCT_TAX.items():
                product = await by_id(session, Product, self.s.products[name])
                if tax is not None:
                    product.tax_id = self.s.tax_incl_id if tax == "incl" else self.s.tax10_id

        self.env.run(self.env.db.write(product_taxes))
        if "expenses" in self.env.available:
            self.expense_category_id = self.env.run(
                self.env.db.read(
                    lambda s: s.scalar(
                        select(ExpenseCategory.id)
                        .where(ExpenseCategory.company_id == self.s.company_id)
                        .limit(1)
                    )
                )
            )

    # -- invariants -------------------------------------------------------------

    @invariant()
    def books_hold(self) -> None:
        if self.shop is None:
            return
        self.env.run(check_books(self.env.db, self.s.company_id))
        stocks = self.env.run(self._stocks())
        assert stocks == self.stock, f"stock {stocks} != model {self.stock}"

        async def tax_and_returns(session: Any) -> tuple[Decimal, Decimal]:
            tax = await gl_balance(session, self.s.company_id, "21200")
            return tax, await gl_balance(session, self.s.company_id, "41200")

        tax, returns = self.env.run(self.env.db.read(tax_and_returns))
        assert -tax == self.tax_payable, f"GL 21200 {-tax} != model {self.tax_payable}"
        assert returns == self.returns_value, f"GL 41200 {returns} != model {self.returns_value}"

    # -- sales and purchases -------------------------------------------------------

    @rule(data=st.data())
    def sale(self, data: st.DataObject) -> None:
        lines = data.draw(st.lists(sale_line, min_size=1, max_size=4), label="lines")
        discount = data.draw(st.one_of(st.just(D(0)), dec("0", "40")), label="discount")
        shipping = data.draw(st.one_of(st.just(D(0)), dec("0", "15")), label="shipping")
        as_text = data.draw(st.booleans(), label="decimals as strings")
        items: list[dict[str, Any]] = []
        subtotal = tax_total = D(0)
        needed: dict[str, Decimal] = {}
        first_line: dict[str, int] = {}
        records: list[LineRecord] = []
        for i, line in enumerate(lines):
            q, p, d = line["quantity"], line["unit_price"], line["discount_rate"]
            item: dict[str, Any] = {
                "xid": self.ref(line["product"], line["ref"]),
                "quantity": wire(q, as_text),
                "unit_price": wire(p, as_text),
            }
            if d:
                item["discount_rate"] = wire(d, as_text)
            gross = r2(q * p * (1 - d / 100))
            tax = D(0)
            if line["tax"] is not None:
                rate, inclusive = TAX_RATES[line["tax"]]
                item["tax_id"] = self.s.tax_incl_id if inclusive else self.s.tax10_id
                tax = r2(gross * rate / (100 + rate)) if inclusive else r2(gross * rate / 100)
                net = gross - tax if inclusive else gross
            else:
                net = gross
            subtotal += net
            tax_total += tax
            base, per_base = q, p
            if line["product"] == "water" and line["box"]:
                item["selected_unit_id"] = self.s.box_unit_id
                base, per_base = q * BOX, r4(p / BOX)
            needed[line["product"]] = needed.get(line["product"], D(0)) + base
            first_line.setdefault(line["product"], i)
            items.append(item)
            records.append(LineRecord(line["product"], base, per_base, d, line["tax"], net, tax))
        gross_order = subtotal + tax_total + shipping
        # the order discount spread over the lines and shipping by gross, cumulatively
        running = before = D(0)
        for record in records:
            running += record.net + record.tax_amount
            after = r2(discount * running / gross_order) if gross_order else D(0)
            record.share, before = after - before, after
        total = gross_order - discount
        tenders = self.draw_tenders(
            data, max(total, D(0)), ["none", "partial", "exact", "exact", "over"]
        )
        paid = sum((a for a, _ in tenders), D(0))

        problems: set[str] = set()
        if discount > gross_order:
            problems.add("discount")
        elif paid > total:
            problems.add("all_payments")
        if not self.negative:
            problems |= {
                f"product_items.{first_line[p]}.quantity"
                for p, n in needed.items()
                if n > self.stock[p]
            }

        customer = data.draw(
            st.sampled_from([self.s.customer_id, self.s.walk_in_id]), label="customer"
        )
        body: dict[str, Any] = {
            "user_id": data.draw(
                st.sampled_from([customer, xid.encode(customer)]), label="customer ref"
            ),
            "order_date": data.draw(st.sampled_from(DATES), label="date"),
            "product_items": items,
        }
        if discount or data.draw(st.booleans(), label="send zero discount"):
            body["discount"] = wire(discount, as_text)
        if shipping:
            body["shipping"] = wire(shipping, as_text)
        if tenders:
            body["all_payments"] = [
                {"amount": wire(a, as_text), "payment_mode_id": m} for a, m in tenders
            ]
        if total >= 0 and data.draw(st.booleans(), label="send totals"):
            body.update(total=str(total), subtotal=str(subtotal), tax_amount=str(tax_total))
        token = uuid.uuid4().hex if data.draw(st.booleans(), label="with key") else None
        headers = {"Idempotency-Key": token} if token else None

        r = self.post("/sales", body, headers)
        self.expect_refusal(r, problems, body)
        if r.status_code != 200:
            return
        out = r.json()
        assert D(str(out["total_amount"])) == total, f"total {out['total_amount']} != {total}"
        assert out["invoice_number"].startswith("SAL-")
        assert D(out["paid_amount"]) == paid and D(out["due_amount"]) == total - paid
        status = "paid" if paid >= total else ("partially_paid" if paid > 0 else "unpaid")
        assert out["payment_status"] == status
        for product, n in needed.items():
            self.stock[product] -= n
        self.sales.append(SaleRecord(out["order_id"], out["invoice_number"], customer, records))
        self.tax_payable += tax_total
        self.dues["sales", out["order_id"]] = (customer, total - paid)
        if token:
            self.replayable = (body, token, out)

    @rule(data=st.data())
    def purchase(self, data: st.DataObject) -> None:
        lines = data.draw(st.lists(purchase_line, min_size=1, max_size=3), label="lines")
        as_text = data.draw(st.booleans(), label="decimals as strings")
        items: list[dict[str, Any]] = []
        total = D(0)
        received: dict[str, Decimal] = {}
        for line in lines:
            q, p = line["quantity"], line["unit_price"]
            item: dict[str, Any] = {
                "xid": self.ref(line["product"], line["ref"]),
                "quantity": wire(q, as_text),
                "unit_price": wire(p, as_text),
            }
            base = q
            if line["product"] == "water" and line["box"]:
                item["selected_unit_id"] = self.s.box_unit_id
                base = q * BOX
            total += r2(q * p)
            received[line["product"]] = received.get(line["product"], D(0)) + base
            items.append(item)
        tenders = self.draw_tenders(data, total, ["none", "partial", "exact", "over"])
        paid = sum((a for a, _ in tenders), D(0))
        body: dict[str, Any] = {
            "user_id": self.s.supplier_id,
            "order_date": data.draw(st.sampled_from(DATES), label="date"),
            "product_items": items,
        }
        if tenders:
            body["all_payments"] = [
                {"amount": wire(a, as_text), "payment_mode_id": m} for a, m in tenders
            ]
        r = self.post("/purchases", body)
        self.expect_refusal(r, {"all_payments"} if paid > total else set(), body)
        if r.status_code != 200:
            return
        out = r.json()
        assert D(out["total"]) == total, f"purchase total {out['total']} != {total}"
        assert D(out["due_amount"]) == total - paid
        assert out["invoice_number"].startswith("PUR-")
        for product, n in received.items():
            self.stock[product] += n
        self.dues["purchases", out["purchase_id"]] = (self.s.supplier_id, total - paid)

    # sales and purchases are the heart of the books: give them more of the steps
    @rule(data=st.data())
    def another_sale(self, data: st.DataObject) -> None:
        self.sale(data)

    @rule(data=st.data())
    def yet_another_sale(self, data: st.DataObject) -> None:
        self.sale(data)

    @rule(data=st.data())
    def another_purchase(self, data: st.DataObject) -> None:
        self.purchase(data)

    @precondition(lambda self: self.replayable is not None)
    @rule()
    def replay_sale(self) -> None:
        assert self.replayable is not None
        body, token, first = self.replayable
        r = self.post("/sales", body, {"Idempotency-Key": token})
        assert r.status_code == 200, r.text
        assert r.headers.get("Idempotent-Replayed") == "true"
        assert r.json()["order_id"] == first["order_id"]
        assert r.json()["invoice_number"] == first["invoice_number"]

    # -- the other writes, when the app has them -------------------------------------

    @precondition(lambda self: "payments" in self.env.available and bool(self.dues))
    @rule(data=st.data())
    def payment(self, data: st.DataObject) -> None:
        open_ = sorted(k for k, (_, due) in self.dues.items() if due > 0)
        if open_ and data.draw(st.integers(0, 3), label="pick an open order") > 0:
            kind, order_id = data.draw(st.sampled_from(open_), label="open order")
        else:
            kind, order_id = data.draw(st.sampled_from(sorted(self.dues)), label="any order")
        party = self.dues[kind, order_id][0]
        got = self.env.run(self.env.client.get(f"/{kind}/{order_id}", headers=self.s.headers))
        assert got.status_code == 200, got.text
        due = D(got.json()["data"]["due_amount"])
        if due > 0 and data.draw(st.integers(0, 3), label="within due") > 0:
            amount, problems = data.draw(dec("0.01", str(due)), label="amount"), set()
        else:
            amount = due + data.draw(dec("0.01", "5"), label="over by")
            problems = {"invoices.0.amount", "amount", "invoices"}
        body = {
            "user_id": party,
            "payment_type": "in" if kind == "sales" else "out",
            "amount": str(amount),
            "payment_mode_id": data.draw(st.sampled_from(["cash", "card"]), label="mode"),
            "date": "2026-11-05",
            "reference": f"hyp-{uuid.uuid4().hex[:8]}",
            "invoices": [{"order_id": order_id, "amount": str(amount)}],
        }
        r = self.post("/payments", body)
        if problems:
            assert r.status_code == 422, f"allocation above due {due} accepted: {body} {r.text}"
            return
        assert r.status_code == 200, f"{body} -> {r.text}"
        after = self.env.run(self.env.client.get(f"/{kind}/{order_id}", headers=self.s.headers))
        assert D(after.json()["data"]["due_amount"]) == due - amount, after.text
        self.dues[kind, order_id] = (party, due - amount)

    @precondition(lambda self: "stock_adjustments" in self.env.available)
    @rule(
        product=st.sampled_from(["apple", "water", "tea"]),
        quantity=dec("0.01", "25"),
        kind=st.sampled_from(["add", "subtract"]),
        ref=st.sampled_from(["xid", "int"]),
    )
    def stock_adjustment(self, product: str, quantity: Decimal, kind: str, ref: str) -> None:
        body = {
            "product_id": self.ref(product, ref),
            "quantity": str(quantity),
            "adjustment_type": kind,
            "notes": "hypothesis count",
        }
        r = self.post("/stock-adjustments", body)
        short = kind == "subtract" and quantity > self.stock[product]
        if short and not self.negative:
            assert r.status_code == 422, f"subtract below zero accepted: {body} {r.text}"
            self.refused_fields(r)
            return
        if short and r.status_code == 422:  # a negative-stock warehouse may still refuse
            return
        assert r.status_code == 200, f"{body} -> {r.text}"
        self.stock[product] += quantity if kind == "add" else -quantity
        if "new_stock_level" in r.json():
            assert D(str(r.json()["new_stock_level"])) == self.stock[product], r.text

    @precondition(lambda self: "sales_returns" in self.env.available)
    @rule(data=st.data())
    def sales_return(self, data: st.DataObject) -> None:
        """DESIGN.md §5 "Sales returns and tax": against a sale, the line's price,
        discount and tax, no more than is left, no price above the line's; without
        one, the product's tax and at most its sales price; tenders up to the total."""
        body: dict[str, Any] = {"order_date": "2026-11-06"}
        customer = self.s.customer_id
        problems: set[str] = set()
        open_sales = [s for s in self.sales if any(ln.base > ln.returned for ln in s.lines)]
        parts: list[tuple[LineRecord, Decimal]] = []
        refund = tax = D(0)
        exact = True
        if open_sales and data.draw(st.booleans(), label="of a sale"):
            sale = data.draw(st.sampled_from(open_sales), label="sale")
            product = data.draw(
                st.sampled_from(sorted({ln.product for ln in sale.lines})), label="product"
            )
            left = sale.left(product)
            how = data.draw(st.sampled_from(["some", "some", "rest", "beyond"]), label="how many")
            if how == "some" and left >= CENT:
                quantity = data.draw(dec("0.01", str(min(left, D(25)))), label="quantity")
            elif how == "rest" and left >= CENT:
                quantity = left  # the last units take exactly what is left of the lines
            else:
                quantity = left + data.draw(dec("0.01", "5"), label="beyond by")
            lines = [ln for ln in sale.lines if ln.product == product and ln.base > ln.returned]
            paid = lines[0].price if lines else SALES_PRICE[product]
            kind = data.draw(st.sampled_from(["same", "same", "below", "above"]), label="price")
            if kind == "below" and paid > 0:
                price = data.draw(dec("0", str(paid - D("0.0001")), 4), label="lower price")
            elif kind == "above":
                price = paid + data.draw(dec("0.0001", "5", 4), label="above by")
            else:
                price = paid
            body["invoice_number"] = sale.invoice_number
            customer = sale.customer_id
            if quantity > left:
                problems.add("items.0.quantity")
            else:
                need = quantity
                for ln in lines:
                    take = min(need, ln.base - ln.returned)
                    if take <= 0:
                        break
                    if price > ln.price:
                        problems.add("items.0.unit_price")
                        break
                    part_refund, part_tax, part_exact = ln.part(take, price)
                    refund, tax, exact = refund + part_refund, tax + part_tax, exact and part_exact
                    parts.append((ln, take))
                    need -= take
        else:
            product = data.draw(st.sampled_from(["apple", "water", "tea"]), label="product")
            quantity = data.draw(dec("0.01", "10"), label="quantity")
            shelf = SALES_PRICE[product]
            if data.draw(st.integers(0, 3), label="at most the sales price") > 0:
                price = data.draw(dec("0", str(shelf), 4), label="refund price")
            else:
                price = shelf + data.draw(dec("0.0001", "500", 4), label="above by")
                problems.add("items.0.unit_price")
            net, tax = taxed(r2(quantity * price), PRODUCT_TAX[product])
            refund = net + tax
        body["user_id"] = customer
        body["items"] = [
            {
                "product_id": self.ref(product, "xid"),
                "quantity": str(quantity),
                "unit_price": str(price),
            }
        ]
        tenders = []
        against = sale if "invoice_number" in body else None
        if exact:
            tenders = self.draw_tenders(data, refund, ["none", "partial", "exact", "over"])
            given = sum((a for a, _ in tenders), D(0))
            if given > refund and not problems:
                problems.add("all_payments")
            elif against is not None and given > 0 and not problems:
                # Σ refunded on a sale ≤ what was paid for it (at the sale or since).
                r = self.env.run(
                    self.env.client.get(f"/sales/{against.order_id}", headers=self.s.headers)
                )
                paid_for = D(r.json()["data"]["paid_amount"])
                if given > paid_for - against.refunded:
                    problems.add("all_payments")
        if tenders:
            body["all_payments"] = [{"amount": str(a), "payment_mode_id": m} for a, m in tenders]
        r = self.post("/sales-returns", body)
        self.expect_refusal(r, problems, body)
        if r.status_code != 200:
            return
        out = r.json()
        got_total, got_tax = D(out["total"]), D(out["tax_amount"])
        assert got_tax == tax, f"return tax {got_tax} != {tax}: {body}"
        if exact:
            assert got_total == refund, f"return total {got_total} != {refund}: {body}"
        else:
            assert D(0) <= got_total <= refund, f"return total {got_total} above {refund}"
        self.stock[product] += quantity
        if against is not None:
            against.refunded += sum((a for a, _ in tenders), D(0))
        for ln, take in parts:
            ln.returned += take
        self.tax_payable -= got_tax
        self.returns_value += got_total - got_tax

    @precondition(lambda self: "purchase_returns" in self.env.available)
    @rule(
        product=st.sampled_from(["apple", "water", "tea"]),
        quantity=dec("0.01", "15"),
        price=dec("0", "20"),
    )
    def purchase_return(self, product: str, quantity: Decimal, price: Decimal) -> None:
        body = {
            "user_id": self.s.supplier_id,
            "order_date": "2026-11-07",
            "items": [
                {
                    "product_id": self.ref(product, "int"),
                    "quantity": str(quantity),
                    "unit_price": str(price),
                }
            ],
        }
        r = self.post("/purchase-returns", body)
        if quantity > self.stock[product] and not self.negative:
            assert r.status_code == 422, f"returned more than on hand: {body} {r.text}"
        if r.status_code == 200:
            self.stock[product] -= quantity
        else:
            self.refused_fields(r)

    @precondition(lambda self: "expenses" in self.env.available)
    @rule(amount=dec("0.01", "500"), mode=st.sampled_from([None, "cash", "card"]))
    def expense(self, amount: Decimal, mode: str | None) -> None:
        assert self.expense_category_id is not None
        body: dict[str, Any] = {
            "expense_category_id": self.expense_category_id,
            "amount": str(amount),
            "date": "2026-11-08",
            "reference": "hypothesis",
        }
        if mode is not None:
            body["payment_mode_id"] = mode
        r = self.post("/expenses", body)
        assert r.status_code == 200, f"{body} -> {r.text}"
        if "expense_status" in r.json():
            assert r.json()["expense_status"] == ("paid" if mode else "pending"), r.text


async def available_operations(client: httpx.AsyncClient, shop: Shop) -> frozenset[str]:
    """The optional write endpoints this build answers (404/405 means not there yet)."""
    found = set()
    for name, path in OPTIONAL.items():
        r = await client.post(path, json={}, headers=shop.headers)
        assert r.status_code < 500, f"POST {path} {{}} -> {r.status_code} {r.text}"
        if r.status_code not in (404, 405):
            found.add(name)
    return frozenset(found)


async def test_random_operations_keep_the_books(
    client: httpx.AsyncClient, db: Database, shop: Shop, backend: str
) -> None:
    env = Env(asyncio.get_running_loop(), client, db, await available_operations(client, shop))
    config = settings(
        max_examples=20 if backend == "sqlite" else 10,
        stateful_step_count=12,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        print_blob=True,
    )
    await asyncio.to_thread(run_state_machine_as_test, lambda: BooksMachine(env), settings=config)


async def test_zero_value_sale_and_purchase_move_stock_and_post_nothing(
    client: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    """Free goods received, and a free sample whose FIFO cost rounds to 0.00: both
    are valid orders that move stock and no money, so no journal entry (found by the
    state machine: they used to be refused as "journal entry does not balance")."""
    purchase = {
        "user_id": shop.supplier_id,
        "order_date": "2026-11-20",
        "product_items": [{"xid": shop.xid("tea"), "quantity": 2, "unit_price": 0}],
    }
    r = await client.post("/purchases", json=purchase, headers=shop.headers)
    assert r.status_code == 200, r.text
    assert r.json()["total"] == "0.00" and r.json()["payment_status"] == "paid"
    # 0.01 water at 0.3333 costs 0.0033, which is 0.00 at the cent
    sale = {
        "user_id": shop.customer_id,
        "order_date": "2026-11-20",
        "product_items": [{"xid": shop.xid("water"), "quantity": "0.01", "unit_price": 0}],
    }
    r = await client.post("/sales", json=sale, headers=shop.headers)
    assert r.status_code == 200, r.text
    assert r.json()["total_amount"] == 0 and r.json()["invoice_number"] == "SAL-00001"

    async def state(session: Any) -> tuple[Any, ...]:
        from tillbook.models import FailedTransaction, JournalEntry, Order

        entries = await session.scalar(
            select(func.count())
            .select_from(JournalEntry)
            .where(
                JournalEntry.company_id == shop.company_id, JournalEntry.source_type != "opening"
            )
        )
        orders = (
            await session.execute(
                select(Order.order_type, Order.journal_entry_id)
                .where(Order.company_id == shop.company_id)
                .order_by(Order.id)
            )
        ).all()
        failed = await session.scalar(
            select(func.count())
            .select_from(FailedTransaction)
            .where(FailedTransaction.company_id == shop.company_id)
        )
        stock = dict(
            (
                await session.execute(
                    select(Listing.product_id, Listing.current_stock).where(
                        Listing.company_id == shop.company_id
                    )
                )
            ).all()
        )
        return entries, [tuple(o) for o in orders], failed, stock

    entries, orders, failed, stock = await db.read(state)
    assert (entries, orders, failed) == (0, [("purchases", None), ("sales", None)], 0)
    assert stock[shop.products["tea"]] == D(2)
    assert stock[shop.products["water"]] == D("99.99")
    await check_books(db, shop.company_id)
