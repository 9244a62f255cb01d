"""Pairing, listing and revoking registers; what a register asks of the server.

A register is a device an owner or manager paired to a branch (DESIGN.md §15). Its
credential is an ordinary API key of that branch (``tenancy.service.create_api_key``,
with a generous rate limit: a first sync reads the whole catalog), marked as a
register's by ``registers.key_id``; the key lookup reads that mark
(``AuthContext.register_id``), which is all a sale needs to know to accept
``offline``. Revoking the register revokes its key, so its next request is a 401.

Each register has a prefix (``R1``, ``R2``, …) from a per-company counter that never
goes back (registers are revoked, never deleted), so a new device never takes the
invoice numbers of an old one. Pairing and revoking are audited (never a secret).

What a register asks (``details``, ``cashiers``, ``heartbeat``) answers the shapes
declared here (``kit/shapes.py``); ``api/public/openapi.py`` wraps them.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import Annotated, Literal, cast

from pydantic import Field
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession
from typing_extensions import TypedDict

from tillbook.audit.service import record
from tillbook.auth import roles
from tillbook.auth.context import AuthContext
from tillbook.errors import NotFound, invalid
from tillbook.kit import crypto
from tillbook.kit.changes import utc
from tillbook.kit.crypto import PinParameters
from tillbook.kit.shapes import DateTimeStr, answer
from tillbook.models import Company, Order, Register, Shift, User, Warehouse
from tillbook.registers.schemas import HeartbeatIn
from tillbook.tenancy import service as tenancy

ENTITY = "register"
RATE_LIMIT = "10000/minute"
NUMBER_DIGITS = 6  # R1-000123


@answer
class RegisterShift(TypedDict):
    id: int
    reference: str | None


@answer
class RegisterDetails(TypedDict):
    id: int
    name: str
    prefix: str
    warehouse_id: int
    warehouse_name: str
    receipt_header: str | None
    receipt_footer: str | None
    company_name: str
    base_currency: str
    money_format: str
    last_invoice_number: str | None
    timezone: Annotated[str, Field(description="the branch's IANA time zone (promotions' hours)")]
    open_shift: RegisterShift | None


@answer
class Cashier(TypedDict):
    id: int
    name: str
    role: str
    may_refund_without_invoice: bool
    pin: PinParameters


@answer
class HeartbeatAnswer(TypedDict):
    server_time: str


def _stamp(moment: dt.datetime) -> str:
    return utc(moment).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def _iso(moment: dt.datetime | None) -> str | None:
    return None if moment is None else _stamp(moment)


# What the back office reads of registers (``api/admin/registers.py`` puts them in
# the envelope): each one with what it last reported, the pairing's answer (its
# key, the secret once) and the branches one may be paired to.


@answer
class RefusedWrite(TypedDict):
    key: str
    kind: str
    number: str | None
    reason: str
    at: str | None


@answer
class AdminRegister(TypedDict):
    id: int
    name: str
    prefix: str
    warehouse_id: int
    warehouse_name: str
    status: Literal["active", "revoked"]
    created_at: DateTimeStr | None
    last_seen_at: DateTimeStr | None
    queued: int
    attention: list[RefusedWrite]
    revoked_at: DateTimeStr | None


@answer
class RegisterCompany(TypedDict):
    id: int
    name: str
    base_currency: str
    money_format: str


@answer
class PairedRegister(AdminRegister):
    public_key: str
    company: RegisterCompany
    secret_key: str | None


@answer
class PairableBranch(TypedDict):
    id: int
    name: str


def attention_of(register: Register) -> list[RefusedWrite]:
    """The refused writes the device last reported (an unreadable value: none);
    ``heartbeat`` stores them whole (``schemas.Refused``, every field)."""
    try:
        items = json.loads(register.attention or "[]")
    except ValueError:
        return []
    if not isinstance(items, list):
        return []
    return [cast(RefusedWrite, i) for i in items if isinstance(i, dict)]


def view(register: Register, warehouse_name: str) -> AdminRegister:
    return {
        "id": register.id,
        "name": register.name,
        "prefix": register.prefix,
        "warehouse_id": register.warehouse_id,
        "warehouse_name": warehouse_name,
        "status": "revoked" if register.revoked_at is not None else "active",
        "created_at": _iso(register.created_at),
        "last_seen_at": _iso(register.last_seen_at),
        "queued": register.queued,
        "attention": attention_of(register),
        "revoked_at": _iso(register.revoked_at),
    }


@dataclass(frozen=True)
class Paired:
    register: Register
    warehouse: Warehouse
    company: Company
    key: tenancy.NewKey

    def answer(self) -> PairedRegister:
        """The pairing's answer without the secret (what a replay may show again);
        the router adds it to the first answer only."""
        return {
            **view(self.register, self.warehouse.name),
            "public_key": self.key.key.public_key,
            "company": {
                "id": self.company.id,
                "name": self.company.name,
                "base_currency": self.company.base_currency,
                "money_format": self.company.money_format,
            },
            "secret_key": None,
        }


async def _warehouse(session: AsyncSession, company_id: int, warehouse_id: int) -> Warehouse:
    warehouse = await session.scalar(
        select(Warehouse).where(Warehouse.company_id == company_id, Warehouse.id == warehouse_id)
    )
    if warehouse is None:
        raise invalid("warehouse_id", f"warehouse {warehouse_id} not found")
    if warehouse.archived_at is not None:
        raise invalid("warehouse_id", f"warehouse {warehouse_id} is archived")
    return warehouse


async def pair(
    session: AsyncSession, company_id: int, warehouse_id: int, name: str, *, actor_id: int | None
) -> Paired:
    """A new register of the branch, with its own key (the secret is in the answer,
    once). The caller checked ``registers.manage`` for the branch. Two pairings at
    once that take the same number: the unique prefix refuses the second, whose
    unit runs again and takes the next one."""
    warehouse = await _warehouse(session, company_id, warehouse_id)
    clean = name.strip()
    if not clean:
        raise invalid("name", "must not be empty")
    company = await session.get(Company, company_id)
    assert company is not None
    number = (
        await session.scalar(
            select(func.max(Register.number)).where(Register.company_id == company_id)
        )
        or 0
    ) + 1
    prefix = f"R{number}"
    new = await tenancy.create_api_key(
        session,
        warehouse.id,
        f"Register {prefix}: {clean}",
        rate_limit=RATE_LIMIT,
        company_id=company_id,
    )
    register = Register(
        company_id=company_id,
        warehouse_id=warehouse.id,
        name=clean,
        number=number,
        prefix=prefix,
        key_id=new.key.id,
        created_by=actor_id,
        queued=0,
        attention="[]",
    )
    session.add(register)
    await session.flush()
    await record(
        session,
        company_id=company_id,
        actor_id=actor_id,
        action="paired",
        entity_type=ENTITY,
        entity_id=register.id,
        after={
            "name": clean,
            "prefix": prefix,
            "warehouse_id": warehouse.id,
            "public_key": new.key.public_key,
        },
    )
    return Paired(register, warehouse, company, new)


async def get_register(
    session: AsyncSession, company_id: int, register_id: int, *, lock: bool = False
) -> Register:
    """One of the company's registers; another company's is not found."""
    query = select(Register).where(Register.id == register_id, Register.company_id == company_id)
    if lock:
        query = query.with_for_update().execution_options(populate_existing=True)
    found = (await session.execute(query)).scalar_one_or_none()
    if found is None:
        raise NotFound(f"register {register_id} not found")
    return found


async def list_registers(
    session: AsyncSession, company_id: int, warehouse_id: int | None = None
) -> list[AdminRegister]:
    """The company's registers (one branch's when ``warehouse_id``), oldest first."""
    query = (
        select(Register, Warehouse.name)
        .join(
            Warehouse,
            (Warehouse.id == Register.warehouse_id) & (Warehouse.company_id == Register.company_id),
        )
        .where(Register.company_id == company_id)
        .order_by(Register.id)
    )
    if warehouse_id is not None:
        query = query.where(Register.warehouse_id == warehouse_id)
    return [view(r, wname) for r, wname in (await session.execute(query)).all()]


async def branches(
    session: AsyncSession, company_id: int, scope: int | None
) -> list[PairableBranch]:
    """The active branches a staff member may pair a register to: every one of the
    company's, or their own when scoped."""
    query = (
        select(Warehouse.id, Warehouse.name)
        .where(Warehouse.company_id == company_id, Warehouse.archived_at.is_(None))
        .order_by(Warehouse.id)
    )
    if scope is not None:
        query = query.where(Warehouse.id == scope)
    return [{"id": i, "name": n} for i, n in (await session.execute(query)).all()]


