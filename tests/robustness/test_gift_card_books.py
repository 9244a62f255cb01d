"""Random sequences of gift card sales and loads, sales spending cards (partly,
several on one sale) and store credit, returns refunded to store credit and voids
of sales paid by card (issue 29 item 4): after every step the books hold
(``check_books``: GL 21300 = Σ card and credit balances, each balance = Σ its
movements, never below zero), and each card holds exactly what this model of it
says. The journal with all of it passes beancount's own checks.

Same shape as ``test_foreign_books``: the machine runs in a worker thread and hands
each request back to the session loop."""

from __future__ import annotations

import asyncio
import datetime as dt
from decimal import Decimal
from typing import Any, TypeVar

import httpx
import pytest
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

from tests.factories import Shop, make_shop
from tests.invariants import check_books
from tests.machine_env import Env
from tillbook.db import Database
from tillbook.giftcards import service as giftcards
from tillbook.reports.journal import export_journal

D = Decimal
T = TypeVar("T")
TODAY = dt.date.today().isoformat()


money = st.decimals(D("0.01"), D("60"), places=2)


class CardBooks(RuleBasedStateMachine):
    def __init__(self, env: Env) -> None:
        super().__init__()
        self.env = env
        self.shop: Shop | None = None
        self.cards: dict[str, Decimal] = {}  # code -> what the model says it holds
        self.credit = D(0)  # the customer's store credit
        # sales that spent cards or credit: (order_id, {code or "": amount})
        self.card_sales: list[tuple[int, dict[str, Decimal]]] = []
        # (invoice number, water units not yet returned, unit price)
        self.cash_sales: list[tuple[str, int, Decimal]] = []

    @property
    def s(self) -> Shop:
        assert self.shop is not None
        return self.shop

    def post(self, path: str, body: dict[str, Any], headers: dict[str, str] | None = None) -> Any:
        r = self.env.run(self.env.client.post(path, json=body, headers=headers or self.s.headers))
        assert r.status_code < 500, f"{path} {body} -> {r.status_code} {r.text}"
        return r

    def sale(self, units: int, price: Decimal, tenders: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "user_id": self.s.customer_id,
            "order_date": TODAY,
            "product_items": [
                {"xid": self.s.xid("water"), "quantity": units, "unit_price": str(price)}
            ],
            "all_payments": tenders,
        }

    @initialize()
    def open_shop(self) -> None:
        self.shop = self.env.run(make_shop(self.env.db))

    @rule(amount=money, mode=st.sampled_from(["cash", "card", "bank"]))
    def sell_card(self, amount: Decimal, mode: str) -> None:
        r = self.post(
            "/gift-cards",
            {
                "amount": str(amount),
                "all_payments": [{"amount": str(amount), "payment_mode_id": mode}],
            },
        )
        assert r.status_code == 200, r.text
        self.cards[r.json()["data"]["code"]] = amount

    @precondition(lambda self: bool(self.cards))
    @rule(data=st.data(), amount=money)
    def load_card(self, data: st.DataObject, amount: Decimal) -> None:
        code = data.draw(st.sampled_from(sorted(self.cards)))
        r = self.post(
            "/gift-cards",
            {
                "amount": str(amount),
                "code": code,
                "all_payments": [{"amount": str(amount), "payment_mode_id": "cash"}],
            },
        )
        assert r.status_code == 200, r.text
        self.cards[code] += amount

    @precondition(lambda self: any(v > 0 for v in self.cards.values()) or self.credit > 0)
    @rule(
        data=st.data(),
        price=st.decimals(D("0.50"), D("9"), places=2),
        units=st.integers(1, 4),
        share=st.sampled_from([D("0.3"), D("0.5"), D(1), D("1.5")]),
        other_branch=st.booleans(),
    )
    def spend(self, data, price, units, share, other_branch) -> None:
        """One or two cards (or the store credit) pay part or all of a sale; asking
        more than a card holds is refused and changes nothing."""
        total = price * units
        usable = sorted(c for c, v in self.cards.items() if v > 0)
        picks = (
            data.draw(st.lists(st.sampled_from(usable), max_size=2, unique=True)) if usable else []
        )
        use_credit = self.credit > 0 and (not picks or data.draw(st.booleans()))
        sources: list[tuple[str, Decimal]] = [(c, self.cards[c]) for c in picks]
        if use_credit:
            sources.append(("", self.credit))
        if not sources:
            return
        tenders: list[dict[str, Any]] = []
        left = total
        over = False
        taken: dict[str, Decimal] = {}
        for code, held in sources:
            want = min((held * share).quantize(D("0.01")), left)
            if want <= 0:
                continue
            over = over or want > held
            left -= want
            taken[code] = want
            tender: dict[str, Any] = {"amount": str(want), "payment_mode_id": "gift-card"}
            if code:
                tender["gift_card_code"] = code
            tenders.append(tender)
        if not tenders:
            return
        if left > 0:
            tenders.append({"amount": str(left), "payment_mode_id": "cash"})
        body = self.sale(units, price, tenders)
        if other_branch and not use_credit:
            body["product_items"] = [
                {"xid": self.s.other_products["coffee"], "quantity": 1, "unit_price": str(total)}
            ]
            r = self.post("/sales", body, self.s.other_key.headers)
        else:
            r = self.post("/sales", body)
        if over:
            assert r.status_code == 422, r.text
            return
        if r.status_code == 422 and "quantity" in r.text:
            return  # out of stock: nothing was written
        assert r.status_code == 200, r.text
        for code, amount in taken.items():
            if code:
                self.cards[code] -= amount
            else:
                self.credit -= amount
        if not (other_branch and not use_credit):
            self.card_sales.append((r.json()["order_id"], taken))

    @rule(price=st.decimals(D("0.50"), D("9"), places=2), units=st.integers(1, 3))
    def cash_sale(self, price: Decimal, units: int) -> None:
        total = price * units
        r = self.post(
            "/sales", self.sale(units, price, [{"amount": str(total), "payment_mode_id": "cash"}])
        )
        if r.status_code == 200:
            self.cash_sales.append((r.json()["invoice_number"], units, price))

    @precondition(lambda self: bool(self.cash_sales))
    @rule(data=st.data())
    def return_to_store_credit(self, data: st.DataObject) -> None:
        """One unit of a cash sale comes back, refunded to the customer's store
        credit; a refund above the return's total is refused first, writing nothing."""
        i = data.draw(st.integers(0, len(self.cash_sales) - 1))
        invoice, units, price = self.cash_sales[i]
        body = {
            "user_id": self.s.customer_id,
            "order_date": TODAY,
            "invoice_number": invoice,
            "items": [{"product_id": self.s.xid("water"), "quantity": 1, "unit_price": str(price)}],
        }
        too_much = [{"amount": str(price + D("0.01")), "payment_mode_id": "gift-card"}]
        assert self.post("/sales-returns", {**body, "all_payments": too_much}).status_code == 422
        refund = [{"amount": str(price), "payment_mode_id": "gift-card"}]
        r = self.post("/sales-returns", {**body, "all_payments": refund})
        assert r.status_code == 200, r.text
        self.credit += price
        if units > 1:
            self.cash_sales[i] = (invoice, units - 1, price)
        else:
            self.cash_sales.pop(i)

    @precondition(lambda self: bool(self.card_sales))
    @rule(data=st.data())
    def void_card_sale(self, data: st.DataObject) -> None:
        order_id, taken = self.card_sales.pop(data.draw(st.integers(0, len(self.card_sales) - 1)))
        r = self.post(f"/sales/{order_id}/void", {"reason": "rung up by mistake"})
        assert r.status_code == 200, r.text
        for code, amount in taken.items():
            if code:
                self.cards[code] += amount
            else:
                self.credit += amount

    @invariant()
    def books_hold(self) -> None:
        if self.shop is None:
            return
        self.env.run(check_books(self.env.db, self.s.company_id))

        async def held(session: Any) -> tuple[dict[str, Decimal], Decimal]:
            out = {}
            for code in self.cards:
                card = await giftcards.card_by_code(session, self.s.company_id, code)
                assert card is not None
                out[code] = D(card.balance)
            credit = await giftcards.store_credit(session, self.s.company_id, self.s.customer_id)
            return out, D(credit.balance) if credit is not None else D(0)

        cards, credit = self.env.run(self.env.db.read(held))
        assert cards == self.cards
        assert credit == self.credit


