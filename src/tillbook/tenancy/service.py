"""Setting up tenants: companies (with their chart of accounts), warehouses, keys.

Used by the operator CLI, the demo data set and the tests, so that a company
made any way is made the same way.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from sqlalchemy import insert, select, text
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.audit.service import record
from tillbook.auth import roles
from tillbook.auth.ratelimit import parse_rate
from tillbook.auth.service import HMAC_CONTEXT, SECRET_CONTEXT
from tillbook.config import master_key
from tillbook.currency import rates
from tillbook.db import cross_tenant
from tillbook.errors import (
    Conflict,
    NotFound,
    Unauthorized,
    Unprocessable,
    ValidationFailed,
    invalid,
)
from tillbook.kit import crypto
from tillbook.kit.bounds import stored_length, text_problem
from tillbook.kit.problems import Problems
from tillbook.ledger import chart
from tillbook.ledger.service import account_ids
from tillbook.models import (
    Account,
    ApiKey,
    Company,
    ExpenseCategory,
    PaymentMode,
    User,
    Warehouse,
)
from tillbook.tenancy import staff

ADMIN_EMAIL_MAX = 200  # users.email is VARCHAR(200)
DEFAULT_PAYMENT_MODES = (
    ("cash", "Cash", chart.CASH_ON_HAND),
    ("card", "Card", chart.CARD_CLEARING),
    # Rent, suppliers paid by transfer, takings paid in: money that moves through
    # the bank, not the till or the card terminal.
    ("bank", "Bank", chart.BANK_ACCOUNT),
    # Spending a gift card or store credit, and refunding to them (DESIGN §18): the
    # tender debits (a refund credits) what the shop owes on cards.
    ("gift-card", "Gift card", chart.GIFT_CARDS),
    # Redeeming loyalty points, and giving them back on a return (DESIGN §18): the
    # tender debits (a refund credits) what the shop owes for points.
    ("loyalty", "Loyalty points", chart.LOYALTY_POINTS),
)
DEFAULT_EXPENSE_CATEGORIES = (
    ("Fuel and Energy", chart.FUEL_ENERGY),
    ("Bank and Gateway Charges", chart.GATEWAY_CHARGES),
    ("General Expenses", chart.GENERAL_EXPENSES),
)


async def create_company(
    session: AsyncSession,
    name: str,
    *,
    admin_email: str,
    admin_password: str,
    subscription_expires_on: dt.date | None = None,
    base_currency: str = "USD",
) -> tuple[Company, User]:
    """A company with its standard chart, its first owner (a staff member with the
    owner role, who logs in with ``admin_email``), Cash, Card and Bank modes and expense
    categories, keeping its books in ``base_currency`` (ISO 4217; fixed once anything
    is posted, DESIGN §16).

    The email must not be any staff member's login in any company, compared
    lower-cased: back-office login finds the company by the email alone. The unique
    key of ``staff_logins`` holds the same rule against a concurrent twin (the
    unit of work then runs again and lands here)."""
    if not name.strip():
        raise invalid("name", "must not be empty")
    email = admin_email.strip()
    if "@" not in email:
        raise invalid("admin_email", "must be an email address")
    if len(email) > ADMIN_EMAIL_MAX:
        raise invalid("admin_email", f"must be at most {ADMIN_EMAIL_MAX} characters")
    if len(admin_password) < 8:
        raise invalid("admin_password", "must be at least 8 characters")
    currency = rates.check_code("base_currency", base_currency)
    if await staff.email_taken(session, email):
        shown = email if len(email) <= 100 else email[:100] + "…"
        raise Conflict(f"admin email {shown} is already used by another company")
    company = Company(
        name=name.strip(),
        subscription_expires_on=subscription_expires_on,
        base_currency=currency,
    )
    session.add(company)
    await session.flush()
    await session.execute(
        insert(Account),
        [
            {
                "company_id": company.id,
                "code": a.code,
                "name": a.name,
                "type": a.type,
                "parent_code": a.parent_code,
                "is_posting": a.is_posting,
            }
            for a in chart.STANDARD_CHART
        ],
    )
    admin = User(
        company_id=company.id,
        user_type="staff",
        role=roles.OWNER,
        name=f"{company.name} admin",
        email=email,
        password_hash=crypto.hash_password(admin_password),
    )
    session.add(admin)
    await session.flush()
    await staff.claim_login(session, admin)
    ids = await account_ids(session, company.id)
    for code, mode_name, account in DEFAULT_PAYMENT_MODES:
        session.add(
            PaymentMode(company_id=company.id, code=code, name=mode_name, account_id=ids[account])
        )
    for cat_name, account in DEFAULT_EXPENSE_CATEGORIES:
        session.add(ExpenseCategory(company_id=company.id, name=cat_name, account_id=ids[account]))
    await session.flush()
    return company, admin


async def create_warehouse(
    session: AsyncSession, company_id: int, name: str, *, allow_negative_stock: bool = False
) -> Warehouse:
    if await session.get(Company, company_id) is None:
        raise NotFound(f"company {company_id} not found")
    warehouse = Warehouse(
        company_id=company_id, name=name, allow_negative_stock=allow_negative_stock
    )
    session.add(warehouse)
    await session.flush()
    return warehouse


@dataclass(frozen=True)
class NewKey:
    key: ApiKey
    secret_key: str
    hmac_secret: str


async def create_api_key(
    session: AsyncSession,
    warehouse_id: int,
    name: str,
    *,
    rate_limit: str = "600/minute",
    require_signature: bool = False,
    user_id: int | None = None,
    company_id: int | None = None,
) -> NewKey:
    """A key pair; the secret is returned here once and stored digested and encrypted.

    The key acts as staff member ``user_id`` (what a sale names as its
    ``staff_member``: the person at the till), who must be of the warehouse's
    company, not archived and, when scoped, scoped to this warehouse. Without one, the
    key gets a user of its own named after it ("API: <name>"), with no role and no
    login. ``company_id``: the caller's company, when it has one (the admin API,
    the registers); without it the branch is the operator's choice, of any company."""
    try:
        parse_rate(rate_limit)
    except ValueError as exc:
        raise invalid("rate_limit", str(exc)) from None
    if company_id is not None:
        warehouse = await session.get(Warehouse, (warehouse_id, company_id))
    else:
        # The operator's CLI and the demo name a branch of whichever company.
        with cross_tenant("operator"):
            warehouse = await session.scalar(select(Warehouse).where(Warehouse.id == warehouse_id))
    if warehouse is None:
        raise NotFound(f"warehouse {warehouse_id} not found")
    if warehouse.archived_at is not None:
        raise invalid("warehouse", f"warehouse {warehouse_id} is archived and takes no new keys")
    if user_id is not None:
        actor = await staff.acting_staff(session, warehouse.company_id, warehouse.id, user_id)
    else:
        actor = User(
            company_id=warehouse.company_id,
            user_type="staff",
            name=f"API: {name}",
            warehouse_id=warehouse.id,
        )
        session.add(actor)
        await session.flush()
    key = ApiKey(
        company_id=warehouse.company_id,
        warehouse_id=warehouse.id,
        user_id=actor.id,
        name=name,
        public_key=crypto.random_token("pk_", 32),
        rate_limit=rate_limit,
        require_signature=require_signature,
        status=1,
    )
    secret, hmac_secret = _new_secrets(key)
    session.add(key)
    await session.flush()
    return NewKey(key=key, secret_key=secret, hmac_secret=hmac_secret)


