"""Random sequences of foreign and base documents, rates and payments (issue 26,
item 7): after every step the books of DESIGN §5 hold (``check_books``, with its
foreign-currency checks), and every party's balance in the base is exactly what its
open invoices carry: the base due of a base invoice, the carried ``base_due`` of a
foreign one; a period closed and reopened in between leaves its revaluation and
the revaluation's reversal, which cancel. So whatever the rates did between an
invoice and its payments, the
receivable or payable is cleared to the cent when the invoice is, and the whole
difference is on 71100/71200: realised gains and losses explain every change of a
foreign invoice's base value.

Same shape as ``test_stateful_books``: the machine runs in a worker thread and hands
each request back to the session loop."""

from __future__ import annotations

import asyncio
import datetime as dt
from decimal import Decimal
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

from tests.factories import Shop, make_shop
from tests.invariants import check_books, gl_balance
from tests.machine_env import Env
from tillbook.auth.actor import Actor
from tillbook.currency import rates
from tillbook.db import Database
from tillbook.models import Order, User
from tillbook.reports import periods

D = Decimal
T = TypeVar("T")
FIRST = dt.date(2026, 6, 1)
DAYS = 150


def day(n: int) -> str:
    return (FIRST + dt.timedelta(days=n)).isoformat()


money = st.decimals(D("0.01"), D("500"), places=2)
fx_rate = st.decimals(D("0.2"), D("5"), places=4)


