"""Shared by the back-office page tests: signing in over HTTP, making staff, reading a
form's tokens and counting what a page wrote."""

from __future__ import annotations

import re

import httpx
from sqlalchemy import func, select

from tests.factories import Shop
from tillbook.db import Database
from tillbook.models import AuditEvent
from tillbook.tenancy import staff as staff_service

OWNER_PASSWORD = "correct horse battery"
STAFF_PASSWORD = "staff password 1"


async def owner_email(db: Database, shop: Shop) -> str:
    from sqlalchemy import select

    from tillbook.models import User

    async def read(s):  # type: ignore[no-untyped-def]
        return (
            await s.execute(
                select(User.email).where(User.company_id == shop.company_id, User.role == "owner")
            )
        ).scalar_one()

    return str(await db.read(read))


async def add_staff(db: Database, shop: Shop, role: str, warehouse_id: int | None = None) -> str:
    email = f"{role}-{shop.company_id}-{warehouse_id or 0}@example.com"
    new = staff_service.NewStaff(
        name=f"A {role}", email=email, role=role, password=STAFF_PASSWORD, warehouse_id=warehouse_id
    )
    await db.write(lambda s: staff_service.create_staff(s, shop.company_id, new, actor_id=None))
    return email


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found, html[:500]
    return found.group(1)


def form_token_of(html: str) -> str:
    found = re.search(r'name="form_token" value="([^"]+)"', html)
    assert found, html[:500]
    return found.group(1)


async def sign_in(client: httpx.AsyncClient, email: str, password: str) -> httpx.Response:
    page = await client.get("/login")
    return await client.post(
        "/login",
        data={"email": email, "password": password, "csrf": csrf_of(page.text), "next": "/"},
    )


async def count_rows(db: Database, model: type, company_id: int) -> int:
    """How many rows of ``model`` the company has: a page's write, counted before and after."""
    return int(
        await db.read(
            lambda s: s.scalar(
                select(func.count()).select_from(model).where(model.company_id == company_id)
            )
        )
    )


async def audit_count(db: Database, company_id: int, entity_type: str) -> int:
    """How many audit records of ``entity_type`` the company has: each write leaves one."""
    return int(
        await db.read(
            lambda s: s.scalar(
                select(func.count())
                .select_from(AuditEvent)
                .where(AuditEvent.company_id == company_id, AuditEvent.entity_type == entity_type)
            )
        )
    )


async def owner_page(web: httpx.AsyncClient, db: Database, shop: Shop, path: str) -> str:
    """Sign in as the shop's owner and read ``path``, which must answer 200."""
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    page = await web.get(path)
    assert page.status_code == 200, page.text
    return page.text


def tokens(html: str) -> dict[str, str]:
    """The two hidden fields every form posts back: the CSRF and the one-time token."""
    return {"csrf": csrf_of(html), "form_token": form_token_of(html)}
