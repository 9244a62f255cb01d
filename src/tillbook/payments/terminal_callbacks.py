"""Inbound terminal / payment-provider callbacks (DESIGN.md §10).

A provider is registered per warehouse with a payment mode (Card → 11105
clearing) and a secret. Its callback is signed over the raw body; ``confirmed``
records the payment through the same path as POST /payments (allocation, books,
``order.paid``); ``failed`` leaves the order as it is; each provider
``reference`` is processed once. Its answer's shape is declared here
(``CallbackOutcome``, ``kit/shapes.py``); the document's ``CallbackResult`` wraps it.
"""

from __future__ import annotations

import json
from typing import Annotated, Literal, NotRequired, cast

from pydantic import Field, StrictStr, model_validator
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from typing_extensions import TypedDict

from tillbook.auth.actor import Actor
from tillbook.auth.context import AuthContext
from tillbook.config import master_key
from tillbook.db import cross_tenant
from tillbook.errors import NotFound, Unauthorized, Unprocessable, ValidationFailed, invalid
from tillbook.fields import InvoiceNo, Ref, Strict
from tillbook.kit import crypto, xid
from tillbook.kit.bounds import Clean, PositiveMoney, stored_length
from tillbook.kit.problems import Problems
from tillbook.kit.shapes import answer
from tillbook.models import Order, TerminalCallback, TerminalProvider, User, Warehouse
from tillbook.orders import lookup
from tillbook.orders.views import PaymentStatus
from tillbook.payments.schemas import AllocationIn, PaymentIn
from tillbook.payments.service import create_payment
from tillbook.unit import UnitOfWork

SECRET_CONTEXT = b"terminal-secret"


class CallbackIn(Strict):
    order_id: Ref | None = None
    invoice_number: InvoiceNo | None = None
    status: Literal["confirmed", "failed"]
    amount: PositiveMoney
    reference: Annotated[
        StrictStr, Field(min_length=1, max_length=stored_length(TerminalCallback.reference)), Clean
    ]

    @model_validator(mode="after")
    def _names_an_order(self) -> CallbackIn:
        if self.order_id is None and self.invoice_number is None:
            raise ValueError("send order_id or invoice_number")
        return self


@answer
class CallbackOutcome(TypedDict):
    # What a callback answers (flat beside ``status``), and what is kept to answer a
    # repeat of its ``reference`` again.
    order_id: int
    invoice_number: str
    callback_status: Literal["confirmed", "failed"]
    reference: str
    payment_id: NotRequired[Annotated[int, Field(description="present when confirmed")]]
    payment_status: PaymentStatus
    duplicate: NotRequired[
        Annotated[bool, Field(description="true when this reference was processed before")]
    ]


async def add_provider(
    session: AsyncSession, warehouse_id: int, name: str, payment_mode: str
) -> tuple[TerminalProvider, str]:
    """Register a provider; the secret is returned once and kept encrypted."""
    with cross_tenant("operator"):  # a warehouse of whichever company
        warehouse = await session.scalar(select(Warehouse).where(Warehouse.id == warehouse_id))
    if warehouse is None:
        raise NotFound(f"warehouse {warehouse_id} not found")
    if not name.strip() or len(name) > 100:
        raise invalid("name", "must be 1 to 100 characters")
    problems = Problems()
    modes = await lookup.payment_modes(
        session, warehouse.company_id, [("payment_mode", payment_mode)], problems
    )
    problems.raise_if_any()
    taken = await session.scalar(
        select(TerminalProvider.id).where(
            TerminalProvider.company_id == warehouse.company_id,
            TerminalProvider.warehouse_id == warehouse.id,
            TerminalProvider.name == name.strip(),
        )
    )
    if taken is not None:
        raise invalid("name", f"a provider named {name.strip()!r} already exists here")
    secret = crypto.random_token("tps_", 40)
    provider = TerminalProvider(
        company_id=warehouse.company_id,
        warehouse_id=warehouse.id,
        name=name.strip(),
        payment_mode_id=modes["payment_mode"].id,
        secret_encrypted=crypto.encrypt(secret, master_key(), context=SECRET_CONTEXT),
        active=True,
    )
    session.add(provider)
    await session.flush()
    return provider, secret


async def list_providers(session: AsyncSession, warehouse_id: int) -> list[TerminalProvider]:
    """A warehouse's providers, oldest first (secrets stay encrypted)."""
    with cross_tenant("operator"):  # a warehouse of whichever company
        warehouse = await session.scalar(select(Warehouse).where(Warehouse.id == warehouse_id))
    if warehouse is None:
        raise NotFound(f"warehouse {warehouse_id} not found")
    rows = await session.scalars(
        select(TerminalProvider)
        .where(
            TerminalProvider.company_id == warehouse.company_id,
            TerminalProvider.warehouse_id == warehouse_id,
        )
        .order_by(TerminalProvider.id)
    )
    return list(rows)


