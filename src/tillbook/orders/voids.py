"""POST /sales/{id}/void: undo a mistaken sale as if it had not been rung up.

DESIGN.md §5: corrections are reversing entries. A void posts the mirror of the
sale's journal entry (``ledger.service.reverse``, naming it in
``reverses_entry_id``), so revenue, tax, discount, cost, the customer's due balance
and every tender's account go back to where they were; the units go back into the
very layers they were drawn from at the cost they left with
(``inventory.service.restore``); each tender taken with the sale is given back in
its own payment mode (a payment ``out`` carrying the reversing entry, which already
credits the mode's account); the sale keeps its number and lines, with
``order_status`` ``cancelled`` and nothing left due. The void is recorded in the
audit trail (``sale.voided``, with its reason) whichever door it came through.

Only a sale that nothing has happened to since can be voided: a return against it,
a payment allocated to it after it was made (a later ``POST /payments``, a terminal
callback) is a 422; such a sale is corrected by a return. The sale row is locked
first, and a payment locks it too (``payments.service.lock_orders``), so a void and
a payment racing for one sale run one after the other: the second sees the first.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Literal

from sqlalchemy import exists, or_, select
from typing_extensions import TypedDict

from tillbook.audit.service import record
from tillbook.auth.context import AuthContext
from tillbook.errors import Conflict, NotFound, invalid
from tillbook.events.outbox import emit
from tillbook.giftcards import service as giftcards
from tillbook.inventory import service as inventory
from tillbook.kit.money import ZERO, money_str
from tillbook.kit.shapes import MoneyStr, answer
from tillbook.ledger.service import reverse
from tillbook.loyalty import points as loyalty
from tillbook.models import Order, Payment, PaymentAllocation, StockBatch, StockMovement
from tillbook.models.base import utcnow
from tillbook.orders import lookup, shifts, views
from tillbook.orders.schemas import VoidIn
from tillbook.unit import UnitOfWork


@answer
class Refund(TypedDict):
    payment_id: int
    payment_mode_id: int
    amount: MoneyStr


@answer
class SaleVoid(TypedDict):
    # What ``POST /sales/{id}/void`` answers (flat beside ``status``, as ``POST
    # /sales``): the sale cancelled, its reversing entry and the tenders refunded.
    order_id: int
    invoice_number: str
    order_status: Literal["cancelled"]
    void_reason: str
    reversing_entry_id: int | None
    refunds: list[Refund]


@answer
class OrderCancelled(views.OrderDetail):
    # The ``order.cancelled`` event's ``data``: the sale as read back after the void,
    # with the entry that reversed it (None for a sale that posted none).
    reversing_entry_id: int | None


async def void_sale(uow: UnitOfWork, key: AuthContext, ref: str, body: VoidIn) -> SaleVoid:
    session = uow.session
    id_ = await lookup.order_id(session, key.company_id, key.warehouse_id, ["sales"], ref)
    order = None
    if id_ is not None:
        order = (
            await session.execute(
                select(Order)
                .where(
                    Order.company_id == key.company_id,
                    Order.id == id_,
                    Order.warehouse_id == key.warehouse_id,
                )
                .with_for_update()
            )
        ).scalar_one_or_none()
    if order is None:
        raise NotFound("sale not found")
    if order.order_status == "cancelled":
        raise Conflict(f"sale {order.invoice_number} is already voided")
    returned = await session.scalar(
        select(
            exists().where(
                Order.company_id == order.company_id,
                Order.original_order_id == order.id,
                Order.order_type == "sales-returns",
            )
        )
    )
    if returned or order.credited_amount > 0:
        raise invalid(
            "order_id",
            f"sale {order.invoice_number} has a return against it: correct it with a "
            "return, not a void",
        )
    paid_later = await session.scalar(
        select(
            exists()
            .where(
                PaymentAllocation.company_id == order.company_id,
                PaymentAllocation.order_id == order.id,
            )
            .where(
                PaymentAllocation.payment_id == Payment.id,
                Payment.company_id == PaymentAllocation.company_id,
            )
            .where(or_(Payment.order_id.is_(None), Payment.order_id != order.id))
        )
    )
    if paid_later:
        raise invalid(
            "order_id",
            f"sale {order.invoice_number} was paid after it was made: refund that "
            "payment with a return, not a void",
        )

    today = dt.date.today()
    shift_id = await shifts.current(uow, key)
    tenders = list(
        (
            await session.execute(
                select(Payment)
                .where(
                    Payment.company_id == order.company_id,
                    Payment.order_id == order.id,
                    Payment.payment_type == "in",
                )
                .order_by(Payment.id)
            )
        ).scalars()
    )
    draws = (
        await session.execute(
            select(
                StockMovement.product_id,
                StockMovement.batch_id,
                StockMovement.quantity,
                StockMovement.cost_amount,
            )
            .where(
                StockMovement.company_id == order.company_id,
                StockMovement.source_type == "sale",
                StockMovement.source_id == order.id,
                StockMovement.warehouse_id == key.warehouse_id,
            )
            .order_by(StockMovement.id)
        )
    ).all()
    # A deficit layer the sale made (sold below zero at purchase_price) that a receipt
    # has filled since: those units are in stock at what they really cost and the
    # difference is on 51100 (deficit_settlement); putting them back into the layer
    # at purchase_price would not undo the sale.
    deficits: dict[int, Decimal] = {}
    for _, batch_id, quantity, _ in draws:
        if batch_id is not None:
            deficits[batch_id] = deficits.get(batch_id, ZERO) + quantity
    filled = (
        await session.execute(
            select(StockBatch.id, StockBatch.quantity_remaining).where(
                StockBatch.company_id == order.company_id,
                StockBatch.id.in_(list(deficits)),
                StockBatch.source_type == "deficit",
            )
        )
    ).all()
    if any(remaining > deficits[b_id] for b_id, remaining in filled):
        raise invalid(
            "order_id",
            f"sale {order.invoice_number} sold units below zero that stock received since "
            "has filled: correct it with a return, not a void",
        )
    products = await inventory.products(
        uow, key.company_id, key.warehouse_id, {d[0] for d in draws}
    )
    await inventory.restore(
        uow,
        products,
        [(p, b, -q, -c) for p, b, q, c in draws],
        reason="sale_void",
        source_type="sale_void",
        source_id=order.id,
    )
    entry_id = None
    if order.journal_entry_id is not None:
        entry_id = await reverse(
            uow,
            order.company_id,
            order.journal_entry_id,
            narration=f"Void of sale {order.invoice_number}: {body.reason}",
            source_type="sale_void",
            source_id=order.id,
            entry_date=today,
            created_by=key.user_id,
        )
    # Cards and store credit the sale spent get their money back, as the reversing
    # entry credits 21300 (DESIGN §18).
    await giftcards.give_back(
        uow,
        company_id=key.company_id,
        warehouse_id=key.warehouse_id,
        order_id=order.id,
        entry_id=entry_id,
        created_by=key.user_id,
    )
    # Points the sale earned come off the customer's account and points it redeemed
    # go back on, at today's point value (DESIGN §18).
    await loyalty.void_back(
        uow,
        loyalty.Where(key.company_id, key.warehouse_id, order.id, entry_id, key.user_id),
        order.id,
        today,
    )
    refunds = [
        Payment(
            company_id=key.company_id,
            warehouse_id=key.warehouse_id,
            user_id=order.user_id,
            payment_type="out",
            amount=tender.amount,
            unallocated_amount=ZERO,
            payment_mode_id=tender.payment_mode_id,
            date=today,
            reference=f"void {order.invoice_number}",
            notes=body.reason,
            order_id=order.id,
            journal_entry_id=entry_id,
            created_by=key.user_id,
            shift_id=shift_id,
            currency=order.currency,
            exchange_rate=order.exchange_rate,
        )
        for tender in tenders
    ]
    session.add_all(refunds)
    # Nothing is due any more: what was left owing is settled by the void itself
    # (``credited_amount``), so due = total − paid − credited still holds.
    order.credited_amount += order.due_amount
    order.due_amount = ZERO
    if order.currency is not None:
        # The reversal took the whole receivable off at the base it was booked at.
        order.base_due = ZERO
    order.order_status = "cancelled"
    order.void_reason = body.reason
    order.voided_at = utcnow()
    order.void_shift_id = shift_id
    await session.flush()

    detail = await views.load_detail(session, order)
    cancelled: OrderCancelled = {**detail, "reversing_entry_id": entry_id}
    emit(
        uow,
        company_id=key.company_id,
        warehouse_id=key.warehouse_id,
        types=["order.cancelled"],
        data=cancelled,
    )
    # Audited here, so a void through the public API is recorded as one from the
    # back office is.
    await record(
        session,
        company_id=key.company_id,
        actor=key.actor,
        action="sale.voided",
        entity_type="order",
        entity_id=order.id,
        after={"reason": body.reason},
    )
    return {
        "order_id": order.id,
        "invoice_number": order.invoice_number,
        "order_status": "cancelled",
        "void_reason": body.reason,
        "reversing_entry_id": entry_id,
        "refunds": [
            {
                "payment_id": p.id,
                "payment_mode_id": p.payment_mode_id,
                "amount": money_str(p.amount),
            }
            for p in refunds
        ],
    }
