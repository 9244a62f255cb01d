"""POST /payments and GET /payments/user-invoices.

A payment ``in`` comes from a customer, a payment ``out`` goes to a supplier. It
may settle some of the party's invoices (allocations); whatever is not allocated
stays with the party as a credit. The party's balance moves by the full amount
through the ledger (rule ``payment_in`` / ``payment_out``), and every order keeps
``paid_amount`` = Σ its allocations.

The answers' shapes are declared here (``kit/shapes.py``): ``PaymentRecorded``
(the answer of ``POST /payments`` beside ``status``, and the ``payment.created``
event's data) and ``UserInvoices``; ``api/public/openapi.py`` wraps them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import Annotated, Literal, NotRequired, cast

from pydantic import Field
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from typing_extensions import TypedDict

from tillbook.audit.service import record
from tillbook.auth.context import AuthContext
from tillbook.currency import documents, rates
from tillbook.errors import NotFound, invalid
from tillbook.events.outbox import emit
from tillbook.kit import xid
from tillbook.kit.money import ZERO, money_str
from tillbook.kit.problems import Problems
from tillbook.kit.refs import ref_to_id
from tillbook.kit.shapes import DateStr, MoneyStr, answer
from tillbook.ledger.fx import EXCHANGE, to_base
from tillbook.ledger.parties import warehouse_balances
from tillbook.ledger.rules import RuleName
from tillbook.ledger.service import post
from tillbook.models import Order, Payment, PaymentAllocation, User
from tillbook.orders import lookup, shifts, views
from tillbook.orders.currency import ForeignFigures, currency_fields, settle_base
from tillbook.orders.tenders import settle_status
from tillbook.orders.views import PaymentStatus
from tillbook.payments.schemas import PaymentIn
from tillbook.unit import UnitOfWork

# payment_type -> (party type, order type it settles, noun of that order)
KINDS = {
    "in": ("customer", "sales", "sale"),
    "out": ("supplier", "purchases", "purchase"),
}
ORDER_TYPE_OF_PARTY = {"customer": "sales", "supplier": "purchases"}


@answer
class Allocation(TypedDict):
    order_id: int
    invoice_number: str
    amount: MoneyStr
    due_amount: MoneyStr
    payment_status: PaymentStatus


class ForeignPayment(TypedDict, total=False):
    """What a foreign payment adds (DESIGN §16); nothing for a base one (v1's shape)."""

    currency: Annotated[str, Field(description="the payment's currency (ISO 4217)")]
    exchange_rate: Annotated[
        str, Field(description="base units per one unit of the payment's currency, exact")
    ]
    base_amount: MoneyStr


@answer
class PaymentRecorded(ForeignPayment):
    payment_id: int
    payment_type: Literal["in", "out"]
    user_id: int
    amount: MoneyStr
    unallocated_amount: MoneyStr
    payment_mode_id: int
    date: DateStr
    reference: str | None
    notes: str
    journal_entry_id: int | None
    allocations: list[Allocation]


@answer
class InvoiceParty(TypedDict):
    id: int
    name: str
    user_type: Literal["customer", "supplier"]
    balance: MoneyStr


@answer
class OutstandingInvoice(ForeignFigures):
    order_id: int
    xid: str
    invoice_number: str
    order_type: Literal["sales", "purchases"]
    order_date: DateStr
    total: MoneyStr
    paid_amount: MoneyStr
    due_amount: MoneyStr
    payment_status: PaymentStatus


@answer
class UserInvoices(TypedDict):
    user: InvoiceParty
    invoices: list[OutstandingInvoice]
    # In the base currency: a foreign invoice's due is in its own currency, so the
    # sum names those separately when there are any.
    total_due: MoneyStr
    due_by_currency: NotRequired[dict[str, MoneyStr]]


async def lock_orders(
    session: AsyncSession, company_id: int, warehouse_id: int, order_ids: Iterable[int]
) -> dict[int, Order]:
    """Orders of this warehouse, locked in id order (two payments never both settle
    the same due amount, and never deadlock)."""
    ids = sorted(set(order_ids))
    if not ids:
        return {}
    rows = (
        await session.execute(
            select(Order)
            .where(
                Order.company_id == company_id,
                Order.id.in_(ids),
                Order.warehouse_id == warehouse_id,
            )
            .order_by(Order.id)
            .with_for_update()
        )
    ).scalars()
    return {o.id: o for o in rows}


def payment_data(payment: Payment, allocations: list[tuple[Order, Decimal]]) -> PaymentRecorded:
    """The shape of a payment: the POST response (beside ``status``) and the event
    data; a foreign payment adds its currency and rate (DESIGN §16)."""
    foreign: ForeignPayment = (
        {}
        if payment.currency is None
        else {
            "currency": payment.currency,
            "exchange_rate": str(payment.exchange_rate),
            "base_amount": money_str(to_base(payment.amount, payment.exchange_rate or ZERO)),
        }
    )
    return {
        **foreign,
        "payment_id": payment.id,
        # The columns hold these codes only (their writers are typed with them).
        "payment_type": cast(Literal["in", "out"], payment.payment_type),
        "user_id": payment.user_id,
        "amount": money_str(payment.amount),
        "unallocated_amount": money_str(payment.unallocated_amount),
        "payment_mode_id": payment.payment_mode_id,
        "date": payment.date.isoformat(),
        "reference": payment.reference,
        "notes": payment.notes,
        "journal_entry_id": payment.journal_entry_id,
        "allocations": [
            {
                "order_id": order.id,
                "invoice_number": order.invoice_number,
                "amount": money_str(amount),
                "due_amount": money_str(order.due_amount),
                "payment_status": cast(PaymentStatus, order.payment_status),
            }
            for order, amount in allocations
        ],
    }


async def create_payment(uow: UnitOfWork, key: AuthContext, body: PaymentIn) -> PaymentRecorded:
    session = uow.session
    party_type, order_type, noun = KINDS[body.payment_type]
    problems = Problems()
    party = await lookup.party(uow, key.company_id, body.user_id, party_type, "user_id", problems)
    modes = await lookup.payment_modes(
        session,
        key.company_id,
        [("payment_mode_id", body.payment_mode_id)],
        problems,
        version=key.reference_version,
    )
    invoices = body.invoices or []
    date = body.date or dt.date.today()
    fx = await documents.conversion(
        session, key.company_id, body.currency, body.exchange_rate, date
    )
    base = (await rates.company(session, key.company_id)).base_currency

    # An invoice is named by id, xid or invoice number; the same order named twice
    # (``17`` and ``SAL-00017``) is one allocation too many.
    named = await lookup.order_ids(
        session, key.company_id, key.warehouse_id, [order_type], [inv.order_id for inv in invoices]
    )
    first_seen: dict[int, int] = {}
    wanted: list[int | None] = []
    for i, (inv, id_) in enumerate(zip(invoices, named, strict=True)):
        if id_ is None:
            problems.add(f"invoices.{i}.order_id", f"unknown {noun} {inv.order_id!r}")
        elif id_ in first_seen:
            problems.add(
                f"invoices.{i}.order_id",
                f"order {inv.order_id!r} is already listed as invoices.{first_seen[id_]}",
            )
            id_ = None
        else:
            first_seen[id_] = i
        wanted.append(id_)
    orders = await lock_orders(
        session, key.company_id, key.warehouse_id, [i for i in wanted if i is not None]
    )

    allocations: list[tuple[Order, Decimal]] = []
    for i, (inv, id_) in enumerate(zip(invoices, wanted, strict=True)):
        if id_ is None:
            continue
        order = orders[id_]
        if party is not None and order.user_id != party.id:
            problems.add(
                f"invoices.{i}.order_id",
                f"{noun} {order.invoice_number} is not an invoice of this {party_type}",
            )
            continue
        if order.order_status == "cancelled":
            problems.add(f"invoices.{i}.order_id", f"{noun} {order.invoice_number} was voided")
            continue
        if (order.currency or base) != (fx.currency if fx else base):
            problems.add(
                f"invoices.{i}.order_id",
                f"{noun} {order.invoice_number} is in {order.currency or base}, this payment "
                f"in {fx.currency if fx else base}: pay it in its own currency",
            )
            continue
        if inv.amount > order.due_amount:
            problems.add(
                f"invoices.{i}.amount",
                f"allocation {inv.amount} exceeds the due amount {order.due_amount} "
                f"of {order.invoice_number}",
            )
            continue
        allocations.append((order, inv.amount))
    allocated = sum((inv.amount for inv in invoices), ZERO)
    if allocated > body.amount:
        problems.add(
            "invoices",
            f"allocations add up to {allocated}, more than the payment amount {body.amount}",
        )
    problems.raise_if_any()
    assert party is not None
    mode = modes["payment_mode_id"]

    payment = Payment(
        company_id=key.company_id,
        warehouse_id=key.warehouse_id,
        user_id=party.id,
        payment_type=body.payment_type,
        amount=body.amount,
        unallocated_amount=body.amount - allocated,
        payment_mode_id=mode.id,
        date=date,
        reference=body.reference,
        notes=body.notes or "",
        order_id=None,
        created_by=key.user_id,
        shift_id=await shifts.current(uow, key),
        currency=fx.currency if fx else None,
        exchange_rate=fx.rate if fx else None,
    )
    session.add(payment)
    await session.flush()

    settled: list[Order] = []
    # A foreign payment takes off the party's account what each invoice it settles
    # was booked at (its share of ``base_due``), and the rest at today's rate; what
    # the money is worth today differs by the exchange gain or loss (``ledger.fx``).
    carried = ZERO
    for order, amount in allocations:
        if fx is not None:
            carried += settle_base(order, amount)
        was_paid = order.payment_status == "paid"
        order.paid_amount += amount
        order.due_amount -= amount
        order.payment_status = settle_status(order)
        if order.order_type == "sales" and order.payment_status == "paid" and not was_paid:
            settled.append(order)
        session.add(
            PaymentAllocation(
                company_id=key.company_id, payment_id=payment.id, order_id=order.id, amount=amount
            )
        )

    rule: RuleName = "payment_in" if body.payment_type == "in" else "payment_out"
    direction = "from" if body.payment_type == "in" else "to"
    payment.journal_entry_id = await post(
        uow,
        company_id=key.company_id,
        warehouse_id=key.warehouse_id,
        rule=rule,
        figures={"tenders": [(mode.account_code, body.amount)], "amount": body.amount},
        narration=f"Payment {body.payment_type} {direction} {party.name} ({mode.name})",
        field="amount",
        source_type="payment",
        source_id=payment.id,
        entry_date=payment.date,
        party_id=party.id,
        created_by=key.user_id,
        fx=fx,
        fixed=(
            {"amount": carried + fx.to_base(payment.unallocated_amount)} if fx is not None else None
        ),
        balance_on=EXCHANGE,
    )
    await session.flush()

    data = payment_data(payment, allocations)
    emit(
        uow,
        company_id=key.company_id,
        warehouse_id=key.warehouse_id,
        types=["payment.created"],
        data=data,
    )
    for order in settled:
        emit(
            uow,
            company_id=key.company_id,
            warehouse_id=key.warehouse_id,
            types=["order.paid"],
            data=await views.load_detail(session, order),
        )
    # Audited here, so a payment a till records is in the trail as one from the back
    # office is (docs/audit.md).
    await record(
        session,
        company_id=key.company_id,
        actor=key.actor,
        action="payment.received" if body.payment_type == "in" else "payment.made",
        entity_type="payment",
        entity_id=data["payment_id"],
        after={
            "warehouse_id": key.warehouse_id,
            "user_id": data["user_id"],
            "amount": data["amount"],
            "payment_mode_id": data["payment_mode_id"],
            "allocations": [
                {"order_id": a["order_id"], "amount": a["amount"]} for a in data["allocations"]
            ],
        },
    )
    return data


async def user_invoices(
    session: AsyncSession, key: AuthContext, user_id: str | None
) -> UserInvoices:
    """The party's outstanding invoices in the key's warehouse, oldest first, and its
    balance there (not the company-wide one: a key sees its own warehouse's books)."""
    if user_id is None or not user_id.strip():
        raise invalid("user_id", "is required: a customer or supplier id")
    id_ = ref_to_id(user_id)
    party = None
    if id_ is not None:
        party = (
            await session.execute(
                select(User).where(
                    User.id == id_,
                    User.company_id == key.company_id,
                    User.user_type.in_(tuple(ORDER_TYPE_OF_PARTY)),
                )
            )
        ).scalar_one_or_none()
    if party is None:
        raise NotFound("party not found")
    orders = (
        (
            await session.execute(
                select(Order)
                .where(
                    Order.company_id == key.company_id,
                    Order.warehouse_id == key.warehouse_id,
                    Order.user_id == party.id,
                    Order.order_type == ORDER_TYPE_OF_PARTY[party.user_type],
                    Order.due_amount > 0,
                )
                .order_by(Order.order_date, Order.id)
            )
        )
        .scalars()
        .all()
    )
    balances = await warehouse_balances(
        session, key.company_id, key.warehouse_id, {party.id: party.user_type}
    )
    found: UserInvoices = {
        "user": {
            "id": party.id,
            "name": party.name,
            "user_type": cast(Literal["customer", "supplier"], party.user_type),
            "balance": money_str(balances[party.id]),
        },
        "invoices": [
            {
                "order_id": o.id,
                "xid": xid.encode(o.id),
                "invoice_number": o.invoice_number,
                "order_type": cast(Literal["sales", "purchases"], o.order_type),
                "order_date": o.order_date.isoformat(),
                "total": money_str(o.total),
                "paid_amount": money_str(o.paid_amount),
                "due_amount": money_str(o.due_amount),
                "payment_status": cast(PaymentStatus, o.payment_status),
                **currency_fields(o),
            }
            for o in orders
        ],
        "total_due": money_str(sum((o.due_amount for o in orders if o.currency is None), ZERO)),
    }
    due = _due_by_currency(orders)
    if due:
        found["due_by_currency"] = due
    return found


def _due_by_currency(orders: Sequence[Order]) -> dict[str, MoneyStr]:
    """The foreign invoices' dues, summed by currency (empty when there are none)."""
    due: dict[str, Decimal] = {}
    for o in orders:
        if o.currency is not None:
            due[o.currency] = due.get(o.currency, ZERO) + o.due_amount
    return {code: money_str(v) for code, v in sorted(due.items())}