def callback_path(provider: TerminalProvider) -> str:
    return f"/api/v1/public/terminal-callbacks/{xid.encode(provider.id)}"


async def find_provider(session: AsyncSession, provider_ref: str) -> TerminalProvider:
    id_ = xid.decode(provider_ref)
    # A callback's path names its provider before anything names the company.
    with cross_tenant("authentication"):
        provider = (
            await session.scalar(select(TerminalProvider).where(TerminalProvider.id == id_))
            if id_ is not None
            else None
        )
    if provider is None or not provider.active:
        raise NotFound("terminal provider not found")
    return provider


def verify_signature(provider: TerminalProvider, raw: bytes, signature: str | None) -> None:
    if not signature:
        raise Unauthorized("missing X-Service-Signature")
    secret = crypto.decrypt(provider.secret_encrypted, master_key(), context=SECRET_CONTEXT)
    if not crypto.same(signature.strip().lower(), crypto.hmac_hex(secret, raw)):
        raise Unauthorized("invalid callback signature")


async def handle_callback(
    uow: UnitOfWork, provider: TerminalProvider, body: CallbackIn
) -> CallbackOutcome:
    session = uow.session
    earlier = (
        await session.execute(
            select(TerminalCallback).where(
                TerminalCallback.company_id == provider.company_id,
                TerminalCallback.provider_id == provider.id,
                TerminalCallback.reference == body.reference,
            )
        )
    ).scalar_one_or_none()
    if earlier is not None:
        kept = json.loads(earlier.outcome)
        # An outcome kept before the answer was typed carries the envelope's status.
        kept.pop("status", None)
        return cast(CallbackOutcome, {**kept, "duplicate": True})

    order = await _order(session, provider, body)
    result: CallbackOutcome
    if body.status == "confirmed":
        if order.due_amount <= 0:
            raise Unprocessable(f"order {order.invoice_number} has nothing due")
        if body.amount != order.due_amount:
            raise ValidationFailed(
                {
                    "amount": [
                        f"{body.amount} does not match the due balance {order.due_amount} "
                        f"of {order.invoice_number}"
                    ]
                }
            )
        key = await _acting_context(session, provider, order)
        payment = await create_payment(
            uow,
            key,
            PaymentIn(
                user_id=order.user_id,
                payment_type="in",
                amount=body.amount,
                payment_mode_id=provider.payment_mode_id,
                reference=body.reference,
                notes=f"terminal {provider.name}",
                invoices=[AllocationIn(order_id=order.id, amount=body.amount)],
            ),
        )
        result = {
            "order_id": order.id,
            "invoice_number": order.invoice_number,
            "callback_status": body.status,
            "reference": body.reference,
            "payment_id": payment["payment_id"],
            "payment_status": "paid",
        }
    else:
        result = {
            "order_id": order.id,
            "invoice_number": order.invoice_number,
            "callback_status": body.status,
            "reference": body.reference,
            # The column holds these codes only (its writers are typed with them).
            "payment_status": cast(PaymentStatus, order.payment_status),
        }
    session.add(
        TerminalCallback(
            company_id=provider.company_id,
            provider_id=provider.id,
            reference=body.reference,
            order_id=order.id,
            status=body.status,
            amount=body.amount,
            outcome=json.dumps(result),
        )
    )
    await session.flush()
    return result


async def _order(session: AsyncSession, provider: TerminalProvider, body: CallbackIn) -> Order:
    """The sale the callback names, in the provider's warehouse, locked: ``order_id``
    by id, xid or invoice number, ``invoice_number`` by invoice number (or id)."""
    if body.order_id is not None:
        field, ref = "order_id", body.order_id
        id_ = await lookup.order_id(
            session, provider.company_id, provider.warehouse_id, ["sales"], ref
        )
    else:
        assert body.invoice_number is not None
        field, ref = "invoice_number", body.invoice_number
        id_ = await lookup.order_id(
            session,
            provider.company_id,
            provider.warehouse_id,
            ["sales"],
            ref,
            prefer="invoice_number",
        )
    order = None
    if id_ is not None:
        order = (
            await session.execute(
                select(Order)
                .where(Order.company_id == provider.company_id, Order.id == id_)
                .with_for_update()
            )
        ).scalar_one()
    if order is None:
        raise invalid(field, f"no sale {ref!r} at this terminal")
    return order


async def _acting_context(
    session: AsyncSession, provider: TerminalProvider, order: Order
) -> AuthContext:
    """The provider acts for the warehouse; the payment is credited to the staff member
    who rang up the sale."""
    staff = (
        await session.get(User, (order.staff_user_id, order.company_id))
        if order.staff_user_id
        else None
    )
    return AuthContext(
        actor=Actor.system(
            staff.name if staff else provider.name, staff.id if staff else order.user_id
        ),
        company_id=provider.company_id,
        warehouse_id=provider.warehouse_id,
        rate_limit="",
        allow_negative_stock=False,
    )
