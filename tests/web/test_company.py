"""Settings → company, branches, payment modes and expense categories
(``web/company.py``): each created or edited once, a stale edit refused, errors
beside their fields, and all of it the owner's alone."""

from __future__ import annotations

import re

import httpx
import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from tests.factories import Shop, by_id, make_shop
from tests.web_helpers import (
    STAFF_PASSWORD,
    add_staff,
    audit_count,
    count_rows,
    csrf_of,
    owner_page,
    sign_in,
    tokens,
)
from tillbook.db import Database
from tillbook.models import ApiKey


async def test_payment_modes_and_expense_categories_created_once(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    from tillbook.models import ExpenseCategory, PaymentMode

    page = await owner_page(web, db, shop, "/settings/payment-modes")
    assert "<code>cash</code>" in page
    form = {**tokens(page), "code": "Bad Code", "name": "Mobile money", "create_account": "1"}
    bad = await web.post("/settings/payment-modes", data=form)
    assert bad.status_code == 422 and 'id="e-code"' in bad.text
    assert 'value="Mobile money"' in bad.text
    before = await count_rows(db, PaymentMode, shop.company_id)
    form["code"] = "mobile"
    first = await web.post("/settings/payment-modes", data=form)
    assert first.status_code == 303, first.text
    again = await web.post("/settings/payment-modes", data=form)
    assert again.status_code == 303
    assert await count_rows(db, PaymentMode, shop.company_id) == before + 1
    assert await audit_count(db, shop.company_id, "payment_mode") == 1
    twin = await web.post(
        "/settings/payment-modes", data={**form, "form_token": "form-twin", "name": "Other"}
    )
    assert twin.status_code == 422 and 'id="e-code"' in twin.text and "already exists" in twin.text
    assert "Mobile money" in (await web.get("/settings/payment-modes")).text

    cats = await web.get("/settings/expense-categories")
    assert cats.status_code == 200 and "General Expenses" in cats.text
    neither = {**tokens(cats.text), "name": "Rent"}
    refused = await web.post("/settings/expense-categories", data=neither)
    assert refused.status_code == 422 and 'id="e-account_code"' in refused.text
    made = {**neither, "create_account": "1"}
    assert (await web.post("/settings/expense-categories", data=made)).status_code == 303
    assert (await web.post("/settings/expense-categories", data=made)).status_code == 303
    rents = await db.read(
        lambda s: s.scalar(
            select(func.count())
            .select_from(ExpenseCategory)
            .where(ExpenseCategory.company_id == shop.company_id, ExpenseCategory.name == "Rent")
        )
    )
    assert rents == 1
    no_csrf = await web.post(
        "/settings/expense-categories", data={**made, "csrf": "", "name": "Sneaky"}
    )
    assert no_csrf.status_code == 403


async def test_a_branch_edited_once_and_a_stale_edit_refused(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    from tillbook.models import Warehouse

    listed = await owner_page(web, db, shop, "/settings/branches")
    wh = shop.warehouse_id
    assert f"/settings/branches/{wh}" in listed
    page = await web.get(f"/settings/branches/{wh}")
    version = re.search(r'name="version" value="(\d+)"', page.text)
    assert version is not None
    name = re.search(r'id="f-name" name="name" type="text" value="([^"]*)"', page.text)
    assert name is not None
    form = {
        **tokens(page.text),
        "version": version.group(1),
        "name": name.group(1),
        "address": "1 High Street",
        "receipt_header": "Thank you\r\nfor shopping",
        "receipt_footer": "x" * 5000,
        "allow_negative_stock": "1",
    }
    bad = await web.post(f"/settings/branches/{wh}/edit", data=form)
    assert bad.status_code == 422 and 'id="e-receipt_footer"' in bad.text
    form["receipt_footer"] = "See you soon"
    first = await web.post(f"/settings/branches/{wh}/edit", data=form)
    assert first.status_code == 303, first.text
    again = await web.post(f"/settings/branches/{wh}/edit", data=form)
    assert again.status_code == 303
    stored = await db.read(lambda s: by_id(s, Warehouse, wh))
    assert stored is not None
    assert stored.receipt_header == "Thank you\nfor shopping" and stored.allow_negative_stock
    assert stored.require_shift is False and stored.version == int(version.group(1)) + 1
    assert await audit_count(db, shop.company_id, "warehouse") == 1
    stale = await web.post(
        f"/settings/branches/{wh}/edit", data={**form, "form_token": "form-b2", "address": "Lost"}
    )
    assert stale.status_code == 412 and "Someone else changed this branch" in stale.text
    assert "1 High Street" in stale.text


async def test_a_payment_mode_renamed_stale_refused_and_archived(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    from tillbook.models import ExpenseCategory, PaymentMode

    await owner_page(web, db, shop, "/settings/payment-modes")
    card = await db.read(lambda s: by_id(s, PaymentMode, shop.card_mode_id))
    assert card is not None
    listed = await web.get("/settings/payment-modes")
    assert f'href="/settings/payment-modes/{card.id}"' in listed.text
    page = await web.get(f"/settings/payment-modes/{card.id}")
    assert page.status_code == 200 and "<code>card</code>" in page.text
    version = re.search(r'name="version" value="(\d+)"', page.text)
    assert version is not None
    form = {**tokens(page.text), "version": version.group(1), "name": "", "account_code": ""}
    bad = await web.post(f"/settings/payment-modes/{card.id}/edit", data=form)
    assert bad.status_code == 422 and 'id="e-name"' in bad.text
    form["name"] = "Card terminal"
    done = await web.post(f"/settings/payment-modes/{card.id}/edit", data=form)
    assert done.status_code == 303, done.text
    modes = await web.get("/api/v1/public/payment-modes", headers=shop.headers)
    assert "Card terminal" in modes.text  # the tills see the new name
    stale = await web.post(
        f"/settings/payment-modes/{card.id}/edit",
        data={**form, "form_token": "mode-2", "name": "Lost"},
    )
    assert stale.status_code == 412 and "Someone else changed this payment mode" in stale.text
    confirm = await web.get(f"/settings/payment-modes/{card.id}/archive")
    assert confirm.status_code == 200 and "Archive the payment mode" in confirm.text
    current = re.search(r'name="version" value="(\d+)"', confirm.text)
    assert current is not None
    archive = {**tokens(confirm.text), "version": current.group(1)}
    archived = await web.post(f"/settings/payment-modes/{card.id}/archive", data=archive)
    assert archived.status_code == 303, archived.text
    stored = await db.read(lambda s: by_id(s, PaymentMode, shop.card_mode_id))
    assert stored is not None and stored.archived_at is not None and stored.name == "Card terminal"
    assert (
        "Card terminal"
        not in (await web.get("/api/v1/public/payment-modes", headers=shop.headers)).text
    )
    assert await audit_count(db, shop.company_id, "payment_mode") == 2

    async def general(s: AsyncSession) -> ExpenseCategory:
        # The company's first category, by id: without an order PostgreSQL answers
        # in the heap's order, where an updated row moves to the end.
        found = await s.scalar(
            select(ExpenseCategory)
            .where(ExpenseCategory.company_id == shop.company_id)
            .order_by(ExpenseCategory.id)
            .limit(1)
        )
        assert found is not None
        return found

    cat = await db.read(general)
    page = await web.get(f"/settings/expense-categories/{cat.id}")
    assert page.status_code == 200
    version = re.search(r'name="version" value="(\d+)"', page.text)
    assert version is not None
    form = {
        **tokens(page.text),
        "version": version.group(1),
        "name": "Shop running costs",
        "account_code": "11100",  # not an expense account
    }
    bad = await web.post(f"/settings/expense-categories/{cat.id}/edit", data=form)
    assert bad.status_code == 422 and 'id="e-account_code"' in bad.text
    form["account_code"] = ""
    renamed = await web.post(f"/settings/expense-categories/{cat.id}/edit", data=form)
    assert renamed.status_code == 303, renamed.text
    assert (await db.read(general)).name == "Shop running costs"
    other = await make_shop(db)
    assert (await web.get(f"/settings/payment-modes/{other.card_mode_id}")).status_code == 404


async def test_an_owner_adds_a_branch_once_with_its_errors_beside_the_fields(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    from tillbook.models import Warehouse

    listed = await owner_page(web, db, shop, "/settings/branches")
    assert "New branch" in listed
    page = await web.get("/settings/branches")
    taken = await db.read(lambda s: by_id(s, Warehouse, shop.warehouse_id))
    assert taken is not None
    form = {**tokens(page.text), "name": taken.name, "timezone": "Mars/Olympus"}
    bad = await web.post("/settings/branches", data=form)
    assert bad.status_code == 422 and 'id="e-timezone"' in bad.text
    assert "Mars/Olympus" in bad.text  # what was typed stays in the form
    form.update(timezone="UTC", form_token="branch-2")
    bad = await web.post("/settings/branches", data=form)
    assert bad.status_code == 422 and 'id="e-name"' in bad.text and "already exists" in bad.text
    form.update(name="Riverside", timezone="Europe/Paris", address="2 Quay", require_shift="1")
    first = await web.post("/settings/branches", data=form)
    assert first.status_code == 303, first.text
    again = await web.post("/settings/branches", data=form)
    assert again.status_code == 303 and again.headers["location"] == first.headers["location"]
    branch = await web.get(first.headers["location"])
    assert branch.status_code == 200 and "Riverside" in branch.text and "Saved." in branch.text

    async def riverside(s: AsyncSession) -> list[Warehouse]:
        rows = await s.execute(
            select(Warehouse).where(
                Warehouse.company_id == shop.company_id, Warehouse.name == "Riverside"
            )
        )
        return list(rows.scalars())

    stored = await db.read(riverside)
    assert len(stored) == 1
    assert stored[0].timezone == "Europe/Paris" and stored[0].require_shift
    assert stored[0].address == "2 Quay" and not stored[0].allow_negative_stock
    assert await audit_count(db, shop.company_id, "warehouse") == 1


@pytest.mark.parametrize("role", ["cashier", "accountant", "manager"])
async def test_company_settings_are_the_owners(
    web: httpx.AsyncClient, db: Database, shop: Shop, role: str
) -> None:
    key_id = await db.read(
        lambda s: s.scalar(select(ApiKey.id).where(ApiKey.public_key == shop.key.public_key))
    )
    email = await add_staff(db, shop, role)
    await sign_in(web, email, STAFF_PASSWORD)
    landing = await web.get("/", follow_redirects=True)
    assert "/settings/branches" not in landing.text
    for path in (
        "/settings/payment-modes",
        "/settings/expense-categories",
        "/settings/branches",
        f"/settings/branches/{shop.warehouse_id}",
        f"/settings/payment-modes/{shop.card_mode_id}",
        f"/settings/payment-modes/{shop.card_mode_id}/archive",
        f"/settings/keys/{key_id}/rotate",
        f"/settings/keys/{key_id}/reveal",
        "/settings/company",
    ):
        assert (await web.get(path)).status_code == 403, path
    csrf = csrf_of(landing.text)
    for path, data in (
        ("/settings/payment-modes", {"code": "x", "name": "X", "create_account": "1"}),
        ("/settings/expense-categories", {"name": "X", "create_account": "1"}),
        (f"/settings/branches/{shop.warehouse_id}/edit", {"name": "X", "version": "1"}),
        ("/settings/branches", {"name": "Sneaky branch"}),
        (f"/settings/payment-modes/{shop.card_mode_id}/edit", {"name": "X", "version": "1"}),
        (f"/settings/payment-modes/{shop.card_mode_id}/archive", {"version": "1"}),
        (f"/settings/keys/{key_id}/rotate", {}),
        (f"/settings/keys/{key_id}/rotate", {"grace": "7d"}),
        (f"/settings/keys/{key_id}/revoke", {}),
        ("/settings/company", {"money_format": "1.234,56"}),
    ):
        assert (await web.post(path, data={"csrf": csrf, **data})).status_code == 403, path
    assert await audit_count(db, shop.company_id, "payment_mode") == 0
    assert await audit_count(db, shop.company_id, "warehouse") == 0
    assert await audit_count(db, shop.company_id, "api_key") == 0
    # the key still answers with its own secret: not rotated, not revoked
    assert (await web.get("/api/v1/public/products", headers=shop.headers)).status_code == 200
    assert await audit_count(db, shop.company_id, "company") == 0
