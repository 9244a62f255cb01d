"""A cashier in the back office: their own sales and shifts only, every branch's
stock of a product without costs, refused (403) everything else; and an API key
bound to a staff member from the keys page (its sales name them)."""

from __future__ import annotations

import datetime as dt
import re

import httpx
from sqlalchemy import select

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
from tillbook.auth import roles
from tillbook.db import Database
from tillbook.kit import xid
from tillbook.models import Order, Shift, User


def _other(web: httpx.AsyncClient) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=web._transport, base_url="http://testserver")


async def _user_id(db: Database, email: str) -> int:
    return int(await db.read(lambda s: s.scalar(select(User.id).where(User.email == email))))


async def _sell(client: httpx.AsyncClient, shop: Shop, key: Key) -> int:
    r = await client.post(
        "/sales",
        headers=key.headers,
        json={
            "user_id": shop.walk_in_id,
            "order_date": dt.date.today().isoformat(),
            "product_items": [{"xid": shop.xid("apple"), "quantity": 1, "unit_price": "3.50"}],
            "all_payments": [{"amount": "3.50", "payment_mode_id": "cash"}],
        },
    )
    assert r.status_code == 200, r.text
    return int(
        xid.decode(r.json()["order_id"])
        if isinstance(r.json()["order_id"], str)
        else r.json()["order_id"]
    )


async def _bound_key(web: httpx.AsyncClient, shop: Shop, user_id: int) -> Key:
    page = await web.get("/settings/keys")
    assert f'<option value="{user_id}">' in page.text
    r = await web.post(
        "/settings/keys",
        data={
            "csrf": csrf_of(page.text),
            "form_token": form_token_of(page.text),
            "name": "Cashier till",
            "warehouse_id": str(shop.warehouse_id),
            "user_id": str(user_id),
        },
    )
    assert r.status_code == 200, r.text

    def shown(id_: str) -> str:
        found = re.search(rf'<code id="{id_}">([^<]+)</code>', r.text)
        assert found, r.text[:2000]
        return found.group(1)

    return Key(shown("public-key"), shown("secret-key"), shown("hmac-secret"), shop.warehouse_id)