async def revoke(
    session: AsyncSession, company_id: int, register_id: int, *, actor_id: int | None
) -> tuple[AdminRegister, bool]:
    """Revoke a register and its key (its next request is a 401); the view and
    whether it was revoked already (then nothing changes and nothing is recorded).
    The device keeps its queue and shows it as refused."""
    register = await get_register(session, company_id, register_id, lock=True)
    warehouse = await session.scalar(
        select(Warehouse).where(
            Warehouse.company_id == register.company_id, Warehouse.id == register.warehouse_id
        )
    )
    assert warehouse is not None
    if register.revoked_at is not None:
        return view(register, warehouse.name), True
    await tenancy.revoke_company_key(session, company_id, register.key_id, actor_id=actor_id)
    register.revoked_at = dt.datetime.now(dt.UTC)
    await session.flush()
    await record(
        session,
        company_id=company_id,
        actor_id=actor_id,
        action="revoked",
        entity_type=ENTITY,
        entity_id=register.id,
        before={"status": "active"},
        after={"status": "revoked", "prefix": register.prefix},
    )
    return view(register, warehouse.name), False


async def of_key(session: AsyncSession, key: AuthContext) -> Register:
    """The register whose credential the request came with."""
    assert key.register_id is not None
    found = await session.scalar(
        select(Register).where(
            Register.company_id == key.company_id, Register.id == key.register_id
        )
    )
    if found is None:
        raise NotFound("register not found")
    return found