async def test_random_card_sequences_keep_the_books(
    client: httpx.AsyncClient, db: Database, backend: str
) -> None:
    env = Env(asyncio.get_running_loop(), client, db)
    config = settings(
        max_examples=12 if backend == "sqlite" else 6,
        stateful_step_count=12,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        print_blob=True,
    )
    await asyncio.to_thread(run_state_machine_as_test, lambda: CardBooks(env), settings=config)


async def test_the_journal_with_cards_passes_bean_check(client, shop, db):
    loader = pytest.importorskip("beancount.loader")
    code = (
        await client.post(
            "/gift-cards",
            json={
                "amount": "20",
                "expires_on": (dt.date.today() + dt.timedelta(days=1)).isoformat(),
                "all_payments": [{"amount": "20", "payment_mode_id": "cash"}],
            },
            headers=shop.headers,
        )
    ).json()["data"]["code"]
    sale = {
        "user_id": shop.customer_id,
        "order_date": TODAY,
        "product_items": [{"xid": shop.xid("water"), "quantity": 4, "unit_price": "2.00"}],
        "all_payments": [
            {"amount": "8.00", "payment_mode_id": "gift-card", "gift_card_code": code}
        ],
    }
    r = await client.post("/sales", json=sale, headers=shop.headers)
    assert r.status_code == 200, r.text
    ret = {
        "user_id": shop.customer_id,
        "order_date": TODAY,
        "invoice_number": r.json()["invoice_number"],
        "items": [{"product_id": shop.xid("water"), "quantity": 1, "unit_price": "2.00"}],
        "all_payments": [{"amount": "2.00", "payment_mode_id": "gift-card"}],
    }
    assert (await client.post("/sales-returns", json=ret, headers=shop.headers)).status_code == 200

    async def expire(uow: Any) -> Any:
        return await giftcards.expire(
            uow, shop.company_id, dt.date.today() + dt.timedelta(days=2), None
        )

    assert [e.amount for e in await db.unit(expire)] == [D("12.00")]

    async def collect(s: Any) -> list[str]:
        return [line async for line in export_journal(s, shop.company_id, "beancount")]

    text = "\n".join(await db.read(collect)) + "\n"
    assert "21300-Gift-Cards-and-Store-Credit" in text and "41500-Breakage-Income" in text
    _entries, errors, _options = loader.load_string(text)
    assert errors == [], errors
    await check_books(db, shop.company_id)