def _new_secrets(key: ApiKey) -> tuple[str, str]:
    """Fresh secret and signing secret set on ``key``: the secret kept as a digest
    (what requests are checked against) and encrypted (for an owner's reveal), the
    signing secret encrypted; both returned in clear for the one showing."""
    secret = crypto.random_token("sk_", 48)
    hmac_secret = crypto.random_token("hs_", 40)
    key.secret_digest = crypto.sha256_hex(secret)
    key.secret_encrypted = crypto.encrypt(secret, master_key(), context=SECRET_CONTEXT)
    key.hmac_secret_encrypted = crypto.encrypt(hmac_secret, master_key(), context=HMAC_CONTEXT)
    return secret, hmac_secret


async def find_key(session: AsyncSession, public_key: str, *, lock: bool = False) -> ApiKey:
    """The key with this public key, of whichever company (the operator's CLI);
    ``lock``: under its row lock, as it is now. A public key no key could have (NUL,
    bytes that are no text) is not found, like any other."""
    if text_problem(public_key) is not None:
        raise NotFound("no such key")
    query = select(ApiKey).where(ApiKey.public_key == public_key)
    if lock:
        query = query.with_for_update().execution_options(populate_existing=True)
    with cross_tenant("operator"):
        key = (await session.execute(query)).scalar_one_or_none()
    if key is None:
        raise NotFound("no such key")
    return key


