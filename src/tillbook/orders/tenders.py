"""Tenders taken with an order: one payment record and one order-payment allocation
per tender (spec: split tender), and the (account, amount) pairs they post."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from tillbook.auth.context import AuthContext
from tillbook.kit.money import ZERO
from tillbook.models import Order, Payment, PaymentAllocation
from tillbook.models.base import table_of
from tillbook.orders.lookup import Mode
from tillbook.orders.schemas import Tender
from tillbook.unit import QueuedInsert, UnitOfWork

# Nothing in a sale, purchase or return reads its own tenders' allocations back.
_ALLOCATIONS = QueuedInsert(
    table_of(PaymentAllocation), ["company_id", "payment_id", "order_id", "amount"]
)
_payments = table_of(Payment)


async def record_order_tenders(
    uow: UnitOfWork,
    key: AuthContext,
    order: Order,
    tenders: Sequence[tuple[Tender, Mode]],
    *,
    payment_type: str,
    date: dt.date,
) -> tuple[list[Payment], list[tuple[str, Decimal]]]:
    """Written on the tables (the payments now, their allocations with the unit's
    last statement); the returned ``Payment`` objects are transient values for the
    order's detail view and events."""
    rows: list[dict[str, Any]] = [
        {
            "company_id": key.company_id,
            "warehouse_id": key.warehouse_id,
            "user_id": order.user_id,
            "payment_type": payment_type,
            "amount": tender.amount,
            "unallocated_amount": ZERO,
            "payment_mode_id": mode.id,
            "date": date,
            "reference": tender.reference,
            "notes": tender.notes or "",
            "order_id": order.id,
            "created_by": key.user_id,
            "shift_id": order.shift_id,
            "currency": order.currency,
            "exchange_rate": order.exchange_rate,
        }
        for tender, mode in tenders
    ]
    ids = await uow.insert_returning_ids(_payments, rows)
    uow.defer(  # nothing reads them back: with the unit's last statement
        _ALLOCATIONS,
        [
            {
                "company_id": key.company_id,
                "payment_id": id_,
                "order_id": order.id,
                "amount": row["amount"],
            }
            for id_, row in zip(ids, rows, strict=True)
        ],
    )
    payments = [Payment(id=id_, **row) for id_, row in zip(ids, rows, strict=True)]
    postings = [(mode.account_code, tender.amount) for tender, mode in tenders]
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
