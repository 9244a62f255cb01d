"""The till's reads of customers and suppliers (GET /customers, GET /suppliers).

Parties are company-wide; each is shown with its balance in the key's warehouse
only (``ledger/parties.py``), never what it owes or is owed elsewhere. Archived
parties are left out: a till cannot use them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

from pydantic import Field
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from typing_extensions import TypedDict

from tillbook.auth.context import AuthContext
from tillbook.kit import xid
from tillbook.kit.changes import Changes, Live, Walk, changes
from tillbook.kit.money import ZERO, money_str
from tillbook.kit.pagination import Page, Paged, paged
from tillbook.kit.shapes import MoneyStr, answer
from tillbook.ledger.parties import warehouse_balances
from tillbook.models import User
from tillbook.parties import repository as repo


@answer
class Customer(TypedDict):
    id: int
    xid: str
    name: str
    phone: str | None
    email: str | None
    is_walk_in: bool
    balance: MoneyStr


@answer
class CustomerChange(Customer, Live):
    # A customer in the change feed (``customer_changes``).
    pass


@answer
class Supplier(TypedDict):
    id: int
    xid: str
    name: str
    phone: str | None
    email: str | None
    balance: Annotated[
        MoneyStr, Field(description="what the company owes the supplier in this warehouse")
    ]


def customer_item(party: User, balance: str) -> Customer:
    return {
        "id": party.id,
        "xid": xid.encode(party.id),
        "name": party.name,
        "phone": party.phone,
        "email": party.email,
        "is_walk_in": party.is_walk_in,
        "balance": balance,
    }


def supplier_item(party: User, balance: str) -> Supplier:
    return {
        "id": party.id,
        "xid": xid.encode(party.id),
        "name": party.name,
        "phone": party.phone,
        "email": party.email,
        "balance": balance,
    }


async def public_page(
    session: AsyncSession, key: AuthContext, kind: str, page: Page, *, search: str | None
) -> Paged[Customer] | Paged[Supplier]:
    total, parties = await repo.page(
        session, key.company_id, kind, page, search=search, include_archived=False
    )
    balances = await warehouse_balances(
        session, key.company_id, key.warehouse_id, {p.id: p.user_type for p in parties}
    )
    if kind == "customer":
        return paged(page, total, [customer_item(p, money_str(balances[p.id])) for p in parties])
    return paged(page, total, [supplier_item(p, money_str(balances[p.id])) for p in parties])


async def customer_changes(
    session: AsyncSession, key: AuthContext, walk: Walk
) -> Changes[CustomerChange]:
    """Customers changed since ``walk.since`` (``kit.changes``; a balance moving is a
    change), archived ones as tombstones; each with its balance in this warehouse."""

    async def render(rows: Sequence[Sequence[Any]]) -> list[Customer]:
        parties = [row[0] for row in rows]
        balances = await warehouse_balances(
            session, key.company_id, key.warehouse_id, {p.id: p.user_type for p in parties}
        )
        return [customer_item(p, money_str(balances[p.id])) for p in parties]

    return await changes(
        session,
        walk,
        select(User).where(User.company_id == key.company_id, User.user_type == "customer"),
        User.updated_at,
        User.id,
        User.archived_at.is_(None),
        render,
    )


def new_customer_item(party: User) -> Customer:
    """A customer just added at the till: it has no lines anywhere yet."""
    return customer_item(party, money_str(ZERO))