async def details(session: AsyncSession, key: AuthContext) -> RegisterDetails:
    """``GET /register``: who the register is, its branch's receipt texts, the
    highest invoice number of its prefix the server holds (a wiped device starts
    after it) and its open shift."""
    register = await of_key(session, key)
    warehouse = await session.scalar(
        select(Warehouse).where(
            Warehouse.company_id == register.company_id, Warehouse.id == register.warehouse_id
        )
    )
    company = await session.get(Company, register.company_id)
    assert warehouse is not None and company is not None
    own = f"{register.prefix}-%"
    last = await session.scalar(
        select(Order.invoice_number)
        .where(
            Order.company_id == register.company_id,
            Order.warehouse_id == register.warehouse_id,
            Order.order_type == "sales",
            Order.invoice_number.like(own),
        )
        .order_by(func.length(Order.invoice_number).desc(), Order.invoice_number.desc())
        .limit(1)
    )
    shift = (
        await session.execute(
            select(Shift.id, Shift.reference)
            .where(
                Shift.company_id == register.company_id,
                Shift.warehouse_id == register.warehouse_id,
                Shift.status == "open",
                Shift.register == register.prefix,
            )
            .order_by(Shift.id.desc())
            .limit(1)
        )
    ).first()
    return {
        "id": register.id,
        "name": register.name,
        "prefix": register.prefix,
        "warehouse_id": warehouse.id,
        "warehouse_name": warehouse.name,
        "receipt_header": warehouse.receipt_header,
        "receipt_footer": warehouse.receipt_footer,
        # The branch's clock: the register reads promotions' days and hours in it.
        "timezone": warehouse.timezone,
        "company_name": company.name,
        "base_currency": company.base_currency,
        "money_format": company.money_format,
        "last_invoice_number": last,
        "open_shift": None if shift is None else {"id": shift[0], "reference": shift[1]},
    }


async def cashiers(session: AsyncSession, key: AuthContext) -> list[Cashier]:
    """The staff who may sell at this register: the company's active staff members
    with a role and a PIN, of this branch or of every branch; with their PIN's
    PBKDF2 parameters, which the register checks offline."""
    rows = (
        await session.execute(
            select(User)
            .where(
                User.company_id == key.company_id,
                User.user_type == "staff",
                User.role.is_not(None),
                User.archived_at.is_(None),
                User.pin_hash.is_not(None),
                (User.warehouse_id.is_(None)) | (User.warehouse_id == key.warehouse_id),
            )
            .order_by(User.name, User.id)
        )
    ).scalars()
    out: list[Cashier] = []
    for user in rows:
        pin = crypto.pin_parameters(user.pin_hash or "")
        if pin is None or user.role is None:  # (the query reads staff with a role)
            continue
        out.append(
            {
                "id": user.id,
                "name": user.name,
                "role": user.role,
                "may_refund_without_invoice": user.role in (roles.OWNER, roles.MANAGER),
                "pin": pin,
            }
        )
    return out


async def heartbeat(session: AsyncSession, key: AuthContext, body: HeartbeatIn) -> HeartbeatAnswer:
    """What the device reports: its writes waiting and the ones refused, kept for
    the back office's list (the latest report replaces the one before)."""
    register = await of_key(session, key)
    now = dt.datetime.now(dt.UTC)
    register.last_seen_at = now
    register.queued = body.queued
    register.attention = json.dumps([a.model_dump() for a in body.attention])
    await session.flush()
    return {"server_time": _stamp(now)}