async def reveal_secret(
    session: AsyncSession, public_key: str, admin_password: str, *, owner_id: int | None = None
) -> str:
    """The secret again, for the company's owners only (spec: Key management: the
    administrator's password). ``owner_id``: the signed-in owner asking (the back
    office), whose own password it must be, not a fellow owner's; without it (the
    command line, run on the server) any active owner's password is accepted."""
    key = await find_key(session, public_key)
    owners = select(User).where(
        User.company_id == key.company_id,
        User.user_type == "staff",
        User.role == roles.OWNER,
        User.archived_at.is_(None),
    )
    if owner_id is not None:
        owners = owners.where(User.id == owner_id)
    admins = (await session.execute(owners)).scalars()
    if not any(
        a.password_hash and crypto.verify_password(admin_password, a.password_hash) for a in admins
    ):
        raise Unauthorized("wrong administrator password")
    return crypto.decrypt(key.secret_encrypted, master_key(), context=SECRET_CONTEXT)


@dataclass(frozen=True)
class Revocation:
    key: ApiKey
    already_revoked: bool  # revoked before this call: nothing changed


async def revoke_key(session: AsyncSession, public_key: str) -> Revocation:
    """Revoke a key once. Revoking it again changes nothing, so ``revoked_at`` keeps
    the moment it stopped working (what an audit asks), not the last time someone
    repeated the command. The row is locked, so two revokes at once agree too."""
    return await _revoke(session, await find_key(session, public_key, lock=True))


async def _revoke(session: AsyncSession, key: ApiKey) -> Revocation:
    """``key``, read under its row lock, revoked unless it already was."""
    if key.status == 0 and key.revoked_at is not None:
        return Revocation(key=key, already_revoked=True)
    key.status = 0
    key.revoked_at = dt.datetime.now(dt.UTC)
    # secrets a rotation left working for a while stop with the key
    key.previous_secret_digest = key.previous_hmac_secret_encrypted = None
    key.previous_valid_until = None
    await session.flush()
    return Revocation(key=key, already_revoked=False)


async def _audit_key(
    session: AsyncSession,
    key: ApiKey,
    action: str,
    actor_id: int | None,
    after: dict[str, Any],
    *,
    before: dict[str, Any] | None = None,
) -> None:
    """The trail's record of something done to a key: its public key and what
    changed, never a secret."""
    await record(
        session,
        company_id=key.company_id,
        actor_id=actor_id,
        action=action,
        entity_type="api_key",
        entity_id=key.id,
        before=before,
        after=after,
    )


async def company_key(
    session: AsyncSession, company_id: int, key_id: int, *, lock: bool = False
) -> ApiKey:
    """One of the company's keys; another company's is not found, like a missing one.
    ``lock``: read under the row lock, as it is once a concurrent revoke or rotation
    committed (``populate_existing``: not a copy this session loaded earlier)."""
    if not lock:
        key = await session.get(ApiKey, (key_id, company_id))
    else:
        key = (
            await session.execute(
                select(ApiKey)
                .where(ApiKey.id == key_id, ApiKey.company_id == company_id)
                .with_for_update()
                .execution_options(populate_existing=True)
            )
        ).scalar_one_or_none()
    if key is None or key.company_id != company_id:
        raise NotFound(f"key {key_id} not found")
    return key


