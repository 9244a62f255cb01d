"""Tenders taken with an order: one payment record and one order-payment allocation
per tender (spec: split tender), and the (account, amount) pairs they post."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from sqlalchemy import select

from tillbook.auth.context import AuthContext
from tillbook.currency import rates
from tillbook.kit.money import ZERO, money
from tillbook.kit.problems import Problems
from tillbook.ledger import chart
from tillbook.ledger.fx import Held, to_base
from tillbook.ledger.service import Pair
from tillbook.models import Order, Payment, PaymentAllocation, Shift
from tillbook.models.base import table_of, value_of
from tillbook.orders import lookup
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
    ids: Sequence[int] | None = None,
) -> tuple[list[Payment], list[Pair]]:
    """Written on the tables (the payments now, or with the unit's last statement
    under ``ids`` reserved for them, ``repository.insert_order_reserving``; their
    allocations with the last statement); the returned ``Payment`` objects are
    transient values for the order's detail view and events."""
    cash = await _foreign_cash(uow, key, order, tenders, payment_type)
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
            "amount_foreign": cash[i].held.amount if i in cash else None,
            "change_given": (cash[i].change or None) if i in cash else None,
        }
        for i, (tender, mode) in enumerate(tenders)
    ]
    if ids is None:
        ids = await uow.insert_returning_ids(_payments, rows)
    else:
        uow.insert_later(
            _payments, [{"id": id_, **row} for id_, row in zip(ids, rows, strict=True)]
        )
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
    payments = [value_of(Payment, id=id_, **row) for id_, row in zip(ids, rows, strict=True)]
    postings: list[Pair] = []
    for i, (tender, mode) in enumerate(tenders):
        taken = cash.get(i)
        if taken is None:
            postings.append((mode.account_code, tender.amount))
            continue
        # The foreign drawer takes all the cash handed over, at its worth in the base;
        # the change goes out of the base drawer.
        postings.append((mode.account_code, tender.amount + taken.change, taken.held))
        if taken.change:
            postings.append((taken.change_account, -taken.change))
    return payments, postings


@dataclass(frozen=True)
class ForeignCash:
    held: Held
    change: Decimal
    change_account: str


async def _foreign_cash(
    uow: UnitOfWork,
    key: AuthContext,
    order: Order,
    tenders: Sequence[tuple[Tender, Mode]],
    payment_type: str,
) -> dict[int, ForeignCash]:
    """Tenders in a mode holding a foreign currency on a base-currency sale (DESIGN
    §16, foreign cash at the till): taken at the day's rate, the change given in the
    base from the drawer's cash. Every problem is a 422 naming the tender's field;
    the unit rolls back whatever was written before."""
    problems = Problems()
    out: dict[int, ForeignCash] = {}
    change_account: str | None = None
    for i, (tender, mode) in enumerate(tenders):
        where = f"all_payments.{i}"
        if mode.currency is None or mode.currency == order.currency:
            if tender.foreign_amount is not None:
                problems.add(
                    f"{where}.foreign_amount",
                    f"payment mode {mode.code!r} holds the sale's own currency: send amount only",
                )
            continue
        if order.currency is not None:
            problems.add(
                f"{where}.payment_mode_id",
                f"payment mode {mode.code!r} holds {mode.currency}, this document is in "
                f"{order.currency}",
            )
            continue
        if payment_type != "in" or order.order_type != "sales":
            problems.add(
                f"{where}.payment_mode_id",
                f"payment mode {mode.code!r} holds {mode.currency}: foreign cash is taken on "
                "sales only; record other payments in it with POST /payments",
            )
            continue
        found = await rates.rate_on(uow.session, key.company_id, mode.currency, order.order_date)
        if found is None:
            problems.add(
                f"{where}.payment_mode_id",
                f"there is no {mode.currency} rate on or before {order.order_date}",
            )
            continue
        rate = found[1]
        if tender.foreign_amount is None:
            foreign, change = money(tender.amount / rate), ZERO
        else:
            foreign = tender.foreign_amount
            change = to_base(foreign, rate) - tender.amount
            if change < 0:
                problems.add(
                    f"{where}.foreign_amount",
                    f"{foreign} {mode.currency} at {rate} is {to_base(foreign, rate)}, less "
                    f"than the {tender.amount} it pays",
                )
                continue
        if change and change_account is None:
            change_account = await _drawer_account(uow, key, order)
        out[i] = ForeignCash(Held(mode.currency, foreign, rate), change, change_account or "")
    problems.raise_if_any()
    return out


async def _drawer_account(uow: UnitOfWork, key: AuthContext, order: Order) -> str:
    """Where change in the base comes from: the shift's drawer, else the cash mode."""
    mode_id = None
    if order.shift_id is not None:
        mode_id = await uow.session.scalar(
            select(Shift.cash_mode_id).where(
                Shift.id == order.shift_id, Shift.company_id == order.company_id
            )
        )
    modes = await lookup.payment_modes(
        uow.session,
        key.company_id,
        [("drawer", mode_id if mode_id is not None else "cash")],
        Problems(),
        version=key.reference_version,
    )
    found = modes.get("drawer")
    return found.account_code if found is not None else chart.CASH_ON_HAND


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
