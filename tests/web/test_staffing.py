"""Settings → Staff (``web/staffing.py``): a staff member created once, edited, a
stale edit refused, archived; the last owner kept."""

from __future__ import annotations

import re

import httpx

from tests.factories import Shop
from tests.web_helpers import (
    audit_count,
    owner_email,
    owner_page,
    sign_in,
    tokens,
)
from tillbook.db import Database


async def test_staff_created_once_edited_stale_refused_and_archived(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    page = await owner_page(web, db, shop, "/settings/staff")
    assert "New staff member" in page
    form = {
        **tokens(page),
        "name": "Bea Branch",
        "email": "not an email",
        "role": "manager",
        "warehouse_id": str(shop.warehouse_id),
        "password": "short",
    }
    bad = await web.post("/settings/staff", data=form)
    assert bad.status_code == 422 and 'id="e-email"' in bad.text
    assert 'value="Bea Branch"' in bad.text and "short" not in bad.text  # no password echoed
    form["email"] = f"bea-{shop.company_id}@example.com"
    bad = await web.post("/settings/staff", data=form)
    assert bad.status_code == 422 and 'id="e-password"' in bad.text
    form["password"] = "a long enough password"
    before = await audit_count(db, shop.company_id, "staff")
    first = await web.post("/settings/staff", data=form)
    assert first.status_code == 303, first.text
    again = await web.post("/settings/staff", data=form)
    assert again.headers["location"] == first.headers["location"]
    assert await audit_count(db, shop.company_id, "staff") == before + 1
    taken = await web.post(
        "/settings/staff", data={**form, "form_token": "form-twin", "name": "Twin"}
    )
    assert taken.status_code == 409 and 'id="e-email"' in taken.text

    member = await web.get(first.headers["location"])
    assert member.status_code == 200 and "Bea Branch" in member.text
    sid = first.headers["location"].split("/settings/staff/")[1].split("?")[0]
    version = re.search(r'name="version" value="(\d+)"', member.text)
    assert version is not None
    edit = {
        **tokens(member.text),
        "version": version.group(1),
        "name": "Bea Boss",
        "email": form["email"],
        "role": "accountant",
        "warehouse_id": "",
    }
    saved = await web.post(f"/settings/staff/{sid}/edit", data=edit)
    assert saved.status_code == 303, saved.text
    stale = await web.post(
        f"/settings/staff/{sid}/edit", data={**edit, "form_token": "form-old", "name": "Lost"}
    )
    assert stale.status_code == 412 and "Someone else changed" in stale.text
    shown = await web.get(f"/settings/staff/{sid}")
    assert "Bea Boss" in shown.text and "Lost" not in shown.text
    scoped_owner = await web.post(
        f"/settings/staff/{sid}/edit",
        data={
            **edit,
            **tokens(shown.text),
            "version": str(int(edit["version"]) + 1),
            "role": "owner",
            "warehouse_id": str(shop.warehouse_id),
        },
    )
    assert scoped_owner.status_code == 422 and 'id="e-warehouse_id"' in scoped_owner.text

    confirm = await web.get(f"/settings/staff/{sid}/archive")
    assert confirm.status_code == 200 and "Archive Bea Boss?" in confirm.text
    done = await web.post(f"/settings/staff/{sid}/archive", data=tokens(confirm.text))
    assert done.status_code == 303
    assert "(archived)" in (await web.get(f"/settings/staff/{sid}")).text
    assert await audit_count(db, shop.company_id, "staff") == before + 3
    assert (await sign_in(web, form["email"], form["password"])).status_code == 401


async def test_the_last_owner_cannot_be_archived_nor_demoted_from_the_page(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    listed = await owner_page(web, db, shop, "/settings/staff")
    owner_id = re.search(r'href="/settings/staff/(\d+)">', listed)
    assert owner_id is not None
    sid = owner_id.group(1)
    confirm = await web.get(f"/settings/staff/{sid}/archive")
    refused = await web.post(f"/settings/staff/{sid}/archive", data=tokens(confirm.text))
    assert refused.status_code == 422 and "last active owner" in refused.text
    member = await web.get(f"/settings/staff/{sid}")
    version = re.search(r'name="version" value="(\d+)"', member.text)
    assert version is not None
    email = await owner_email(db, shop)
    demoted = await web.post(
        f"/settings/staff/{sid}/edit",
        data={
            **tokens(member.text),
            "version": version.group(1),
            "name": "Owner",
            "email": email,
            "role": "manager",
            "warehouse_id": "",
        },
    )
    assert demoted.status_code == 422 and "last active owner" in demoted.text
    assert (await web.get("/settings/staff")).status_code == 200  # still signed in, still owner
