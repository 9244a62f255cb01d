"""Settings → API keys (``web/settings.py``): a secret shown once, rotation with and
without a grace period, revealing with the password (throttled) and revoking once,
and the settings pages refused to every role but the owner's."""

from __future__ import annotations

import datetime as dt
import re

import httpx
import pytest
from sqlalchemy import func, select, update

from tests.factories import Shop, by_id, make_shop
from tests.web_helpers import (
    OWNER_PASSWORD,
    STAFF_PASSWORD,
    add_staff,
    audit_count,
    count_rows,
    csrf_of,
    form_token_of,
    owner_email,
    owner_page,
    sign_in,
    tokens,
)
from tillbook.db import Database
from tillbook.models import ApiKey, AuditEvent, Webhook


async def test_an_api_key_secret_is_shown_once(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    page = await web.get("/settings/keys")
    form = {
        "csrf": csrf_of(page.text),
        "form_token": form_token_of(page.text),
        "name": "back till",
        "warehouse_id": str(shop.warehouse_id),
    }
    first = await web.post("/settings/keys", data=form)
    assert first.status_code == 200 and 'id="secret-key">sk_' in first.text
    again = await web.post("/settings/keys", data=form)
    assert "sk_" not in again.text and "already created" in again.text
    assert await count_rows(db, ApiKey, shop.company_id) == 3
    listed = await web.get("/settings/keys")
    assert "back till" in listed.text and "sk_" not in listed.text


async def test_rotating_a_key_shows_new_secrets_once_and_retires_the_old(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    key_id = await db.read(
        lambda s: s.scalar(select(ApiKey.id).where(ApiKey.public_key == shop.key.public_key))
    )
    products = "/api/v1/public/products"
    assert (await web.get(products, headers=shop.headers)).status_code == 200
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    confirm = await web.get(f"/settings/keys/{key_id}/rotate")
    assert confirm.status_code == 200 and "stop working at once" in confirm.text
    form = {"csrf": csrf_of(confirm.text), "form_token": form_token_of(confirm.text)}
    rotated = await web.post(f"/settings/keys/{key_id}/rotate", data=form)
    assert rotated.status_code == 200 and "has new secrets" in rotated.text
    found = re.search(r'id="secret-key">(sk_[^<]+)<', rotated.text)
    assert found is not None and found.group(1) != shop.key.secret_key
    assert shop.key.public_key in rotated.text  # the public key stays
    # the old secret is refused from now on, the new one works on the same key
    assert (await web.get(products, headers=shop.headers)).status_code == 401
    new_headers = {**shop.headers, "X-Service-Secret-Key": found.group(1)}
    assert (await web.get(products, headers=new_headers)).status_code == 200
    # the same form sent again rotates nothing and shows no secret
    again = await web.post(f"/settings/keys/{key_id}/rotate", data=form)
    assert "sk_" not in again.text and "already rotated" in again.text
    assert (await web.get(products, headers=new_headers)).status_code == 200
    rotations = await db.read(
        lambda s: s.scalar(
            select(func.count())
            .select_from(AuditEvent)
            .where(
                AuditEvent.company_id == shop.company_id,
                AuditEvent.entity_type == "api_key",
                AuditEvent.action == "rotated",
            )
        )
    )
    assert rotations == 1
    # a revoked key is not rotated; another company's key is not found
    page = await web.get(f"/settings/keys/{key_id}/revoke")
    revoke = {"csrf": csrf_of(page.text), "form_token": form_token_of(page.text)}
    assert (await web.post(f"/settings/keys/{key_id}/revoke", data=revoke)).status_code == 303
    page = await web.get(f"/settings/keys/{key_id}/rotate")
    form = {"csrf": csrf_of(page.text), "form_token": form_token_of(page.text)}
    refused = await web.post(f"/settings/keys/{key_id}/rotate", data=form)
    assert refused.status_code == 409 and "revoked" in refused.text
    other = await make_shop(db)
    other_key = await db.read(
        lambda s: s.scalar(select(ApiKey.id).where(ApiKey.public_key == other.key.public_key))
    )
    page = await web.get("/settings/keys")
    form = {"csrf": csrf_of(page.text), "form_token": form_token_of(page.text)}
    assert (await web.post(f"/settings/keys/{other_key}/rotate", data=form)).status_code == 404
    assert (await web.get(products, headers=other.headers)).status_code == 200


def _signed(headers: dict[str, str], hmac_secret: str, target: str) -> dict[str, str]:
    import time as _time

    from tillbook.auth.service import sign

    stamp = str(int(_time.time()))
    return {
        **headers,
        "X-Service-Timestamp": stamp,
        "X-Service-Signature": sign(hmac_secret, stamp, "GET", target.encode(), b""),
    }


async def test_a_rotation_with_grace_lets_the_old_secrets_work_until_then(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    """A chain moving its tills one by one: both secrets work until the grace ends;
    the old secret signs with its own signing secret; rotating again or revoking
    ends the grace at once; a grace that has run out is refused."""
    key_id = await db.read(
        lambda s: s.scalar(select(ApiKey.id).where(ApiKey.public_key == shop.key.public_key))
    )
    products = "/api/v1/public/products"
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)

    async def rotate(grace: str) -> httpx.Response:
        page = await web.get(f"/settings/keys/{key_id}/rotate")
        assert 'name="grace"' in page.text and "For 24 hours" in page.text
        form = {"csrf": csrf_of(page.text), "form_token": form_token_of(page.text)}
        return await web.post(f"/settings/keys/{key_id}/rotate", data={**form, "grace": grace})

    bad = await rotate("2d")
    assert bad.status_code == 422 and 'id="e-grace"' in bad.text and "1h, 24h" in bad.text
    assert (await web.get(products, headers=shop.headers)).status_code == 200  # not rotated

    rotated = await rotate("24h")
    assert rotated.status_code == 200 and 'id="old-until"' in rotated.text
    first = re.search(r'id="secret-key">(sk_[^<]+)<', rotated.text)
    first_hmac = re.search(r'id="hmac-secret">(hs_[^<]+)<', rotated.text)
    assert first is not None and first_hmac is not None
    new_headers = {**shop.headers, "X-Service-Secret-Key": first.group(1)}
    assert (await web.get(products, headers=shop.headers)).status_code == 200
    assert (await web.get(products, headers=new_headers)).status_code == 200
    # each secret signs with its own signing secret, not the other's
    old_signed = _signed(shop.headers, shop.key.hmac_secret, products)
    assert (await web.get(products, headers=old_signed)).status_code == 200
    mixed = _signed(shop.headers, first_hmac.group(1), products)
    assert (await web.get(products, headers=mixed)).status_code == 401
    new_signed = _signed(new_headers, first_hmac.group(1), products)
    assert (await web.get(products, headers=new_signed)).status_code == 200
    crossed = _signed(new_headers, shop.key.hmac_secret, products)
    assert (await web.get(products, headers=crossed)).status_code == 401
    assert "old secrets work until" in (await web.get("/settings/keys")).text
    audit = await db.read(
        lambda s: s.scalar(
            select(AuditEvent.after)
            .where(AuditEvent.entity_type == "api_key", AuditEvent.entity_id == key_id)
            .order_by(AuditEvent.id.desc())
            .limit(1)
        )
    )
    assert "old_secrets_valid_until" in str(audit) and "sk_" not in str(audit)

    # a grace that has run out
    await db.write(
        lambda s: s.execute(
            update(ApiKey)
            .where(ApiKey.id == key_id)
            .values(previous_valid_until=dt.datetime.now(dt.UTC) - dt.timedelta(seconds=1))
        )
    )
    assert (await web.get(products, headers=shop.headers)).status_code == 401
    assert (await web.get(products, headers=new_headers)).status_code == 200
    assert "old secrets work until" not in (await web.get("/settings/keys")).text

    # rotating again keeps only the secrets it replaces; without grace, none
    again = await rotate("1h")
    second = re.search(r'id="secret-key">(sk_[^<]+)<', again.text)
    assert second is not None
    second_headers = {**shop.headers, "X-Service-Secret-Key": second.group(1)}
    assert (await web.get(products, headers=shop.headers)).status_code == 401
    assert (await web.get(products, headers=new_headers)).status_code == 200
    assert (await web.get(products, headers=second_headers)).status_code == 200
    third = await rotate("none")
    assert "no longer work" in third.text
    assert (await web.get(products, headers=new_headers)).status_code == 401
    found = re.search(r'id="secret-key">(sk_[^<]+)<', third.text)
    assert found is not None
    third_headers = {**shop.headers, "X-Service-Secret-Key": found.group(1)}
    assert (await web.get(products, headers=third_headers)).status_code == 200

    # revoking ends a grace at once
    await rotate("7d")
    page = await web.get(f"/settings/keys/{key_id}/revoke")
    revoke = {"csrf": csrf_of(page.text), "form_token": form_token_of(page.text)}
    assert (await web.post(f"/settings/keys/{key_id}/revoke", data=revoke)).status_code == 303
    assert (await web.get(products, headers=third_headers)).status_code == 401
    key = await db.read(lambda s: by_id(s, ApiKey, key_id))
    assert key is not None and key.previous_secret_digest is None


@pytest.mark.parametrize("role", ["cashier", "accountant", "manager"])
async def test_settings_pages_are_refused_to_other_roles(
    web: httpx.AsyncClient, db: Database, shop: Shop, role: str
) -> None:
    email = await add_staff(db, shop, role)
    await sign_in(web, email, STAFF_PASSWORD)
    landing = await web.get("/", follow_redirects=True)
    csrf = csrf_of(landing.text)
    key_id = await db.read(
        lambda s: s.scalar(select(ApiKey.id).where(ApiKey.company_id == shop.company_id))
    )
    for path in (
        "/settings/staff",
        "/settings/staff/1",
        "/settings/staff/1/archive",
        f"/settings/keys/{key_id}/reveal",
        f"/settings/keys/{key_id}/revoke",
        "/settings/webhooks",
        "/settings/webhooks/1",
        "/settings/webhooks/1/rotate",
        "/settings/webhooks/deliveries/1",
    ):
        r = await web.get(path)
        assert r.status_code == 403, (path, r.status_code)
        assert "lacks the permission" in r.text
    for path, data in (
        ("/settings/staff", {"name": "x", "email": "x@example.com", "role": "owner"}),
        (f"/settings/keys/{key_id}/revoke", {}),
        (f"/settings/keys/{key_id}/reveal", {"password": STAFF_PASSWORD}),
        ("/settings/webhooks", {"url": "http://127.0.0.1:9/x"}),
    ):
        r = await web.post(path, data={"csrf": csrf, **data})
        assert r.status_code == 403, path
    assert await count_rows(db, Webhook, shop.company_id) == 0
    revoked = await db.read(lambda s: by_id(s, ApiKey, key_id))
    assert revoked is not None and revoked.status == 1


async def test_a_key_revealed_with_the_password_only_and_revoked_once(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    keys = await owner_page(web, db, shop, "/settings/keys")
    key_id = await db.read(
        lambda s: s.scalar(
            select(ApiKey.id).where(ApiKey.company_id == shop.company_id).order_by(ApiKey.id)
        )
    )
    assert f"/settings/keys/{key_id}/reveal" in keys and "/rotate" in keys
    form = await web.get(f"/settings/keys/{key_id}/reveal")
    assert form.status_code == 200 and "sk_" not in form.text
    wrong = await web.post(
        f"/settings/keys/{key_id}/reveal",
        data={"csrf": csrf_of(form.text), "password": "not the password"},
    )
    assert wrong.status_code == 403 and 'id="e-password"' in wrong.text and "sk_" not in wrong.text
    await add_staff(db, shop, "owner")  # a fellow owner's password is not the signed-in one's
    fellows = await web.post(
        f"/settings/keys/{key_id}/reveal",
        data={"csrf": csrf_of(form.text), "password": STAFF_PASSWORD},
    )
    assert fellows.status_code == 403 and "sk_" not in fellows.text
    no_csrf = await web.post(f"/settings/keys/{key_id}/reveal", data={"password": OWNER_PASSWORD})
    assert no_csrf.status_code == 403 and "sk_" not in no_csrf.text
    shown = await web.post(
        f"/settings/keys/{key_id}/reveal",
        data={"csrf": csrf_of(form.text), "password": OWNER_PASSWORD},
    )
    assert shown.status_code == 200 and 'id="secret-key">sk_' in shown.text
    assert await audit_count(db, shop.company_id, "api_key") == 1  # the showing, not the secret

    confirm = await web.get(f"/settings/keys/{key_id}/revoke")
    assert confirm.status_code == 200 and "Revoke the key" in confirm.text
    done = await web.post(f"/settings/keys/{key_id}/revoke", data=tokens(confirm.text))
    assert done.status_code == 303
    again = await web.post(f"/settings/keys/{key_id}/revoke", data=tokens(confirm.text))
    assert again.status_code == 303
    key = await db.read(lambda s: by_id(s, ApiKey, key_id))
    assert key is not None and key.status == 0
    assert await audit_count(db, shop.company_id, "api_key") == 2
    assert (await web.get(f"/settings/keys/{key_id + 10_000}/revoke")).status_code == 404


async def test_wrong_passwords_to_reveal_a_key_are_throttled(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    await owner_page(web, db, shop, "/settings/keys")
    key_id = await db.read(
        lambda s: s.scalar(select(ApiKey.id).where(ApiKey.company_id == shop.company_id))
    )
    form = await web.get(f"/settings/keys/{key_id}/reveal")
    path, csrf = f"/settings/keys/{key_id}/reveal", csrf_of(form.text)
    for _ in range(10):
        wrong = await web.post(path, data={"csrf": csrf, "password": "guess guess"})
        assert wrong.status_code == 403
    right = await web.post(path, data={"csrf": csrf, "password": OWNER_PASSWORD})
    assert right.status_code == 429 and "sk_" not in right.text
    assert "too many failed" in right.text and "retry-after" in right.headers