class ForeignBooks(RuleBasedStateMachine):
    def __init__(self, env: Env) -> None:
        super().__init__()
        self.env = env
        self.shop: Shop | None = None
        self.invoices: list[tuple[int, str, str | None]] = []  # (id, type, currency)

    @property
    def s(self) -> Shop:
        assert self.shop is not None
        return self.shop

    def post(self, path: str, body: dict[str, Any]) -> httpx.Response:
        r = self.env.run(self.env.client.post(path, json=body, headers=self.s.headers))
        assert r.status_code < 500, f"{path} {body} -> {r.status_code} {r.text}"
        return r

    @initialize(start=fx_rate)
    def open_shop(self, start: Decimal) -> None:
        self.shop = self.env.run(make_shop(self.env.db))
        system = Actor.system()

        async def run(uow: Any) -> None:
            await rates.enable(uow.session, self.s.company_id, "EUR", system)
            await rates.set_rate(uow.session, self.s.company_id, "EUR", FIRST, start, system)

        self.env.run(self.env.db.unit(run))

    @rule(on=st.integers(0, DAYS), rate=fx_rate)
    def set_rate(self, on: int, rate: Decimal) -> None:
        system = Actor.system()

        async def run(uow: Any) -> None:
            await rates.set_rate(
                uow.session, self.s.company_id, "EUR", FIRST + dt.timedelta(days=on), rate, system
            )

        self.env.run(self.env.db.unit(run))

    @rule(
        on=st.integers(0, DAYS),
        foreign=st.booleans(),
        quantity=st.integers(1, 3),
        price=money,
        tendered=st.sampled_from([D(0), D("0.3"), D(1)]),
        rate=st.none() | fx_rate,
    )
    def credit_sale(self, on, foreign, quantity, price, tendered, rate) -> None:
        total = price * quantity
        body: dict[str, Any] = {
            "user_id": self.s.customer_id,
            "order_date": day(on),
            "product_items": [
                {"xid": self.s.products["water"], "quantity": quantity, "unit_price": str(price)}
            ],
        }
        paid = (total * tendered).quantize(D("0.01"))
        if paid > 0:
            body["all_payments"] = [{"amount": str(paid), "payment_mode_id": "cash"}]
        if foreign:
            body["currency"] = "EUR"
            if rate is not None:
                body["exchange_rate"] = str(rate)
        r = self.post("/sales", body)
        assert r.status_code == 200, r.text
        self.invoices.append((r.json()["order_id"], "sales", "EUR" if foreign else None))

    @rule(on=st.integers(0, DAYS), foreign=st.booleans(), quantity=st.integers(1, 4), price=money)
    def purchase(self, on, foreign, quantity, price) -> None:
        body: dict[str, Any] = {
            "user_id": self.s.supplier_id,
            "order_date": day(on),
            "product_items": [
                {"xid": self.s.products["tea"], "quantity": quantity, "unit_price": str(price)}
            ],
        }
        if foreign:
            body["currency"] = "EUR"
        r = self.post("/purchases", body)
        assert r.status_code == 200, r.text
        self.invoices.append((r.json()["purchase_id"], "purchases", "EUR" if foreign else None))

    @precondition(lambda self: bool(self.invoices))
    @rule(
        data=st.data(),
        on=st.integers(0, DAYS),
        part=st.sampled_from([D("0.25"), D("0.5"), D(1)]),
        rate=st.none() | fx_rate,
    )
    def pay(self, data, on, part, rate) -> None:
        order_id, kind, currency = data.draw(st.sampled_from(self.invoices))
        due = self.env.run(
            self.env.db.read(
                lambda s: s.scalar(select(Order.due_amount).where(Order.id == order_id))
            )
        )
        amount = max((due * part).quantize(D("0.01")), D("0.01"))
        if due <= 0:
            return
        body: dict[str, Any] = {
            "user_id": self.s.customer_id if kind == "sales" else self.s.supplier_id,
            "payment_type": "in" if kind == "sales" else "out",
            "amount": str(min(amount, due)),
            "payment_mode_id": "cash",
            "date": day(on),
            "invoices": [{"order_id": order_id, "amount": str(min(amount, due))}],
        }
        if currency is not None:
            body["currency"] = currency
            if rate is not None:
                body["exchange_rate"] = str(rate)
        r = self.post("/payments", body)
        assert r.status_code == 200, r.text

    @rule(on=st.integers(0, DAYS))
    def close_and_reopen(self, on: int) -> None:
        """Closing revalues the open foreign invoices at that day's rate and reverses
        it the next day; reopening keeps both entries. The balances after it (and the
        invariant's carried values) must not move."""
        through = FIRST + dt.timedelta(days=on)
        self.env.run(periods.close(self.env.db, self.s.company_id, through))
        self.env.run(periods.reopen(self.env.db, self.s.company_id, None))

    @invariant()
    def books_hold(self) -> None:
        if self.shop is None:
            return
        self.env.run(check_books(self.env.db, self.s.company_id))

        async def carried(session: Any) -> tuple[dict[int, Decimal], dict[int, Decimal]]:
            owed = dict(
                (
                    await session.execute(
                        select(
                            Order.user_id,
                            func.sum(func.coalesce(Order.base_due, Order.due_amount)),
                        )
                        .where(
                            Order.company_id == self.s.company_id,
                            Order.order_type.in_(["sales", "purchases"]),
                        )
                        .group_by(Order.user_id)
                    )
                ).all()
            )
            balances = dict(
                (
                    await session.execute(
                        select(User.id, User.balance).where(
                            User.company_id == self.s.company_id,
                            User.user_type.in_(["customer", "supplier"]),
                        )
                    )
                ).all()
            )
            return owed, balances

        owed, balances = self.env.run(self.env.db.read(carried))
        for party in (self.s.customer_id, self.s.supplier_id):
            assert balances[party] == D(owed.get(party) or 0), (party, balances, owed)
        if not any(currency for _i, _k, currency in self.invoices):
            gain = self.env.run(
                self.env.db.read(lambda s: gl_balance(s, self.s.company_id, "71100"))
            )
            loss = self.env.run(
                self.env.db.read(lambda s: gl_balance(s, self.s.company_id, "71200"))
            )
            assert gain == loss == 0, "an exchange difference without a foreign document"


async def test_random_foreign_documents_keep_the_books(
    client: httpx.AsyncClient, db: Database, backend: str
) -> None:
    env = Env(asyncio.get_running_loop(), client, db)
    config = settings(
        max_examples=15 if backend == "sqlite" else 8,
        stateful_step_count=12,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        print_blob=True,
    )
    await asyncio.to_thread(run_state_machine_as_test, lambda: ForeignBooks(env), settings=config)
