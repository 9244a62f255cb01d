"""Reads: a customer's points, what they are worth, and their statement."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession
from typing_extensions import TypedDict

from tillbook.audit.setup_records import iso
from tillbook.errors import NotFound
from tillbook.kit.money import money_str
from tillbook.kit.pagination import Page, envelope
from tillbook.kit.shapes import MoneyStr, answer
from tillbook.loyalty.points import account_of, balance
from tillbook.loyalty.programme import terms
from tillbook.models import LoyaltyMovement, Order, User


@answer
class CustomerPointsData(TypedDict):
    # A customer's points as a register shows them (``summary``).
    customer_id: int
    customer_name: str
    enrolled: Annotated[
        bool,
        Field(
            description="whether the customer takes part: every named customer of a company "
            "with a programme; never the walk-in customer"
        ),
    ]
    programme_active: Annotated[bool, Field(description="whether sales earn points now")]
    points: Annotated[
        int,
        Field(
            description="the customer's points; below zero when a return took back points "
            "already spent"
        ),
    ]
    point_value: Annotated[
        MoneyStr | None, Field(description="what one point is worth, or null: no programme")
    ]
    value: Annotated[MoneyStr, Field(description="points × point_value")]


async def summary(session: AsyncSession, company_id: int, customer_id: int) -> CustomerPointsData:
    """A customer's points and their value at today's point value (what a register
    shows when the customer is picked). Another company's customer, a supplier or
    an unknown id is a 404."""
    customer = (
        await session.execute(
            select(User.id, User.name, User.is_walk_in).where(
                User.id == customer_id,
                User.company_id == company_id,
                User.user_type == "customer",
            )
        )
    ).one_or_none()
    if customer is None:
        raise NotFound(f"customer {customer_id} not found")
    found = await terms(session, company_id)
    points = await balance(session, company_id, customer_id)
    return {
        "customer_id": customer.id,
        "customer_name": customer.name,
        # The walk-in customer never earns nor redeems: every till's anonymous buyer.
        "enrolled": found is not None and not customer.is_walk_in,
        "programme_active": bool(found and found.active),
        "points": points,
        "point_value": money_str(found.point_value) if found is not None else None,
        "value": money_str(points * found.point_value) if found is not None else "0.00",
    }


async def statement(
    session: AsyncSession, company_id: int, customer_id: int, page: Page
) -> dict[str, Any]:
    """``summary`` and the customer's movements newest first, each naming its order
    (and invoice number) and journal entry."""
    head = await summary(session, company_id, customer_id)
    account = await account_of(session, company_id, customer_id)
    rows: list[dict[str, Any]] = []
    total = 0
    if account is not None:
        account_id = account[0]
        total = (
            await session.execute(
                select(func.count())
                .select_from(LoyaltyMovement)
                .where(
                    LoyaltyMovement.company_id == company_id,
                    LoyaltyMovement.account_id == account_id,
                )
            )
        ).scalar_one()
        moves = (
            await session.execute(
                select(LoyaltyMovement, Order.invoice_number, Order.order_type)
                .outerjoin(
                    Order,
                    (Order.id == LoyaltyMovement.order_id)
                    & (Order.company_id == LoyaltyMovement.company_id),
                )
                .where(
                    LoyaltyMovement.company_id == company_id,
                    LoyaltyMovement.account_id == account_id,
                )
                .order_by(LoyaltyMovement.id.desc())
                .limit(page.limit)
                .offset(page.offset)
            )
        ).all()
        rows = [
            {
                "id": m.id,
                "kind": m.kind,
                "points": m.points,
                "points_after": m.points_after,
                "value": money_str(m.value),
                "order_id": m.order_id,
                "invoice_number": invoice,
                "order_type": order_type,
                "journal_entry_id": m.journal_entry_id,
                "warehouse_id": m.warehouse_id,
                "created_at": iso(m.created_at),
            }
            for m, invoice, order_type in moves
        ]
    return {**head, "movements": envelope(page, total, rows)}
