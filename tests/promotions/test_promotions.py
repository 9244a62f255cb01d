"""Promotions (issue 29 item 1, DESIGN §18): the rules of each kind, which one wins,
the moment a sale is priced at, and the same figures through the preview, the sale,
its books, its return and void, the report and the register's feed."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy import func, select

from tests.admin_helpers import ADMIN, login
from tests.factories import by_id, make_shop
from tests.invariants import check_books, gl_balance
from tillbook.models import AuditEvent, OrderItem, Promotion
from tillbook.orders import promotions as engine

D = Decimal
TODAY = dt.date.today()


def rule(id_: int, kind: str, params: dict[str, Any], **over: Any) -> engine.Rule:
    fields: dict[str, Any] = {
        "id": id_,
        "name": f"P{id_}",
        "kind": kind,
        "applies_to": "all",
        "targets": frozenset(),
        "params": params,
        "warehouse_id": None,
        "starts_on": dt.date(2026, 1, 1),
        "ends_on": None,
        "weekdays": "1234567",
        "from_time": None,
        "until_time": None,
        "priority": 0,
        "combines": True,
        "states": (),
    }
    fields.update(over)
    return engine.Rule(**fields)


def item(index: int, product: int, quantity: str, amount: str, **over: Any) -> engine.Item:
    return engine.Item(
        index,
        product,
        tuple(over.get("categories", (over["category"],) if "category" in over else ())),
        over.get("brand"),
        D(quantity),
        D(amount),
    )


def offs(applied: dict[int, engine.Applied]) -> dict[int, tuple[int, str]]:
    return {i: (a.promotion_id, str(a.off)) for i, a in applied.items()}


# --- the engine, pure ---------------------------------------------------------------


def test_percent_and_amount_off_round_half_up_per_line() -> None:
    basket = [item(0, 1, "3", "10.05"), item(1, 2, "1", "0.05")]
    assert offs(engine.apply([rule(1, "percent_off", {"percent": "10"})], basket)) == {
        0: (1, "1.01"),  # 1.005 rounds up
        1: (1, "0.01"),  # 0.005 rounds up
    }
    # 0.50 off each unit, never more than the line
    amount = rule(2, "amount_off", {"amount": "0.50"})
    assert offs(engine.apply([amount], basket)) == {0: (2, "1.50"), 1: (2, "0.05")}


def test_targets_by_product_category_and_brand() -> None:
    # a product filed under 8, a sub-category of 7, counts as in 7
    under = item(0, 1, "1", "10.00", categories=(8, 7))
    seven = rule(1, "percent_off", {"percent": "50"}, applies_to="categories",
                 targets=frozenset({7}))  # fmt: skip
    assert offs(engine.apply([seven], [under])) == {0: (1, "5.00")}
    basket = [
        item(0, 1, "1", "10.00", category=7),
        item(1, 2, "1", "10.00", brand=9),
        item(2, 3, "1", "10.00"),
    ]
    half = {"percent": "50"}
    by_category = rule(1, "percent_off", half, applies_to="categories", targets=frozenset({7}))
    by_brand = rule(2, "percent_off", half, applies_to="brands", targets=frozenset({9}))
    by_product = rule(3, "percent_off", half, applies_to="products", targets=frozenset({3}))
    assert offs(engine.apply([by_category], basket)) == {0: (1, "5.00")}
    assert offs(engine.apply([by_brand], basket)) == {1: (2, "5.00")}
    assert offs(engine.apply([by_product], basket)) == {2: (3, "5.00")}


def test_buy_two_get_one_free_gives_the_cheapest_units() -> None:
    three_for_two = rule(1, "buy_x_get_y", {"buy": 2, "get": 1, "percent": "100"})
    # 4 units at 3.00 and 2 at 1.00: two groups of three, the two cheapest free.
    basket = [item(0, 1, "4", "12.00"), item(1, 2, "2", "2.00")]
    assert offs(engine.apply([three_for_two], basket)) == {1: (1, "2.00")}
    # Five units: one group; a half unit of a weighed line does not count.
    basket = [item(0, 1, "2.5", "7.50"), item(1, 2, "2", "8.00")]
    assert offs(engine.apply([three_for_two], basket)) == {0: (1, "3.00")}
    # Two units: no group, nothing off.
    assert engine.apply([three_for_two], [item(0, 1, "2", "6.00")]) == {}


def test_quantity_breaks_take_the_highest_tier_reached() -> None:
    tiers = {
        "tiers": [
            {"min_quantity": "6", "percent": "5"},
            {"min_quantity": "12", "percent": "10"},
        ]
    }
    breaks = rule(1, "quantity_break", tiers)
    assert engine.apply([breaks], [item(0, 1, "5", "10.00")]) == {}
    assert offs(engine.apply([breaks], [item(0, 1, "4", "8.00"), item(1, 2, "2", "4.00")])) == {
        0: (1, "0.40"),
        1: (1, "0.20"),
    }
    assert offs(engine.apply([breaks], [item(0, 1, "12", "24.00")])) == {0: (1, "2.40")}


def test_a_bundle_spreads_its_saving_over_its_lines_to_the_cent() -> None:
    lunch = rule(
        1,
        "bundle",
        {
            "items": [{"product_id": 1, "quantity": "1"}, {"product_id": 2, "quantity": "2"}],
            "price": "5.00",
        },
    )
    # one sandwich 4.00 and two drinks 1.50: value 7.00, saving 2.00 spread 4:3
    basket = [item(0, 1, "1", "4.00"), item(1, 2, "2", "3.00")]
    assert offs(engine.apply([lunch], basket)) == {0: (1, "1.14"), 1: (1, "0.86")}
    # two sets need two sandwiches and four drinks: only one set here
    basket = [item(0, 1, "2", "8.00"), item(1, 2, "3", "4.50")]
    applied = engine.apply([lunch], basket)
    assert sum(a.off for a in applied.values()) == D("2.00")
    # a set that costs more bundled than apart takes nothing
    dear = rule(2, "bundle", {**lunch.params, "price": "9.00"})
    assert engine.apply([dear], [item(0, 1, "1", "4.00"), item(1, 2, "2", "3.00")]) == {}


def test_one_promotion_a_line_by_priority_and_the_customers_best_when_exclusive() -> None:
    basket = [item(0, 1, "1", "10.00"), item(1, 2, "1", "10.00")]
    ten = rule(1, "percent_off", {"percent": "10"})
    twenty_on_1 = rule(
        2,
        "percent_off",
        {"percent": "20"},
        applies_to="products",
        targets=frozenset({1}),
        priority=5,
    )
    # The higher priority claims line 0; the other takes line 1.
    assert offs(engine.apply([ten, twenty_on_1], basket)) == {0: (2, "2.00"), 1: (1, "1.00")}
    # An exclusive 25% off line 1 only (2.50) loses to the two together (3.00) ...
    lone = rule(3, "percent_off", {"percent": "25"}, combines=False, applies_to="products",
                targets=frozenset({2}))  # fmt: skip
    assert offs(engine.apply([ten, twenty_on_1, lone], basket)) == {
        0: (2, "2.00"),
        1: (1, "1.00"),
    }
    # ... and an exclusive 40% off everything (8.00) wins alone.
    big = rule(4, "percent_off", {"percent": "40"}, combines=False)
    assert offs(engine.apply([ten, twenty_on_1, big], basket)) == {0: (4, "4.00"), 1: (4, "4.00")}


def test_in_force_reads_branch_dates_weekdays_hours_and_state_history() -> None:
    noon = dt.datetime(2026, 11, 28, 12, 0, tzinfo=dt.UTC)  # a Saturday
    weekend = rule(1, "percent_off", {"percent": "10"}, weekdays="67",
                   starts_on=dt.date(2026, 11, 27), ends_on=dt.date(2026, 11, 29))  # fmt: skip
    assert engine.in_force(weekend, 1, noon, noon)
    assert not engine.in_force(weekend, 1, noon + dt.timedelta(days=2), noon)  # Monday
    assert not engine.in_force(weekend, 1, noon - dt.timedelta(days=7), noon)  # before start
    happy = rule(2, "percent_off", {"percent": "10"}, from_time=dt.time(17), until_time=dt.time(19))
    assert not engine.in_force(happy, 1, noon, noon)
    assert engine.in_force(happy, 1, noon.replace(hour=18), noon)
    assert not engine.in_force(happy, 1, noon.replace(hour=19), noon)
    branch = rule(3, "percent_off", {"percent": "10"}, warehouse_id=2)
    assert not engine.in_force(branch, 1, noon, noon) and engine.in_force(branch, 2, noon, noon)
    paused = rule(
        4,
        "percent_off",
        {"percent": "10"},
        states=(
            (noon - dt.timedelta(hours=5), "active"),
            (noon - dt.timedelta(hours=1), "paused"),
            (noon + dt.timedelta(hours=1), "active"),
        ),
    )
    assert engine.in_force(paused, 1, noon, noon - dt.timedelta(hours=2))
    assert not engine.in_force(paused, 1, noon, noon)
    assert engine.in_force(paused, 1, noon, noon + dt.timedelta(hours=2))


# --- through the API ----------------------------------------------------------------


async def create(client, admin: dict[str, str], **body: Any) -> dict[str, Any]:
    payload = {"name": "Offer", "starts_on": TODAY.isoformat(), **body}
    r = await client.post(f"{ADMIN}/promotions", json=payload, headers=admin)
    assert r.status_code == 201, r.text
    return r.json()["data"]


def sale_body(shop, lines: list[tuple[str, str, str]], **extra: Any) -> dict[str, Any]:
    return {
        "user_id": shop.customer_id,
        "order_date": TODAY.isoformat(),
        "product_items": [
            {"xid": shop.xid(name), "quantity": q, "unit_price": p, **extra.pop(name, {})}
            for name, q, p in lines
        ],
        **extra,
    }


async def test_a_promoted_sale_names_its_promotion_and_posts_the_discount_to_41300(
    client, shop, db
):
    admin = await login(client, db, shop)
    promo = await create(
        client,
        admin,
        name="Juice week",
        kind="percent_off",
        percent="20",
        applies_to="categories",
        targets=[shop.child_category_id],
    )
    body = sale_body(shop, [("apple", "2", "3.50"), ("water", "3", "1.00")])
    body["product_items"][0]["tax_id"] = shop.tax10_id
    preview = await client.post("/sales/preview", json=body, headers=shop.headers)
    assert preview.status_code == 200, preview.text
    lines = preview.json()["data"]["items"]
    assert lines[0]["promotion_id"] == promo["id"] and lines[0]["promotion"] == "Juice week"
    assert lines[0]["promotion_discount"] == "1.40" and lines[0]["net"] == "5.60"
    assert lines[0]["tax"] == "0.56" and lines[0]["total"] == "6.16"
    assert lines[1]["promotion_id"] is None and lines[1]["promotion_discount"] == "0.00"
    assert preview.json()["data"]["total"] == "9.16"

    r = await client.post(
        "/sales",
        json={
            **body,
            "total": "9.16",
            "all_payments": [{"amount": "9.16", "payment_mode_id": "cash"}],
        },
        headers=shop.headers,
    )
    assert r.status_code == 200, r.text
    order_id = r.json()["order_id"]
    detail = (await client.get(f"/sales/{order_id}", headers=shop.headers)).json()["data"]
    assert detail["items"][0]["promotion_id"] == promo["id"]
    assert detail["items"][0]["promotion_discount"] == "1.40"
    # The receipt prints the offer under its line.
    receipt = await client.get(f"/sales/{order_id}/receipt?format=text", headers=shop.headers)
    assert receipt.status_code == 200 and "Juice week" in receipt.text and "-1.40" in receipt.text
    page = await client.get(f"/sales/{order_id}/receipt", headers=shop.headers)
    assert "Juice week −1.40" in page.text
    # Revenue at the price before the promotion, the promotion on 41300.
    assert await db.read(lambda s: gl_balance(s, shop.company_id, "41300")) == D("1.40")
    assert await db.read(lambda s: gl_balance(s, shop.company_id, "41100")) == D("-10.00")
    await check_books(db, shop.company_id)

    # A client that sends the totals without the promotion is refused.
    stale = {**body, "total": "10.70"}
    r = await client.post("/sales", json=stale, headers=shop.headers)
    assert r.status_code == 422 and "total" in r.json()["errors"], r.text
    # A client that prices its own offers opts out.
    own = {**body, "apply_promotions": False, "total": "10.70"}
    r = await client.post("/sales/preview", json=own, headers=shop.headers)
    assert r.status_code == 200 and r.json()["data"]["total"] == "10.70", r.text


async def test_inclusive_tax_cost_is_net_of_tax_and_return_and_void_keep_the_books(
    client, shop, db
):
    admin = await login(client, db, shop)
    await create(client, admin, kind="amount_off", amount="0.60", applies_to="products",
                 targets=[shop.products["apple"]])  # fmt: skip
    body = sale_body(shop, [("apple", "2", "3.60")])
    body["product_items"][0]["tax_id"] = shop.tax_incl_id
    body["all_payments"] = [{"amount": "6.00", "payment_mode_id": "cash"}]
    r = await client.post("/sales", json=body, headers=shop.headers)
    assert r.status_code == 200, r.text
    assert r.json()["total_amount"] == 6
    line = await db.read(
        lambda s: s.scalar(select(OrderItem).where(OrderItem.order_id == r.json()["order_id"]))
    )
    # 7.20 incl. 20% (net 6.00) became 6.00 incl. (net 5.00): 1.20 off, 1.00 of revenue.
    assert (line.promotion_discount, line.promotion_cost) == (D("1.20"), D("1.00"))
    assert (line.subtotal, line.tax_amount, line.total) == (D("5.00"), D("1.00"), D("6.00"))
    await check_books(db, shop.company_id)

    ret = {
        "user_id": shop.customer_id,
        "order_date": TODAY.isoformat(),
        "invoice_number": r.json()["invoice_number"],
        "items": [{"product_id": shop.products["apple"], "quantity": 1, "unit_price": "3.60"}],
        "all_payments": [{"amount": "3.00", "payment_mode_id": "cash"}],
    }
    back = await client.post("/sales-returns", json=ret, headers=shop.headers)
    assert back.status_code == 200, back.text
    await check_books(db, shop.company_id)

    second = await client.post(
        "/sales", json={**body, "invoice_number": None}, headers=shop.headers
    )
    assert second.status_code == 200, second.text
    void = await client.post(
        f"/sales/{second.json()['order_id']}/void", json={"reason": "wrong"}, headers=shop.headers
    )
    assert void.status_code == 200, void.text
    await check_books(db, shop.company_id)
    # The report leaves the voided sale out and shows the units back.
    report = await client.get(f"{ADMIN}/reports/promotions", headers=admin)
    assert report.status_code == 200, report.text
    (row,) = report.json()["data"]["promotions"]
    assert (row["sales"], row["units"], row["units_returned"]) == (1, 2, 1)
    assert (row["discount"], row["cost"]) == ("1.20", "1.00")


async def test_pausing_prices_by_the_moment_of_the_sale(client, shop, db):
    admin = await login(client, db, shop)
    promo = await create(client, admin, kind="percent_off", percent="50")
    before = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=5)
    r = await client.post(
        f"{ADMIN}/promotions/{promo['id']}/pause", headers={**admin, "If-Match": '"1"'}
    )
    assert r.status_code == 200 and r.json()["data"]["status"] == "paused", r.text
    late = sale_body(shop, [("water", "2", "1.00")])
    late["order_date"] = before.isoformat()
    early = await client.post("/sales/preview", json=late, headers=shop.headers)
    assert early.json()["data"]["total"] == "1.00", early.text  # rung up before the pause
    now = await client.post("/sales/preview", json=sale_body(shop, [("water", "2", "1.00")]),
                            headers=shop.headers)  # fmt: skip
    assert now.json()["data"]["total"] == "2.00", now.text
    r = await client.post(
        f"{ADMIN}/promotions/{promo['id']}/resume", headers={**admin, "If-Match": '"2"'}
    )
    assert r.status_code == 200 and r.json()["data"]["status"] == "active", r.text
    again = await client.post("/sales/preview", json=sale_body(shop, [("water", "2", "1.00")]),
                              headers=shop.headers)  # fmt: skip
    assert again.json()["data"]["total"] == "1.00", again.text
    actions = await db.read(
        lambda s: s.scalars(
            select(AuditEvent.action)
            .where(AuditEvent.company_id == shop.company_id, AuditEvent.entity_type == "promotion")
            .order_by(AuditEvent.id)
        )
    )
    assert list(actions) == ["promotion.created", "promotion.paused", "promotion.resumed"]


async def test_the_feed_sends_the_branch_promotions_and_archived_ones_as_tombstones(
    client, shop, db
):
    admin = await login(client, db, shop)
    here = await create(
        client, admin, kind="percent_off", percent="5", warehouse_id=shop.warehouse_id
    )
    there = await create(client, admin, kind="percent_off", percent="5",
                         warehouse_id=shop.other_warehouse_id)  # fmt: skip
    feed = await client.get("/promotions?updated_since=1970-01-01T00:00:00Z", headers=shop.headers)
    assert feed.status_code == 200, feed.text
    ids = [p["id"] for p in feed.json()["data"]["data"]]
    assert ids == [here["id"]]
    token = feed.json()["data"]["sync_token"]
    r = await client.post(
        f"{ADMIN}/promotions/{here['id']}/archive", headers={**admin, "If-Match": '"1"'}
    )
    assert r.status_code == 200, r.text
    later = await client.get(f"/promotions?updated_since={token}", headers=shop.headers)
    assert later.json()["data"]["data"] == [
        {"id": here["id"], "xid": here["xid"], "archived": True}
    ]
    listed = await client.get("/promotions", headers=shop.other_key.headers)
    assert [p["id"] for p in listed.json()["data"]] == [there["id"]]


BAD = [
    ({"kind": "percent_off", "percent": "10", "ends_on": "2020-01-01"}, "ends_on"),
    ({"kind": "percent_off"}, "percent"),
    ({"kind": "percent_off", "percent": "0"}, "percent"),
    ({"kind": "percent_off", "percent": "120"}, "percent"),
    ({"kind": "amount_off", "amount": "-1"}, "amount"),
    ({"kind": "buy_x_get_y", "buy": 2}, "get"),
    ({"kind": "quantity_break", "tiers": []}, "tiers"),
    (
        {"kind": "bundle", "items": [{"product_id": 999999999, "quantity": 1}], "price": "1"},
        "items.0.product_id",
    ),
    ({"kind": "percent_off", "percent": "5", "applies_to": "products"}, "targets"),
    (
        {"kind": "percent_off", "percent": "5", "applies_to": "brands", "targets": [424242]},
        "targets.0",
    ),
    ({"kind": "percent_off", "percent": "5", "from_time": "18:00"}, "until_time"),
    (
        {"kind": "percent_off", "percent": "5", "from_time": "18:00", "until_time": "09:00"},
        "until_time",
    ),
    ({"kind": "percent_off", "percent": "5", "weekdays": [8]}, "weekdays.0"),
    ({"kind": "gift", "percent": "5"}, "kind"),
    ({"kind": "percent_off", "percent": "5", "weekdays": []}, "weekdays"),
    (
        {
            "kind": "quantity_break",
            "tiers": [
                {"min_quantity": "2", "percent": "5"},
                {"min_quantity": "2.0", "percent": "9"},
            ],
        },
        "tiers.1.min_quantity",
    ),
    ({"kind": "buy_x_get_y", "buy": 2, "get": 1, "percent": "0"}, "percent"),
    ({"kind": "percent_off", "percent": "5", "warehouse_id": 987654321}, "warehouse_id"),
    ({"kind": "bundle", "items": [], "price": "1"}, "items"),
    (
        {"kind": "bundle", "items": [{"product_id": 1, "quantity": "0"}], "price": "1"},
        "items.0.quantity",
    ),
]


@pytest.mark.parametrize(("body", "field"), BAD)
async def test_bad_promotions_are_422_naming_the_field_and_write_nothing(
    client, shop, db, body, field
):
    admin = await login(client, db, shop)
    payload = {"name": "Bad", "starts_on": "2026-11-01", **body}
    r = await client.post(f"{ADMIN}/promotions", json=payload, headers=admin)
    assert r.status_code == 422, r.text
    assert field in r.json()["errors"], r.text
    count = await db.read(
        lambda s: s.scalar(
            select(func.count())
            .select_from(Promotion)
            .where(Promotion.company_id == shop.company_id)
        )
    )
    assert count == 0


async def test_roles_and_tenants(client, shop, db):
    admin = await login(client, db, shop)
    promo = await create(client, admin, kind="percent_off", percent="5")
    other = await make_shop(db)
    other_admin = await login(client, db, other)
    r = await client.get(f"{ADMIN}/promotions/{promo['id']}", headers=other_admin)
    assert r.status_code == 404, r.text
    r = await client.patch(f"{ADMIN}/promotions/{promo['id']}", json={"name": "x", "version": 1},
                           headers=other_admin)  # fmt: skip
    assert r.status_code == 404, r.text
    # A sale in the other company is not priced by this company's promotion.
    body = sale_body(other, [("water", "2", "1.00")])
    r = await client.post("/sales/preview", json=body, headers=other.headers)
    assert r.json()["data"]["total"] == "2.00"
    # Renaming and ending are edits; the rule is not.
    r = await client.patch(
        f"{ADMIN}/promotions/{promo['id']}",
        json={
            "name": "Spring",
            "ends_on": (TODAY + dt.timedelta(days=3)).isoformat(),
            "version": 1,
        },
        headers=admin,
    )
    assert r.status_code == 200 and r.json()["data"]["name"] == "Spring", r.text
    row = await db.read(lambda s: by_id(s, Promotion, promo["id"]))
    assert json.loads(row.rule) == {"percent": "5"}


# --- the back office ----------------------------------------------------------------


async def test_the_back_office_creates_pauses_and_reports_a_promotion(web, client, db, shop):
    from tests.web.test_money import as_owner, as_staff, other_client, tokens
    from tests.web_helpers import csrf_of

    await as_owner(web, db, shop)
    page = await web.get("/promotions")
    assert page.status_code == 200 and "No promotions yet" in page.text
    form = {
        **tokens(page.text),
        "name": "Weekend juice",
        "kind": "buy_x_get_y",
        "buy": "2",
        "get": "1",
        "applies_to": "products",
        "targets": f"{(await item_code(db, shop, 'apple'))}",
        "starts_on": TODAY.isoformat(),
        "weekdays": [str(d) for d in range(1, 8)],
        "priority": "3",
        "combines": "yes",
    }
    r = await web.post("/promotions", data=form)
    assert r.status_code == 303, r.text
    listed = await web.get("/promotions")
    table = listed.text.split('id="promotions"')[1].split("</table>")[0]
    assert "Weekend juice" in table and "buy 2, get 1 free" in table, table

    body = sale_body(shop, [("apple", "3", "3.50")])
    body["all_payments"] = [{"amount": "7.00", "payment_mode_id": "cash"}]
    sold = await client.post("/sales", json=body, headers=shop.headers)
    assert sold.status_code == 200 and sold.json()["total_amount"] == 7, sold.text
    report = await web.get("/promotions")
    assert "3.50" in report.text.split('id="promotion-report"')[1]

    # A bad form: named beside its field, nothing written.
    bad = {**form, **tokens(report.text), "name": "Broken", "targets": "NO-SUCH-CODE"}
    r = await web.post("/promotions", data=bad)
    assert r.status_code == 422 and 'id="e-targets"' in r.text, r.text[-3000:]
    bad = {**form, **tokens(r.text), "name": "Broken", "ends_on": "2020-01-01"}
    r = await web.post("/promotions", data=bad)
    assert r.status_code == 422 and 'id="e-ends_on"' in r.text, r.text[-3000:]
    assert "Broken" not in r.text.split('id="promotions"')[1].split("</table>")[0]
    pid = (await client.get("/promotions", headers=shop.headers)).json()["data"][0]["id"]
    r = await web.post(f"/promotions/{pid}/pause", data={**tokens(report.text), "version": "1"})
    assert r.status_code == 303, r.text
    assert (await web.get("/promotions")).text.count(">paused<") == 1

    # Forms a hand could mistype: each a 422 on the page, never a 500.
    for odd in ({"kind": "quantity_break", "tiers": "a:b, 3"},
                {"kind": "bundle", "items": "x x x\n", "price": "abc"},
                {"kind": "buy_x_get_y", "buy": "two", "get": "-1"},
                {"warehouse_id": "nowhere", "priority": "high", "from_time": "25:99"}):  # fmt: skip
        page = await web.get("/promotions")
        r = await web.post("/promotions", data={**form, **tokens(page.text), **odd})
        assert r.status_code == 422, (odd, r.status_code)

    # A cashier sees the list but may not change it: refused by the server.
    cashier = other_client(web)
    await as_staff(cashier, db, shop, "cashier", shop.warehouse_id)
    seen = await cashier.get("/promotions")
    assert seen.status_code == 200 and "New promotion" not in seen.text
    mine = {"csrf": csrf_of(seen.text), "form_token": "t-1", "version": "2"}
    r = await cashier.post(f"/promotions/{pid}/resume", data=mine)
    assert r.status_code == 403
    r = await cashier.post("/promotions", data={**form, **mine})
    assert r.status_code == 403


async def item_code(db, shop, name: str) -> str:
    from tillbook.models import Product

    return await db.read(lambda s: s.scalar(select(Product.item_code).where(
        Product.id == shop.products[name])))  # fmt: skip
