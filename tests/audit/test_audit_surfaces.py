"""Who did what, whatever the door: each audited change is driven through every
surface that offers it (the public API, the admin API, the back office's pages,
the command line), and the audit records it leaves are compared: the same action,
entity and before/after fields, each by the actor of its door (the key's staff
member, the staff member signed in, nobody for the command line)."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass

import httpx
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from tests.cli_run import Run, cli_run  # noqa: F401  (fixture)
from tests.factories import Key, Shop
from tests.invariants import check_books
from tests.web_helpers import (
    OWNER_PASSWORD,
    STAFF_PASSWORD,
    add_staff,
    csrf_of,
    form_token_of,
    owner_email,
    sign_in,
)
from tillbook.db import Database
from tillbook.kit import crypto, xid
from tillbook.models import (
    ApiKey,
    AuditEvent,
    ExpenseCategory,
    OutboxEvent,
    User,
    Webhook,
    WebhookDelivery,
)

ADMIN = "http://testserver/api/v1/admin"


@dataclass(frozen=True)
class Rec:
    action: str
    entity_type: str
    entity_id: int | None
    before: tuple[str, ...]
    after: tuple[str, ...]
    user_id: int | None

    @property
    def shape(self) -> tuple[str, str, tuple[str, ...], tuple[str, ...]]:
        return (self.action, self.entity_type, self.before, self.after)


def _keys(encoded: str | None) -> tuple[str, ...]:
    return () if encoded is None else tuple(sorted(json.loads(encoded)))


async def _mark(db: Database, company_id: int) -> int:
    found = await db.read(
        lambda s: s.scalar(
            select(func.max(AuditEvent.id)).where(AuditEvent.company_id == company_id)
        )
    )
    return int(found or 0)


async def _since(db: Database, company_id: int, mark: int) -> list[Rec]:
    async def read(s: AsyncSession) -> list[Rec]:
        rows = await s.scalars(
            select(AuditEvent)
            .where(AuditEvent.company_id == company_id, AuditEvent.id > mark)
            .order_by(AuditEvent.id)
        )
        return [
            Rec(
                e.action,
                e.entity_type,
                e.entity_id,
                _keys(e.before),
                _keys(e.after),
                e.user_id,
            )
            for e in rows
        ]

    return await db.read(read)


async def _key_user(db: Database, key: Key) -> int:
    found = await db.read(
        lambda s: s.scalar(select(ApiKey.user_id).where(ApiKey.public_key == key.public_key))
    )
    assert found is not None
    return int(found)


async def _user(db: Database, email: str) -> int:
    found = await db.read(lambda s: s.scalar(select(User.id).where(User.email == email)))
    assert found is not None
    return int(found)


def _tokens(html: str) -> dict[str, str]:
    return {"csrf": csrf_of(html), "form_token": form_token_of(html)}


async def _manager(web: httpx.AsyncClient, db: Database, shop: Shop) -> int:
    """Signs ``web`` in as an unscoped manager (not the key's owner, so the two
    doors' actors differ); the manager's id."""
    email = await add_staff(db, shop, "manager")
    await sign_in(web, email, STAFF_PASSWORD)
    return await _user(db, email)


async def _sale(client: httpx.AsyncClient, shop: Shop) -> int:
    r = await client.post(
        "/sales",
        json={
            "user_id": shop.customer_id,
            "order_date": "2026-11-20",
            "product_items": [{"xid": shop.xid("apple"), "quantity": 1, "unit_price": 3.5}],
            "payments": [{"amount": "3.85", "payment_mode_id": "cash"}],
        },
        headers=shop.headers,
    )
    assert r.status_code == 200, r.text
    return int(r.json()["order_id"])


async def test_a_void_is_audited_alike_from_the_api_and_the_back_office(
    client: httpx.AsyncClient, web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    cid = shop.company_id
    by_api = await _sale(client, shop)
    mark = await _mark(db, cid)
    r = await client.post(
        f"/sales/{by_api}/void", json={"reason": "rang up twice"}, headers=shop.headers
    )
    assert r.status_code == 200, r.text
    api = await _since(db, cid, mark)

    by_web = await _sale(client, shop)
    manager = await _manager(web, db, shop)
    page = await web.get(f"/sales/{by_web}/void")
    mark = await _mark(db, cid)
    done = await web.post(
        f"/sales/{by_web}/void", data={**_tokens(page.text), "reason": "rang up twice"}
    )
    assert done.status_code == 303, done.text
    pages = await _since(db, cid, mark)

    expected = [("sale.voided", "order", (), ("reason",))]
    assert [x.shape for x in api] == [x.shape for x in pages] == expected
    assert (api[0].entity_id, pages[0].entity_id) == (by_api, by_web)
    assert api[0].user_id == await _key_user(db, shop.key)
    assert pages[0].user_id == manager != api[0].user_id
    await check_books(db, cid)


async def test_a_transfer_is_audited_alike_from_the_api_and_the_back_office(
    client: httpx.AsyncClient, web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    cid = shop.company_id
    apple = shop.products["apple"]
    other = xid.encode(shop.other_warehouse_id)
    items = [{"product_id": shop.xid("apple"), "quantity": "1"}]

    async def by_api() -> list[Rec]:
        mark = await _mark(db, cid)
        sent = await client.post(
            "/stock-transfers",
            json={"to_warehouse_id": other, "items": items},
            headers=shop.headers,
        )
        assert sent.status_code == 200, sent.text
        tid = sent.json()["transfer_id"]
        got = await client.post(
            f"/stock-transfers/{tid}/receive", json={}, headers=shop.other_key.headers
        )
        assert got.status_code == 200, got.text
        again = await client.post(
            "/stock-transfers",
            json={"to_warehouse_id": other, "items": items},
            headers=shop.headers,
        )
        back = await client.post(
            f"/stock-transfers/{again.json()['transfer_id']}/cancel",
            json={"reason": "wrong branch"},
            headers=shop.headers,
        )
        assert back.status_code == 200, back.text
        return await _since(db, cid, mark)

    async def by_web() -> list[Rec]:
        mark = await _mark(db, cid)
        locations = []
        for _ in range(2):
            page = await web.get(f"/transfers/new?warehouse_id={shop.warehouse_id}")
            sent = await web.post(
                "/transfers/new",
                data={
                    **_tokens(page.text),
                    "warehouse_id": str(shop.warehouse_id),
                    "to_warehouse_id": str(shop.other_warehouse_id),
                    f"qty-{apple}": "1",
                },
            )
            assert sent.status_code == 303, sent.text
            locations.append(sent.headers["location"])
        first, second = locations
        shown = await web.get(first)
        got = await web.post(f"{first}/receive", data=_tokens(shown.text))
        assert got.status_code == 303, got.text
        shown = await web.get(second)
        back = await web.post(
            f"{second}/cancel", data={**_tokens(shown.text), "reason": "wrong branch"}
        )
        assert back.status_code == 303, back.text
        return await _since(db, cid, mark)

    api = await by_api()
    manager = await _manager(web, db, shop)
    pages = await by_web()
    # the API received before sending the second; the pages sent both first
    assert sorted(x.shape for x in api) == sorted(x.shape for x in pages)
    assert {x.shape for x in api} == {
        (
            "stock_transfer.dispatched",
            "stock_transfer",
            (),
            ("from_warehouse_id", "to_warehouse_id"),
        ),
        ("stock_transfer.received", "stock_transfer", (), ("value_received",)),
        ("stock_transfer.cancelled", "stock_transfer", (), ("reason",)),
    }
    assert len(api) == 4
    keys = {await _key_user(db, shop.key), await _key_user(db, shop.other_key)}
    assert {x.user_id for x in api} <= keys
    assert {x.user_id for x in pages} == {manager}
    await check_books(db, cid)


async def test_a_delivery_is_audited_alike_from_the_api_and_the_back_office(
    client: httpx.AsyncClient, web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    cid, tea = shop.company_id, shop.products["tea"]
    mark = await _mark(db, cid)
    r = await client.post(
        "/purchases",
        json={
            "user_id": shop.supplier_id,
            "order_date": "2026-11-20",
            "product_items": [{"xid": shop.xid("tea"), "quantity": 2, "unit_price": "4.25"}],
        },
        headers=shop.headers,
    )
    assert r.status_code == 200, r.text
    api = await _since(db, cid, mark)

    manager = await _manager(web, db, shop)
    page = await web.get(f"/purchases/new?warehouse_id={shop.warehouse_id}")
    mark = await _mark(db, cid)
    done = await web.post(
        "/purchases/new",
        data={
            **_tokens(page.text),
            "warehouse_id": str(shop.warehouse_id),
            "user_id": str(shop.supplier_id),
            "order_date": "2026-11-20",
            f"qty-{tea}": "2",
            f"cost-{tea}": "4.25",
        },
    )
    assert done.status_code == 303, done.text
    pages = await _since(db, cid, mark)
    after = ("due_amount", "invoice_number", "supplier_id", "tax_amount", "total", "warehouse_id")
    assert (
        [x.shape for x in api]
        == [x.shape for x in pages]
        == [("purchase.received", "order", (), after)]
    )
    assert api[0].entity_id == r.json()["purchase_id"]
    assert api[0].user_id == await _key_user(db, shop.key)
    assert pages[0].user_id == manager
    await check_books(db, cid)


async def test_an_adjustment_is_audited_alike_from_the_api_and_the_back_office(
    client: httpx.AsyncClient, web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    cid, apple = shop.company_id, shop.products["apple"]
    mark = await _mark(db, cid)
    r = await client.post(
        "/stock-adjustments",
        json={
            "product_id": shop.xid("apple"),
            "quantity": "2",
            "adjustment_type": "subtract",
            "notes": "dropped",
        },
        headers=shop.headers,
    )
    assert r.status_code == 200, r.text
    api = await _since(db, cid, mark)

    manager = await _manager(web, db, shop)
    page = await web.get(f"/stock/products/{apple}")
    mark = await _mark(db, cid)
    done = await web.post(
        f"/stock/products/{apple}/adjust",
        data={
            **_tokens(page.text),
            "warehouse_id": str(shop.warehouse_id),
            "adjustment_type": "subtract",
            "quantity": "2",
            "notes": "dropped",
        },
    )
    assert done.status_code == 303, done.text
    pages = await _since(db, cid, mark)
    after = (
        "adjustment_type",
        "batch_number",
        "cost_amount",
        "expiry_date",
        "notes",
        "product_id",
        "quantity",
        "warehouse_id",
    )
    expected = [("stock.adjusted", "stock_adjustment", (), after)]
    assert [x.shape for x in api] == [x.shape for x in pages] == expected
    assert api[0].entity_id == r.json()["adjustment_id"]
    assert api[0].user_id == await _key_user(db, shop.key)
    assert pages[0].user_id == manager != api[0].user_id
    await check_books(db, cid)


async def test_a_return_is_audited_alike_from_the_api_and_the_back_office(
    client: httpx.AsyncClient, web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    cid, apple = shop.company_id, shop.products["apple"]
    by_api = await _sale(client, shop)
    invoice = (await client.get(f"/sales/{by_api}", headers=shop.headers)).json()["data"]
    mark = await _mark(db, cid)
    r = await client.post(
        "/sales-returns",
        json={
            "user_id": shop.customer_id,
            "order_date": "2026-11-21",
            "invoice_number": invoice["invoice_number"],
            # (the sale is on the customer's account: the return is credited there)
            "items": [{"product_id": shop.xid("apple"), "quantity": 1, "unit_price": "3.50"}],
        },
        headers=shop.headers,
    )
    assert r.status_code == 200, r.text
    api = await _since(db, cid, mark)

    by_web = await _sale(client, shop)
    manager = await _manager(web, db, shop)
    page = await web.get(f"/sales/{by_web}/return")
    mark = await _mark(db, cid)
    done = await web.post(
        f"/sales/{by_web}/return",
        data={**_tokens(page.text), "refund_to": "account", f"qty-{apple}": "1"},
    )
    assert done.status_code == 303, done.text
    pages = await _since(db, cid, mark)
    after = ("original_order_id", "refunded_by", "total", "warehouse_id")
    expected = [("sale.returned", "order", (), after)]
    assert [x.shape for x in api] == [x.shape for x in pages] == expected
    assert api[0].entity_id == r.json()["return_id"]
    assert api[0].user_id == await _key_user(db, shop.key)
    assert pages[0].user_id == manager != api[0].user_id
    await check_books(db, cid)


async def test_money_is_audited_alike_from_the_api_and_the_back_office(
    client: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    """A customer's payment and an expense, through a till's key and through the
    back office's JSON API (the pages call the same services); the admin API's own
    tests cover its money moves and an expense paid later."""
    cid = shop.company_id
    email = await add_staff(db, shop, "manager")
    login = await client.post(f"{ADMIN}/login", json={"email": email, "password": STAFF_PASSWORD})
    assert login.status_code == 200, login.text
    admin = {"Authorization": f"Bearer {login.json()['token']}"}
    category = await db.read(
        lambda s: s.scalar(
            select(func.min(ExpenseCategory.id)).where(ExpenseCategory.company_id == cid)
        )
    )
    payment = {
        "user_id": shop.customer_id,
        "payment_type": "in",
        "amount": "5.00",
        "payment_mode_id": "cash",
    }
    expense = {
        "expense_category_id": category,
        "amount": "12.00",
        "date": "2026-11-20",
        "payment_mode_id": "cash",
    }
    shapes: dict[str, list[tuple[str, str, tuple[str, ...], tuple[str, ...]]]] = {}
    users: dict[str, set[int | None]] = {}
    for door in ("api", "admin"):
        mark = await _mark(db, cid)
        for path, body in (("/payments", payment), ("/expenses", expense)):
            if door == "api":
                r = await client.post(path, json=body, headers=shop.headers)
                assert r.status_code == 200, r.text
            else:
                r = await client.post(
                    f"{ADMIN}{path}",
                    json={**body, "warehouse_id": shop.warehouse_id},
                    headers=admin,
                )
                assert r.status_code == 201, r.text
        found = await _since(db, cid, mark)
        shapes[door] = [x.shape for x in found]
        users[door] = {x.user_id for x in found}
    assert shapes["api"] == shapes["admin"]
    assert [s[0] for s in shapes["api"]] == ["payment.received", "expense.recorded"]
    assert users["api"] == {await _key_user(db, shop.key)}
    assert users["admin"] == {await _user(db, email)}
    await check_books(db, cid)


# --- webhooks: the admin API, the back office, the command line ------------------------


async def _delivery(db: Database, shop: Shop, hook_id: int) -> int:
    """A dead delivery of ``hook_id``, to be sent again."""

    async def seed(s: AsyncSession) -> int:
        event = OutboxEvent(
            event_id="evt_" + crypto.random_token("", 8),
            company_id=shop.company_id,
            warehouse_id=shop.warehouse_id,
            type="order.created",
            payload="{}",
            dispatched=True,
        )
        s.add(event)
        await s.flush()
        delivery = WebhookDelivery(
            company_id=shop.company_id,
            event_id=event.id,
            webhook_id=hook_id,
            delivery_uid="dlv_" + crypto.random_token("", 8),
            status="dead",
            attempts=3,
            next_attempt_at=dt.datetime.now(dt.UTC),
        )
        s.add(delivery)
        await s.flush()
        return int(delivery.id)

    return await db.write(seed)


def _by_step(recs: list[Rec]) -> dict[str, Rec]:
    return {r.action: r for r in recs}


async def test_a_webhook_is_audited_alike_from_every_door(
    client: httpx.AsyncClient,
    web: httpx.AsyncClient,
    db: Database,
    shop: Shop,
    cli_run: Run,  # noqa: F811
) -> None:
    cid = shop.company_id
    owner = await _user(db, await owner_email(db, shop))

    # the admin API
    email = await owner_email(db, shop)
    login = await client.post(f"{ADMIN}/login", json={"email": email, "password": OWNER_PASSWORD})
    assert login.status_code == 200, login.text
    headers = {"Authorization": f"Bearer {login.json()['token']}"}
    mark = await _mark(db, cid)
    made = await client.post(
        f"{ADMIN}/webhooks", json={"url": "https://93.184.216.34/admin"}, headers=headers
    )
    assert made.status_code == 200, made.text
    hook = made.json()["data"]["id"]
    for step in ("disable", "enable", "rotate-secret"):
        r = await client.post(f"{ADMIN}/webhooks/{hook}/{step}", headers=headers)
        assert r.status_code == 200, r.text
    did = await _delivery(db, shop, hook)
    r = await client.post(f"{ADMIN}/webhooks/deliveries/{did}/redeliver", headers=headers)
    assert r.status_code == 200, r.text
    r = await client.delete(f"{ADMIN}/webhooks/{hook}", headers=headers)
    assert r.status_code == 200, r.text
    admin_api = await _since(db, cid, mark)

    # the back office (it offers no removal)
    await sign_in(web, email, OWNER_PASSWORD)
    page = await web.get("/settings/webhooks")
    mark = await _mark(db, cid)
    added = await web.post(
        "/settings/webhooks",
        data={**_tokens(page.text), "url": "https://93.184.216.34/web", "events": "*"},
    )
    assert added.status_code == 200, added.text
    hook = await db.read(
        lambda s: s.scalar(
            select(Webhook.id).where(Webhook.company_id == cid, Webhook.url.endswith("/web"))
        )
    )
    for step in ("disable", "enable"):
        detail = await web.get(f"/settings/webhooks/{hook}")
        r = await web.post(f"/settings/webhooks/{hook}/{step}", data=_tokens(detail.text))
        assert r.status_code == 303, r.text
    confirm = await web.get(f"/settings/webhooks/{hook}/rotate")
    r = await web.post(f"/settings/webhooks/{hook}/rotate", data=_tokens(confirm.text))
    assert r.status_code == 200, r.text
    did = await _delivery(db, shop, hook)
    shown = await web.get(f"/settings/webhooks/deliveries/{did}")
    r = await web.post(f"/settings/webhooks/deliveries/{did}/redeliver", data=_tokens(shown.text))
    assert r.status_code == 303, r.text
    pages = await _since(db, cid, mark)

    # the command line
    mark = await _mark(db, cid)
    company = str(cid)
    url = "https://93.184.216.34/cli"
    hook = cli_run("webhooks", "add", "--company", company, "--url", url, "--json").json()["id"]
    for step in ("disable", "enable", "rotate"):
        cli_run("webhooks", step, str(hook), "--company", company)
    did = await _delivery(db, shop, hook)
    cli_run("webhooks", "redeliver", str(did), "--company", company)
    cli_run("webhooks", "remove", str(hook), "--company", company)
    command_line = await _since(db, cid, mark)

    steps = ["created", "disabled", "enabled", "updated", "redelivered", "removed"]
    assert [r.action for r in admin_api] == [r.action for r in command_line] == steps
    assert [r.action for r in pages] == steps[:-1]
    api_steps, cli_steps = _by_step(admin_api), _by_step(command_line)
    for rec in pages:
        assert rec.shape == api_steps[rec.action].shape == cli_steps[rec.action].shape
    assert api_steps["removed"].shape == cli_steps["removed"].shape
    assert api_steps["updated"].after == ("secret",)
    assert {r.user_id for r in admin_api} == {r.user_id for r in pages} == {owner}
    assert {r.user_id for r in command_line} == {None}
