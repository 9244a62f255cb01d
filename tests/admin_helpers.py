"""Shared by the tests of the back-office API (``/api/v1/admin``): its address, signing
in as a shop's owner, a sale body, and the error envelope with the field it names."""

from __future__ import annotations

from sqlalchemy import select

from tillbook.models import User

ADMIN = "http://testserver/api/v1/admin"
PASSWORD = "correct horse battery"


async def admin_email(db, company_id: int) -> str:
    """The email of the company's owner (every test shop has one, with ``PASSWORD``)."""
    email = await db.read(
        lambda s: s.scalar(
            select(User.email).where(User.company_id == company_id, User.role == "owner")
        )
    )
    assert email
    return email


async def login(client, db, shop) -> dict[str, str]:
    """Sign in as the shop's owner: the bearer header of the admin session."""
    email = await admin_email(db, shop.company_id)
    r = await client.post(f"{ADMIN}/login", json={"email": email, "password": PASSWORD})
    assert r.status_code == 200, r.text
    return {"Authorization": f"Bearer {r.json()['token']}"}


def sale_body(shop, quantity=1):
    """A valid POST /sales body: ``quantity`` apples at 3.50 for the shop's customer."""
    return {
        "user_id": shop.customer_id,
        "order_date": "2026-11-20",
        "product_items": [{"xid": shop.xid("apple"), "quantity": quantity, "unit_price": 3.5}],
    }


def assert_error(r, status: int, field: str | None = None) -> dict:
    """The error envelope with ``status``, naming ``field`` in ``errors`` when given."""
    assert r.status_code == status, r.text
    body = r.json()
    assert body["status"] == "error" and body["message"], body
    if field is not None:
        assert field in body["errors"], body
    return body
