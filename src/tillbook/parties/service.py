"""Customers and suppliers as a shop sets them up: create (with an opening balance
posted once), update (optimistic concurrency, ``kit/versions.py``), archive.

Every change is recorded in the audit trail in its own transaction. A party's
balance only ever moves through the ledger (``ledger.post``): the opening balance
here, sales, purchases, returns and payments elsewhere. An archived party is left
out of the public lists and refused on new sales, purchases, returns and payments
(``orders/lookup.py``), but keeps its history and its code.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Literal, cast

from sqlalchemy.ext.asyncio import AsyncSession
from typing_extensions import TypedDict

from tillbook.audit.service import record
from tillbook.errors import Conflict, NotFound, invalid
from tillbook.kit import xid
from tillbook.kit.money import ZERO, money_str
from tillbook.kit.pagination import Page, Paged, paged
from tillbook.kit.refs import ref_to_id
from tillbook.kit.shapes import DateTimeStr, MoneyStr, answer
from tillbook.kit.text import quoted
from tillbook.kit.versions import expect
from tillbook.ledger.rules import RuleName
from tillbook.ledger.service import post
from tillbook.models import User
from tillbook.models.base import utcnow
from tillbook.parties import repository as repo
from tillbook.parties.schemas import EDITABLE, PartyIn, PartyPatch, TillCustomerIn
from tillbook.unit import UnitOfWork

Kind = Literal["customer", "supplier"]
KINDS: tuple[Kind, ...] = ("customer", "supplier")
OPENING_RULE: dict[str, RuleName] = {
    "customer": "opening_balance_customer",
    "supplier": "opening_balance_supplier",
}


@dataclass(frozen=True)
class NewParty:
    """A party to create, its fields already checked (``schemas.py``)."""

    name: str
    code: str | None = None
    phone: str | None = None
    email: str | None = None
    tax_number: str | None = None
    address: str | None = None
    credit_limit: Decimal | None = None
    opening_balance: Decimal | None = None


def audited(party: User) -> dict[str, Any]:
    """The fields an audit event keeps of a party (never a password hash)."""
    return {
        "name": party.name,
        "code": party.code,
        "phone": party.phone,
        "email": party.email,
        "tax_number": party.tax_number,
        "address": party.address,
        "credit_limit": None if party.credit_limit is None else money_str(party.credit_limit),
        "archived": party.archived_at is not None,
        "version": party.version,
    }


# A party as the back office reads it (``api/admin/parties.py`` puts it in the
# envelope); a till reads slimmer ones (``parties/queries.py``: Customer, Supplier).
@answer
class AdminParty(TypedDict):
    id: int
    xid: str
    type: Kind
    code: str | None
    name: str
    phone: str | None
    email: str | None
    tax_number: str | None
    address: str | None
    credit_limit: MoneyStr | None
    is_walk_in: bool
    balance: MoneyStr
    version: int
    archived: bool
    archived_at: DateTimeStr | None
    created_at: DateTimeStr | None


def view(party: User, *, balance: Decimal | None = None) -> AdminParty:
    """A party as the back office reads it; ``balance`` is company-wide (every
    warehouse's receivable or payable of the party)."""
    archived = party.archived_at
    return {
        "id": party.id,
        "xid": xid.encode(party.id),
        # a party's row is a customer's or a supplier's (``repository.get`` reads
        # by kind; staff are ``tenancy/staff.py``'s)
        "type": cast(Kind, party.user_type),
        "code": party.code,
        "name": party.name,
        "phone": party.phone,
        "email": party.email,
        "tax_number": party.tax_number,
        "address": party.address,
        "credit_limit": None if party.credit_limit is None else money_str(party.credit_limit),
        "is_walk_in": party.is_walk_in,
        "balance": money_str(party.balance if balance is None else balance),
        "version": party.version,
        "archived": archived is not None,
        "archived_at": None if archived is None else _iso(archived),
        "created_at": None if party.created_at is None else _iso(party.created_at),
    }


def _iso(value: dt.datetime) -> str:
    aware = value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)
    return aware.astimezone(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def _check_kind(kind: str, data: NewParty | PartyPatch) -> None:
    if kind != "customer" and data.credit_limit is not None:
        raise invalid("credit_limit", "only customers have a credit limit")


async def check_code_free(
    session: AsyncSession, company_id: int, kind: str, code: str | None, party_id: int | None
) -> None:
    """Codes are unique per company and kind (``uq_users_company_type_code``); an
    archived party keeps its code."""
    if code is None:
        return
    owner = await repo.code_owner(session, company_id, kind, code)
    if owner is not None and owner != party_id:
        raise invalid("code", f"{kind} code {quoted(code)} is already used by {kind} {owner}")


async def opening_warehouse(
    session: AsyncSession, company_id: int, ref: int | str | None, field: str = "warehouse_id"
) -> int:
    """The warehouse an opening balance is posted in: the one named, of this company,
    or the company's first."""
    if ref is None:
        first = await repo.first_warehouse(session, company_id)
        if first is None:
            raise invalid(field, "the company has no warehouse to post the opening balance in")
        return first
    wid = ref_to_id(ref)
    if wid is None or not await repo.warehouse_in_company(session, company_id, wid):
        raise invalid(field, f"unknown warehouse {quoted(ref)}")
    return wid


async def insert(
    uow: UnitOfWork,
    company_id: int,
    kind: str,
    data: NewParty,
    *,
    warehouse_id: int | None,
    actor_id: int | None,
) -> tuple[User, Decimal]:
    """Write a checked party, post its opening balance (when not zero) in
    ``warehouse_id``, record both; returns the party and its balance after."""
    session = uow.session
    party = User(
        company_id=company_id,
        user_type=kind,
        name=data.name,
        code=data.code,
        phone=data.phone,
        email=data.email,
        tax_number=data.tax_number,
        address=data.address,
        credit_limit=data.credit_limit,
        is_walk_in=False,
        balance=ZERO,
        version=1,
        created_at=utcnow(),
    )
    session.add(party)
    await session.flush()
    opening = data.opening_balance or ZERO
    after = audited(party)
    if opening:
        assert warehouse_id is not None
        await post(
            uow,
            company_id=company_id,
            warehouse_id=warehouse_id,
            rule=OPENING_RULE[kind],
            figures={"amount": opening},
            narration=f"Opening balance of {kind} {party.name}"
            + (f" ({party.code})" if party.code else ""),
            source_type=repo.OPENING,
            source_id=party.id,
            entry_date=dt.date.today(),
            field="opening_balance",
            party_id=party.id,
            created_by=actor_id,
        )
        after |= {"opening_balance": money_str(opening), "warehouse_id": warehouse_id}
    await record(
        session,
        company_id=company_id,
        actor_id=actor_id,
        action=f"{kind}.created",
        entity_type=kind,
        entity_id=party.id,
        after=after,
    )
    return party, opening


async def create(
    uow: UnitOfWork, company_id: int, kind: str, body: PartyIn, *, actor_id: int | None
) -> AdminParty:
    """A new customer or supplier (admin API, command line)."""
    data = NewParty(**body.model_dump(include=set(NewParty.__dataclass_fields__)))
    _check_kind(kind, data)
    session = uow.session
    await check_code_free(session, company_id, kind, data.code, None)
    warehouse_id = None
    if data.opening_balance:
        warehouse_id = await opening_warehouse(session, company_id, body.warehouse_id)
    elif body.warehouse_id is not None:
        raise invalid("warehouse_id", "names where an opening balance is posted; none was given")
    party, balance = await insert(
        uow, company_id, kind, data, warehouse_id=warehouse_id, actor_id=actor_id
    )
    return view(party, balance=balance)


async def create_at_till(
    uow: UnitOfWork, company_id: int, body: TillCustomerIn, *, actor_id: int
) -> User:
    """A customer a cashier adds at the till: contact details only."""
    data = NewParty(**body.model_dump(include=set(NewParty.__dataclass_fields__)))
    await check_code_free(uow.session, company_id, "customer", data.code, None)
    party, _ = await insert(uow, company_id, "customer", data, warehouse_id=None, actor_id=actor_id)
    return party


async def load(
    session: AsyncSession, company_id: int, kind: str, party_id: int, *, lock: bool = False
) -> User:
    """A party of this company and kind; anything else reads like a missing id."""
    party = await repo.get(session, company_id, kind, party_id, lock=lock)
    if party is None:
        raise NotFound(f"{kind} {party_id} not found")
    return party


async def read(session: AsyncSession, company_id: int, kind: str, party_id: int) -> AdminParty:
    return view(await load(session, company_id, kind, party_id))


async def update(
    session: AsyncSession,
    company_id: int,
    kind: str,
    party_id: int,
    patch: PartyPatch,
    *,
    expected_version: int | None,
    actor_id: int | None,
) -> AdminParty:
    """Change the fields the patch names, based on ``expected_version`` (If-Match or
    the body's ``version``); the row is locked so two edits cannot both pass the
    check. A patch that changes nothing leaves the version as it is."""
    sent = patch.model_fields_set
    if "opening_balance" in sent:
        raise invalid(
            "opening_balance",
            "is posted once, when the party is created; record a payment or a return instead",
        )
    party = await load(session, company_id, kind, party_id, lock=True)
    expect(party.version, expected_version, f"{kind} {party_id}")
    changes = {name: getattr(patch, name) for name in EDITABLE if name in sent}
    if "name" in changes and changes["name"] is None:
        raise invalid("name", "must not be empty")
    if kind != "customer" and changes.get("credit_limit") is not None:
        raise invalid("credit_limit", "only customers have a credit limit")
    if changes.get("code") is not None:
        await check_code_free(session, company_id, kind, changes["code"], party.id)
    changes = {k: v for k, v in changes.items() if getattr(party, k) != v}
    if not changes:
        return view(party)
    before = audited(party)
    for name, value in changes.items():
        setattr(party, name, value)
    party.version += 1
    await session.flush()
    await record(
        session,
        company_id=company_id,
        actor_id=actor_id,
        action=f"{kind}.updated",
        entity_type=kind,
        entity_id=party.id,
        before=before,
        after=audited(party),
    )
    return view(party)


async def archive(
    session: AsyncSession,
    company_id: int,
    kind: str,
    party_id: int,
    *,
    expected_version: int | None,
    actor_id: int | None,
) -> AdminParty:
    """Retire a party: it keeps its history and code, and no new record may name it.

    ``expected_version`` is checked when given. Archiving an archived party changes
    nothing. The walk-in customer (every till's anonymous sales) and a party whose
    balance is not settled are refused: once archived, no payment could settle it."""
    party = await load(session, company_id, kind, party_id, lock=True)
    if expected_version is not None:
        expect(party.version, expected_version, f"{kind} {party_id}")
    if party.archived_at is not None:
        return view(party)
    if party.is_walk_in:
        raise Conflict("the walk-in customer is used by every till and cannot be archived")
    if party.balance != 0:
        raise Conflict(
            f"{kind} {party_id} has a balance of {money_str(party.balance)}; "
            "settle it before archiving"
        )
    before = audited(party)
    party.archived_at = utcnow()
    party.version += 1
    await session.flush()
    await record(
        session,
        company_id=company_id,
        actor_id=actor_id,
        action=f"{kind}.archived",
        entity_type=kind,
        entity_id=party.id,
        before=before,
        after=audited(party),
    )
    return view(party)


async def page(
    session: AsyncSession,
    company_id: int,
    kind: str,
    pg: Page,
    *,
    search: str | None = None,
    include_archived: bool = False,
) -> Paged[AdminParty]:
    total, parties = await repo.page(
        session, company_id, kind, pg, search=search, include_archived=include_archived
    )
    return paged(pg, total, [view(p) for p in parties])


async def listing(
    session: AsyncSession,
    company_id: int,
    kind: str,
    *,
    search: str | None = None,
    include_archived: bool = False,
) -> list[AdminParty]:
    """Every party a list shows, unpaged (the command line)."""
    found = await repo.matching(
        session, company_id, kind, search=search, include_archived=include_archived
    )
    return [view(p) for p in found]