async def revoke_company_key(
    session: AsyncSession, company_id: int, key_id: int, *, actor_id: int | None
) -> Revocation:
    """``revoke_key`` for a staff member of the key's company (the back office),
    audited when it changed something (a second revoke changes nothing)."""
    key = await company_key(session, company_id, key_id, lock=True)
    done = await _revoke(session, key)
    if not done.already_revoked:
        await _audit_key(
            session,
            key,
            "revoked",
            actor_id,
            {"status": 0, "public_key": key.public_key},
            before={"status": 1},
        )
    return done


# How long a rotated key's old secrets may keep working, by the name the back
# office and the command line offer: none by default (a secret that leaked must
# stop with the rotation), at most a week (a chain's tills changed one by one).
ROTATION_GRACE: dict[str, dt.timedelta] = {
    "none": dt.timedelta(0),
    "1h": dt.timedelta(hours=1),
    "24h": dt.timedelta(hours=24),
    "7d": dt.timedelta(days=7),
}


def rotation_grace(name: str | None, field: str = "grace") -> dt.timedelta:
    """``ROTATION_GRACE[name]`` (None: none), or a 422 on ``field`` naming the choices."""
    if name is None or name == "":
        return dt.timedelta(0)
    grace = ROTATION_GRACE.get(name)
    if grace is None:
        raise invalid(field, f"must be one of {', '.join(ROTATION_GRACE)}")
    return grace


async def rotate_company_key(
    session: AsyncSession,
    company_id: int,
    key_id: int,
    *,
    actor_id: int | None,
    grace: dt.timedelta = dt.timedelta(0),
) -> NewKey:
    """New secrets for one of the company's active keys: the secret key and the
    signing secret are replaced, the public key, branch, staff member and rate limit
    stay, so a till needs only its secret changed. The old secrets stop working
    with this commit, unless ``grace`` (``ROTATION_GRACE``) lets them work that much
    longer, so that tills can be moved one at a time; only the secrets this
    rotation replaced are kept (rotating again drops the older ones at once), and
    revoking the key stops both. The row is locked, so two rotations at once run
    one after the other. Audited (the public key and the grace's end; never a
    secret). A revoked key is not rotated: 409."""
    key = await company_key(session, company_id, key_id, lock=True)
    if key.status != 1:
        raise Conflict(f"key {key_id} is revoked; create a new key instead")
    if grace > dt.timedelta(0):
        key.previous_secret_digest = key.secret_digest
        key.previous_hmac_secret_encrypted = key.hmac_secret_encrypted
        key.previous_valid_until = dt.datetime.now(dt.UTC) + grace
    else:
        key.previous_secret_digest = None
        key.previous_hmac_secret_encrypted = None
        key.previous_valid_until = None
    secret, hmac_secret = _new_secrets(key)
    await session.flush()
    after: dict[str, Any] = {"public_key": key.public_key}
    if key.previous_valid_until is not None:
        after["old_secrets_valid_until"] = key.previous_valid_until.isoformat()
    await _audit_key(session, key, "rotated", actor_id, after)
    return NewKey(key=key, secret_key=secret, hmac_secret=hmac_secret)


async def reveal_company_secret(
    session: AsyncSession,
    company_id: int,
    key_id: int,
    admin_password: str,
    *,
    actor_id: int,
) -> str:
    """``reveal_secret`` for a key of the staff member's company, with that staff
    member's own password, audited (that a secret was shown and to whom; never the
    secret itself)."""
    key = await company_key(session, company_id, key_id)
    secret = await reveal_secret(session, key.public_key, admin_password, owner_id=actor_id)
    await _audit_key(session, key, "revealed", actor_id, {"public_key": key.public_key})
    return secret


async def list_api_keys(session: AsyncSession, company_id: int) -> list[ApiKey]:
    """The company's keys, oldest first (their secrets are never read back here)."""
    return list(
        (
            await session.execute(
                select(ApiKey).where(ApiKey.company_id == company_id).order_by(ApiKey.id)
            )
        ).scalars()
    )