async def test_a_cashier_sees_their_own_work_and_no_costs(
    web: httpx.AsyncClient, client: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    email = await add_staff(db, shop, "cashier", shop.warehouse_id)
    cashier_id = await _user_id(db, email)
    key = await _bound_key(web, shop, cashier_id)
    keys = await web.get("/settings/keys")
    assert "A cashier" in keys.text  # the key's row names who it acts as

    # The cashier's till and someone else's: a shift and a sale each.
    r = await client.post("/shifts", json={"register": "till-c"}, headers=key.headers)
    assert r.status_code in (200, 201), r.text
    r = await client.post("/shifts", json={"register": "till-o"}, headers=shop.headers)
    assert r.status_code in (200, 201), r.text
    mine = await _sell(client, shop, key)
    theirs = await _sell(client, shop, shop.key)
    invoices = dict(
        (
            await db.read(
                lambda s: s.execute(
                    select(Order.id, Order.invoice_number).where(Order.id.in_([mine, theirs]))
                )
            )
        ).all()
    )
    shifts = dict(
        (
            await db.read(
                lambda s: s.execute(
                    select(Shift.register, Shift.id).where(Shift.company_id == shop.company_id)
                )
            )
        ).all()
    )
    staffed = await db.read(lambda s: s.scalar(select(Order.staff_user_id).where(Order.id == mine)))
    assert staffed == cashier_id

    cashier = _other(web)
    await sign_in(cashier, email, STAFF_PASSWORD)
    home = await cashier.get("/")
    assert home.status_code == 303  # no dashboard (its figures and margins)
    account = await cashier.get("/account")
    for entry in ('href="/sales"', 'href="/shifts"', 'href="/stock"', 'href="/customers"'):
        assert entry in account.text, entry
    for hidden in ('href="/reports"', 'href="/settings/', 'href="/purchases"', 'href="/prices"'):
        assert hidden not in account.text, hidden

    sales = await cashier.get("/sales")
    assert sales.status_code == 200
    assert invoices[mine] in sales.text and invoices[theirs] not in sales.text
    assert (await cashier.get(f"/sales/{mine}")).status_code == 200
    assert (await cashier.get(f"/sales/{mine}?print=receipt")).status_code == 200
    assert (await cashier.get(f"/sales/{theirs}")).status_code == 404
    shift_list = await cashier.get("/shifts")
    assert shift_list.status_code == 200
    assert "till-c" in shift_list.text and "till-o" not in shift_list.text
    assert (await cashier.get(f"/shifts/{shifts['till-c']}")).status_code == 200
    assert (await cashier.get(f"/shifts/{shifts['till-o']}")).status_code == 404

    # Stock in every branch (the coffee is only at the harbour), without costs.
    coffee = await cashier.get(f"/stock/products/{shop.other_products['coffee']}")
    assert coffee.status_code == 200
    assert "Harbour" in coffee.text and 'id="stock-' in coffee.text
    apple = await cashier.get(f"/stock/products/{shop.products['apple']}")
    product = await cashier.get(f"/products/{shop.products['apple']}")
    for page in (coffee, apple, product):
        assert "Unit cost" not in page.text and "Purchase price" not in page.text
        assert "2.50" not in page.text and "1.50" not in page.text  # batch costs
    owner_view = await web.get(f"/stock/products/{shop.products['apple']}")
    assert "Unit cost" in owner_view.text  # the owner still sees them

    # Everything else is refused by the server, whatever the menu shows.
    for path in (
        "/reports",
        "/reports/ledger",
        "/reports/periods",
        "/purchases",
        "/payments",
        "/expenses",
        "/money-moves",
        "/sales-returns",
        "/transfers",
        "/prices",
        "/settings/company",
        "/settings/staff",
        "/settings/keys",
        "/settings/payment-modes",
        "/settings/registers",
        f"/sales/{mine}/void",
        f"/sales/{mine}/return",
        f"/purchases/{mine}",
    ):
        assert (await cashier.get(path)).status_code == 403, path
    csrf = csrf_of(account.text)
    for path in (
        "/prices/preview",
        "/prices/apply",
        f"/stock/products/{shop.products['apple']}/adjust",
        f"/sales/{mine}/void",
        "/settings/keys",
    ):
        r = await cashier.post(path, data={"csrf": csrf, "form_token": f"form-x{path[1:9]}"})
        assert r.status_code == 403, path
    await cashier.aclose()
    await check_books(db, shop.company_id)


async def test_managers_and_owners_still_see_every_sale(
    web: httpx.AsyncClient, client: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    sale = await _sell(client, shop, shop.key)
    await sign_in(web, await add_staff(db, shop, "manager"), STAFF_PASSWORD)
    assert (await web.get(f"/sales/{sale}")).status_code == 200
    listing = await web.get("/sales")
    assert f'href="/sales/{sale}"' in listing.text
    assert (await web.get("/")).status_code == 200


async def test_a_key_bound_to_someone_who_cannot_act_there_is_refused_beside_the_field(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    elsewhere = await _user_id(db, await add_staff(db, shop, "cashier", shop.other_warehouse_id))
    for user_id in (str(elsewhere), "999999999", "abc"):
        page = await web.get("/settings/keys")
        r = await web.post(
            "/settings/keys",
            data={
                "csrf": csrf_of(page.text),
                "form_token": form_token_of(page.text),
                "name": "Wrong till",
                "warehouse_id": str(shop.warehouse_id),
                "user_id": user_id,
            },
        )
        assert r.status_code == 422, (user_id, r.text[:300])
        assert 'id="e-user_id"' in r.text
    assert "Wrong till" not in (await web.get("/settings/keys")).text


def test_the_cashier_rules_are_in_the_role_table() -> None:
    assert roles.own_work_only(roles.CASHIER, None) is True
    assert roles.own_work_only(roles.MANAGER, None) is False
    assert not roles.shows_costs(roles.CASHIER, None)
    assert roles.shows_costs(roles.ACCOUNTANT, None)
    assert roles.shows_costs(roles.MANAGER, 3) and roles.shows_costs(roles.MANAGER, 3, 3)
    assert not roles.shows_costs(roles.MANAGER, 3, 4)
