"""Tenders taken with an order: one payment record and one order-payment allocation
per tender (spec: split tender), and the (account, amount) pairs they post."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from decimal import Decimal

from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.auth.context import AuthContext
from tillbook.models import Order, Payment, PaymentAllocation
from tillbook.orders.lookup import Mode
from tillbook.orders.schemas import Tender


async def record_order_tenders(
    session: AsyncSession,
    key: AuthContext,
    order: Order,
    tenders: Sequence[tuple[Tender, Mode]],
    *,
    payment_type: str,
    date: dt.date,
) -> tuple[list[Payment], list[tuple[str, Decimal]]]:
    payments: list[Payment] = []
    postings: list[tuple[str, Decimal]] = []
    for tender, mode in tenders:
        payment = Payment(
            company_id=key.company_id,
            warehouse_id=key.warehouse_id,
            user_id=order.user_id,
            payment_type=payment_type,
            amount=tender.amount,
            unallocated_amount=Decimal("0.00"),
            payment_mode_id=mode.id,
            date=date,
            reference=tender.reference,
            notes=tender.notes or "",
            order_id=order.id,
            created_by=key.user_id,
        )
        session.add(payment)
        payments.append(payment)
        postings.append((mode.account_code, tender.amount))
    await session.flush()
    for payment in payments:
        session.add(
            PaymentAllocation(
                company_id=key.company_id,
                payment_id=payment.id,
                order_id=order.id,
                amount=payment.amount,
            )
        )
    return payments, postings


def payment_status(total: Decimal, paid: Decimal) -> str:
    if paid >= total:
        return "paid"
    return "partially_paid" if paid > 0 else "unpaid"


def settle_status(order: Order) -> str:
    """An invoice's payment status from what is still due on it (payments and
    return credits both reduce the due balance)."""
    if order.due_amount <= 0:
        return "paid"
    return "partially_paid" if order.paid_amount > 0 else "unpaid"