async def issue_api_key(
    session: AsyncSession,
    company_id: int,
    warehouse_id: int,
    name: str,
    *,
    actor_id: int | None,
    user_id: int | None = None,
) -> NewKey:
    """A key for one of the company's warehouses, created by a staff member in the
    back office and audited (the name and public key; never the secret). A warehouse
    of another company is not found, like a missing one. ``user_id``: the staff
    member the key acts as (a cashier's own till: their name on its sales); a
    refusal names the field ``user_id``."""
    warehouse = await session.scalar(
        select(Warehouse).where(Warehouse.company_id == company_id, Warehouse.id == warehouse_id)
    )
    if warehouse is None:
        raise invalid("warehouse_id", f"warehouse {warehouse_id} not found")
    clean = name.strip()
    if not 1 <= len(clean) <= stored_length(ApiKey.name):
        raise invalid("name", f"must be 1 to {stored_length(ApiKey.name)} characters")
    if user_id is not None:
        try:
            await staff.acting_staff(session, company_id, warehouse_id, user_id)
        except (NotFound, Unprocessable, ValidationFailed) as exc:
            raise invalid("user_id", exc.message) from None
    new = await create_api_key(session, warehouse_id, clean, user_id=user_id, company_id=company_id)
    await _audit_key(
        session,
        new.key,
        "created",
        actor_id,
        {
            "name": new.key.name,
            "public_key": new.key.public_key,
            "warehouse_id": warehouse_id,
            "user_id": new.key.user_id,
            "rate_limit": new.key.rate_limit,
        },
    )
    return new


@dataclass(frozen=True)
class NewShop:
    """What the back office's first-run page asks for (``web/start.py``)."""

    company_name: str
    base_currency: str
    branch_name: str
    owner_name: str
    owner_email: str
    owner_password: str


async def service_is_empty(session: AsyncSession) -> bool:
    """No company yet: the state in which the back office offers to start one."""
    return (await session.scalar(select(Company.id).limit(1))) is None


async def start_first_shop(session: AsyncSession, new: NewShop) -> tuple[Company, User]:
    """The first company of an empty service, with its first branch and its owner,
    as ``tillbook company create`` and ``warehouse create`` would make them.

    Only while the service holds no company: the page that calls this is open to
    anyone who can reach the service, so it must work once and never again. On
    PostgreSQL the companies table is locked against a concurrent twin for the rest
    of the transaction; on SQLite the single writer does the same."""
    problems = Problems()
    company_name = new.company_name.strip()
    branch_name = new.branch_name.strip()
    owner_name = new.owner_name.strip()
    if not company_name:
        problems.add("company_name", "must not be empty")
    elif len(company_name) > 200:
        problems.add("company_name", "must be at most 200 characters")
    if not branch_name:
        problems.add("branch_name", "must not be empty")
    elif len(branch_name) > 200:
        problems.add("branch_name", "must be at most 200 characters")
    if not owner_name:
        problems.add("owner_name", "must not be empty")
    try:
        currency = rates.check_code("base_currency", new.base_currency)
    except ValidationFailed as exc:
        problems.add("base_currency", exc.errors["base_currency"][0])
    for field, value, check in (
        ("owner_email", new.owner_email, staff.check_email),
        ("owner_password", new.owner_password, staff.check_password),
        ("owner_name", owner_name, staff.check_name),
    ):
        try:
            check(value, field)
        except ValidationFailed as exc:
            for message in exc.errors.get(field, [exc.message]):
                problems.add(field, message)
    problems.raise_if_any()
    bind = session.get_bind()
    if bind.dialect.name == "postgresql":
        await session.execute(text("LOCK TABLE companies IN SHARE ROW EXCLUSIVE MODE"))
    if not await service_is_empty(session):
        raise Conflict("this service already has a company: sign in instead")
    if await staff.email_taken(session, new.owner_email.strip()):
        raise invalid("owner_email", "is already a staff member's sign-in")
    company, owner = await create_company(
        session,
        company_name,
        admin_email=new.owner_email,
        admin_password=new.owner_password,
        base_currency=currency,
    )
    owner.name = owner_name
    branch = await create_warehouse(session, company.id, branch_name)
    await session.flush()
    await record(
        session,
        company_id=company.id,
        actor_id=owner.id,
        action="created",
        entity_type="company",
        entity_id=company.id,
        after={
            "name": company.name,
            "base_currency": currency,
            "first_branch": branch.name,
            "owner_email": owner.email,
            "through": "first-run page",
        },
    )
    return company, owner
