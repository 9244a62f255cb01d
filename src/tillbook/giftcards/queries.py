"""Reads: a card as lists and statements show it (never its code), the company's
cards and store credit, one card's movements."""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal, cast

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession
from typing_extensions import TypedDict

from tillbook.errors import NotFound
from tillbook.giftcards import codes
from tillbook.giftcards.service import usable
from tillbook.kit.money import money_str
from tillbook.kit.pagination import Page, Paged, paged
from tillbook.kit.shapes import DateStr, MoneyStr, answer
from tillbook.models import GiftCard, GiftCardMovement, User


class CardView(TypedDict):
    """A card or a store-credit balance, its code masked (``card_view``)."""

    id: int
    kind: Literal["card", "credit"]
    code: str | None
    balance: MoneyStr
    status: Literal["active", "expired"]
    expires_on: DateStr | None
    customer_id: int | None
    customer_name: str | None
    warehouse_id: int | None
    created_at: str | None


@answer
class GiftCardBalanceData(TypedDict):
    # What a holder who typed the code may know (``balance_view``).
    code: str
    balance: MoneyStr
    expires_on: DateStr | None
    usable: bool


def card_view(card: GiftCard, customer_name: str | None = None) -> CardView:
    """A card or a store-credit balance, its code masked."""
    return {
        "id": card.id,
        "kind": cast(Literal["card", "credit"], card.kind),
        "code": codes.masked(card.last4) if card.kind == "card" else None,
        "balance": money_str(card.balance),
        "status": cast(Literal["active", "expired"], card.status),
        "expires_on": card.expires_on.isoformat() if card.expires_on else None,
        "customer_id": card.customer_id,
        "customer_name": customer_name,
        "warehouse_id": card.warehouse_id,
        "created_at": card.created_at.isoformat() if card.created_at else None,
    }


def balance_view(card: GiftCard, today: dt.date) -> GiftCardBalanceData:
    """What a holder who typed the code may know: balance, expiry, whether it pays."""
    return {
        "code": codes.masked(card.last4),
        "balance": money_str(card.balance),
        "expires_on": card.expires_on.isoformat() if card.expires_on else None,
        "usable": usable(card, today) and card.balance > 0,
    }


async def card_page(
    session: AsyncSession,
    company_id: int,
    page: Page,
    *,
    kind: str | None = None,
    customer_id: int | None = None,
) -> Paged[CardView]:
    where = [GiftCard.company_id == company_id]
    if kind is not None:
        where.append(GiftCard.kind == kind)
    if customer_id is not None:
        where.append(GiftCard.customer_id == customer_id)
    total = (
        await session.execute(select(func.count()).select_from(GiftCard).where(*where))
    ).scalar_one()
    rows = (
        await session.execute(
            select(GiftCard, User.name)
            .outerjoin(
                User, (User.id == GiftCard.customer_id) & (User.company_id == GiftCard.company_id)
            )
            .where(*where)
            .order_by(GiftCard.id.desc())
            .limit(page.limit)
            .offset(page.offset)
        )
    ).all()
    return paged(page, total, [card_view(card, name) for card, name in rows])


async def statement(session: AsyncSession, company_id: int, card_id: int) -> dict[str, Any]:
    """A card's movements, oldest first, each with the order and journal entry that
    carried it: another company's card is a 404, as an unknown one."""
    found = (
        await session.execute(
            select(GiftCard, User.name)
            .outerjoin(
                User, (User.id == GiftCard.customer_id) & (User.company_id == GiftCard.company_id)
            )
            .where(GiftCard.id == card_id, GiftCard.company_id == company_id)
        )
    ).one_or_none()
    if found is None:
        raise NotFound("gift card not found")
    card, name = found
    moves = (
        await session.execute(
            select(GiftCardMovement)
            .where(GiftCardMovement.company_id == company_id, GiftCardMovement.card_id == card.id)
            .order_by(GiftCardMovement.id)
        )
    ).scalars()
    return {
        **card_view(card, name),
        "movements": [
            {
                "id": m.id,
                "kind": m.kind,
                "amount": money_str(m.amount),
                "balance_after": money_str(m.balance_after),
                "order_id": m.order_id,
                "journal_entry_id": m.journal_entry_id,
                "warehouse_id": m.warehouse_id,
                "created_at": m.created_at.isoformat() if m.created_at else None,
            }
            for m in moves
        ],
    }
