"""Resolving the references a client sends (ids, numeric strings, xids, codes,
invoice numbers) to records of the key's company or warehouse. A reference that
names nothing there is a 422 naming the field and the value (a 404 in a path):
the record may exist elsewhere, and the client is never told so."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Literal, TypeGuard

from sqlalchemy import Select, String, bindparam, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.auth.context import AuthContext
from tillbook.errors import invalid
from tillbook.kit.problems import Problems
from tillbook.kit.refcache import ReferenceCache
from tillbook.kit.refs import ref_to_id
from tillbook.ledger.chart import GIFT_CARDS, LOYALTY_POINTS
from tillbook.loyalty.programme import TERMS_COLUMNS, TERMS_NAMES, Terms, terms_in
from tillbook.models import Account, Company, Order, PaymentMode, ProductUnit, Tax, User
from tillbook.models.base import table_of, value_of
from tillbook.unit import UnitOfWork

RefValue = int | str

# Built once: every sale and purchase resolves its party, tenders and taxes.
_users = table_of(User)
_PARTY = select(*_users.c).where(
    _users.c.id == bindparam("id"),
    _users.c.company_id == bindparam("company_id"),
    _users.c.user_type == bindparam("user_type"),
)
_CUSTOMER = _PARTY.add_columns(*TERMS_COLUMNS)
_MODES = (
    select(
        PaymentMode.id,
        PaymentMode.code,
        PaymentMode.name,
        Account.code,
        PaymentMode.archived_at.is_not(None),
        PaymentMode.currency,
    )
    .join(
        Account,
        (Account.id == PaymentMode.account_id) & (Account.company_id == PaymentMode.company_id),
    )
    .where(PaymentMode.company_id == bindparam("company_id"))
)
_TAXES = select(Tax.id, Tax.name, Tax.rate, Tax.inclusive, Tax.archived_at.is_not(None)).where(
    Tax.company_id == bindparam("company_id")
)


@dataclass(frozen=True)
class Mode:
    id: int
    code: str
    name: str
    account_code: str
    archived: bool = False
    # A mode of foreign money (its drawer or account holds that currency only).
    currency: str | None = None

    @property
    def gift_cards(self) -> bool:
        """A mode posting to 21300 spends (or, on a return, credits) gift cards and
        store credit (DESIGN §18): its tenders move card balances beside the account."""
        return self.account_code == GIFT_CARDS

    @property
    def loyalty(self) -> bool:
        """A mode posting to 21400 redeems (or, on a return, gives back) a customer's
        loyalty points: its tenders move their points beside the account."""
        return self.account_code == LOYALTY_POINTS

    @property
    def owed_in_goods(self) -> bool:
        """A tender in this mode moves a balance the shop owes in goods (cards, store
        credit, points), so it is taken only where that balance moves with it."""
        return self.gift_cards or self.loyalty


@dataclass(frozen=True)
class TaxRate:
    """A tax as pricing needs it, as of now: the back office may change a tax's rate,
    and what an order charged is kept on its lines (``order_items.tax_rate`` and
    ``tax_amount``), so a new rate applies to new orders only."""

    id: int
    name: str
    rate: Decimal
    inclusive: bool
    archived: bool = False


async def _load_modes(session: AsyncSession, company_id: int) -> dict[int, Mode]:
    rows = await session.execute(_MODES, {"company_id": company_id})
    return {r[0]: Mode(r[0], r[1], r[2], r[3], bool(r[4]), r[5]) for r in rows}


async def _load_taxes(session: AsyncSession, company_id: int) -> dict[int, TaxRate]:
    rows = await session.execute(_TAXES, {"company_id": company_id})
    return {r[0]: TaxRate(r[0], r[1], r[2], r[3], bool(r[4])) for r in rows}


# Keyed by the company's ``reference_version`` (``kit/refcache.py``): a copy older
# than the version a request's key lookup read is never served.
_COMPANY_MODES = ReferenceCache(_load_modes)
_COMPANY_TAXES = ReferenceCache(_load_taxes)


async def reference_changed(session: AsyncSession, company_id: int) -> None:
    """Call first in every transaction that changes a company's reference data: bumps
    ``companies.reference_version`` (so no process serves its cached taxes or modes
    to a request that started after the change commits) and holds the company row's
    lock until commit, so two back-office writes of one company run one after the
    other (a name checked free stays free until the write commits)."""
    await session.execute(
        update(Company)
        .where(Company.id == company_id)
        .values(reference_version=Company.reference_version + 1)
    )


async def party(
    uow: UnitOfWork,
    company_id: int,
    ref: RefValue,
    user_type: str,
    field: str,
    problems: Problems,
) -> User | None:
    """The customer or supplier a request names, read as a row into a transient
    ``User`` value (never added to the session): its balance moves only by an
    increment from ``ledger.post``, and an ORM load costs three times the row.

    An archived party is refused: the back office retired it, so no new sale,
    purchase, return or payment may name it (its history stays readable)."""
    found, _row = await _party(uow, _PARTY, company_id, ref, user_type, field, problems)
    return found


async def customer(
    uow: UnitOfWork, company_id: int, ref: RefValue, field: str, problems: Problems
) -> tuple[User | None, Terms | None]:
    """``party`` of a customer, and the company's loyalty terms read in the same
    statement (``programme.TERMS_COLUMNS``; None without a programme, or when the
    customer is refused)."""
    found, row = await _party(uow, _CUSTOMER, company_id, ref, "customer", field, problems)
    return found, None if found is None or row is None else terms_in(row)


async def _party(
    uow: UnitOfWork,
    statement: Select[Any],
    company_id: int,
    ref: RefValue,
    user_type: str,
    field: str,
    problems: Problems,
) -> tuple[User | None, Mapping[str, Any] | None]:
    id_ = ref_to_id(ref)
    found = row = None
    if id_ is not None:
        params = {"id": id_, "company_id": company_id, "user_type": user_type}
        rows = await uow.run(statement, params)
        if rows:
            row = rows[0].as_dict()
            found = value_of(User, **{k: v for k, v in row.items() if k not in TERMS_NAMES})
    if found is None:
        problems.add(field, f"unknown {user_type} {ref!r}")
    elif found.archived_at is not None:
        problems.add(field, f"{user_type} {ref!r} is archived; it cannot be used on new records")
        return None, row
    return found, row


def _stored_length() -> int:
    column_type = table_of(Order).c.invoice_number.type
    assert isinstance(column_type, String) and column_type.length is not None
    return column_type.length


_INVOICE_NUMBER_LENGTH = _stored_length()


def _could_be_invoice_number(ref: RefValue) -> TypeGuard[str]:
    """Only a string an invoice number can be (printable ASCII, as long as stored at
    most) is looked up as one: anything else names no order, and a NUL or an
    over-long value must not reach the database."""
    return (
        isinstance(ref, str)
        and 0 < len(ref) <= _INVOICE_NUMBER_LENGTH
        and ref.isascii()
        and ref.isprintable()
    )


def as_invoice_number(ref: RefValue) -> str | None:
    """``ref`` when an invoice number can be it, else None."""
    return ref if _could_be_invoice_number(ref) else None


# The order of a warehouse and type with this invoice number (the unique index on
# warehouse, type and number serves it): prebuilt for the reads by reference.
ORDER_BY_NUMBER = select(Order.id).where(
    Order.company_id == bindparam("company_id"),
    Order.warehouse_id == bindparam("warehouse_id"),
    Order.order_type == bindparam("order_type"),
    Order.invoice_number == bindparam("number"),
)


async def order_ids(
    session: AsyncSession,
    company_id: int,
    warehouse_id: int,
    order_types: Sequence[str],
    refs: Sequence[RefValue],
    *,
    prefer: Literal["id", "invoice_number"] = "id",
) -> list[int | None]:
    """The id of the order of this warehouse (and of one of ``order_types``) that each
    reference names, or None: the one resolver for every place a client names a sale,
    purchase or return (a path, ``invoices[].order_id``, a return's original invoice,
    a terminal callback).

    A reference is the numeric id, a numeric string, the xid, or the invoice number
    (``SAL-00003``, or the client's own number); a JSON integer is an id only. When a
    string names two different orders (a client's all-digit invoice number that is
    also another order's id), ``prefer`` says which reading the field means: an id
    field its id, an ``invoice_number`` field its invoice number. One statement for
    all the references, served by the primary key and the unique invoice number
    index (warehouse, type, number)."""
    if not refs:
        return []
    as_id = [ref_to_id(r) for r in refs]
    numbers = {r for r in refs if _could_be_invoice_number(r)}
    wanted_ids = {i for i in as_id if i is not None}
    rows = (
        await session.execute(
            select(Order.id, Order.invoice_number).where(
                Order.company_id == company_id,
                Order.warehouse_id == warehouse_id,
                Order.order_type.in_(tuple(order_types)),
                or_(Order.id.in_(wanted_ids), Order.invoice_number.in_(numbers)),
            )
        )
    ).all()
    ids = {r[0] for r in rows}
    by_number = {r[1]: r[0] for r in rows}
    out: list[int | None] = []
    for ref, id_ in zip(refs, as_id, strict=True):
        by_id = id_ if id_ in ids else None
        by_no = by_number.get(ref) if isinstance(ref, str) and ref in numbers else None
        if prefer == "id":
            out.append(by_id if by_id is not None else by_no)
        else:
            out.append(by_no if by_no is not None else by_id)
    return out


async def order_id(
    session: AsyncSession,
    company_id: int,
    warehouse_id: int,
    order_types: Sequence[str],
    ref: RefValue,
    *,
    prefer: Literal["id", "invoice_number"] = "id",
) -> int | None:
    """``order_ids`` for one reference."""
    found = await order_ids(session, company_id, warehouse_id, order_types, [ref], prefer=prefer)
    return found[0]


async def payment_modes(
    session: AsyncSession,
    company_id: int,
    refs: Sequence[tuple[str, RefValue]],
    problems: Problems,
    *,
    version: int | None = None,
    gift_cards: bool = False,
) -> dict[str, Mode]:
    """field -> Mode; a mode is named by numeric id, xid or code (``cash``, ``card``).

    An archived mode takes no new tender: a 422 naming the field. ``version``: the
    company's ``reference_version`` from the request's key (``AuthContext``); without
    it the modes are read from the database.

    A gift-card mode (one posting to 21300) or the loyalty mode (21400) is taken only
    where the caller moves the card or points balances with it (``gift_cards``: sales
    and sales returns); anywhere else (a payment, an expense, a purchase, a money
    move, a drawer count) it would move 21300 or 21400 with no card or points, so it
    is a 422 naming the field (``Mode.owed_in_goods``)."""
    if not refs:
        return {}
    found = _resolve_modes(await _COMPANY_MODES.get(session, company_id, version=version), refs)
    if len(found) < len(refs) and version is not None:  # a mode created since?
        found = _resolve_modes(
            await _COMPANY_MODES.get(session, company_id, version=version, reload=True), refs
        )
    for field, ref in refs:
        mode = found.get(field)
        if mode is None:
            problems.add(field, f"unknown payment mode {ref!r}")
        elif mode.archived:
            problems.add(field, f"payment mode {mode.code!r} is archived and takes no new payments")
            del found[field]
        elif mode.owed_in_goods and not gift_cards:
            held = "loyalty points" if mode.loyalty else "gift cards and store credit"
            problems.add(
                field,
                f"payment mode {mode.code!r} spends {held}: it is taken on sales and "
                "refunded on sales returns only",
            )
            del found[field]
    return found


def _resolve_modes(by_id: dict[int, Mode], refs: Sequence[tuple[str, RefValue]]) -> dict[str, Mode]:
    by_code = {m.code.lower(): m for m in by_id.values()}
    out: dict[str, Mode] = {}
    for field, ref in refs:
        if isinstance(ref, str) and ref.strip().lower() in by_code:
            out[field] = by_code[ref.strip().lower()]
            continue
        id_ = ref_to_id(ref)
        mode = by_id.get(id_) if id_ is not None else None
        if mode is not None:
            out[field] = mode
    return out


async def taxes(
    session: AsyncSession,
    company_id: int,
    refs: Sequence[tuple[str, RefValue]],
    problems: Problems,
    *,
    version: int | None = None,
    archived_ok: bool = False,
) -> dict[str, TaxRate]:
    """field -> the tax's current rate. An archived tax is refused (a 422 naming the
    field) unless ``archived_ok``: a return reads the tax of the sale it refunds.
    ``version`` as for ``payment_modes``."""
    ids = {f: ref_to_id(r) for f, r in refs}
    wanted = {i for i in ids.values() if i is not None}
    found = await _COMPANY_TAXES.get(session, company_id, wanted, version=version) if wanted else {}
    out: dict[str, TaxRate] = {}
    for field, ref in refs:
        tax_id = ids[field]
        tax = found.get(tax_id) if tax_id is not None else None
        if tax is None:
            problems.add(field, f"unknown tax {ref!r}")
        elif tax.archived and not archived_ok:
            problems.add(field, f"tax {tax.name!r} is archived and applies to no new order")
        else:
            out[field] = tax
    return out


async def unit_factors(
    session: AsyncSession,
    company_id: int,
    product_units: Sequence[tuple[str, int, int | None, RefValue]],
    problems: Problems,
) -> dict[str, tuple[int, Decimal]]:
    """field -> (unit id, base units per selected unit) for (field, product id, base unit
    id, selected unit ref). The product's own unit has factor 1."""
    out: dict[str, tuple[int, Decimal]] = {}
    if not product_units:
        return out
    product_ids = {p for _, p, _, _ in product_units}
    rows = (
        await session.execute(
            select(ProductUnit.product_id, ProductUnit.unit_id, ProductUnit.operator_value).where(
                ProductUnit.product_id.in_(product_ids), ProductUnit.company_id == company_id
            )
        )
    ).all()
    extra = {(r[0], r[1]): Decimal(r[2]) for r in rows}
    for field, product_id, base_unit, ref in product_units:
        unit_id = ref_to_id(ref)
        if unit_id is not None and unit_id == base_unit:
            out[field] = (unit_id, Decimal(1))
        elif unit_id is not None and (product_id, unit_id) in extra:
            out[field] = (unit_id, extra[(product_id, unit_id)])
        else:
            problems.add(field, f"unit {ref!r} is not a unit of this product")
    return out


__all__ = ["Mode", "TaxRate"]


async def cashier(uow: UnitOfWork, key: AuthContext, named: RefValue | None) -> User:
    """Who rang the sale (or return) up: the body's ``staff_member`` (a register
    names its signed-in cashier), else the key's own staff member. The one named must be an
    active staff member of the key's company who works in this branch (of it, or of
    every branch); anyone else is a 422 naming ``staff_member``."""
    if named is None:
        return User(id=key.user_id, name=key.user_name)
    wanted = ref_to_id(named)
    user = await uow.session.get(User, (wanted, key.company_id)) if wanted is not None else None
    if (
        user is None
        or user.company_id != key.company_id
        or user.user_type != "staff"
        or user.role is None
        or user.archived_at is not None
        or (user.warehouse_id is not None and user.warehouse_id != key.warehouse_id)
    ):
        raise invalid(
            "staff_member",
            f"no active staff member {named!r} who sells in this branch",
        )
    return user
