"""Staff members: the people who log in to the back office, each with a role and,
except owners, an optional warehouse (``auth/roles.py`` says what a role may do).

The same functions serve the admin API and the CLI, and every change is recorded in
the audit trail in its own transaction (never a password or its hash: a password
change is recorded as ``"password": "changed"``).

Rules kept here:

- one email, one login: an email belongs to at most one staff member in the whole
  service, compared lower-cased (``staff_logins``, a table keyed by the email
  alone, holds it against a concurrent twin, whose unit then runs again and meets
  the check below);
- a company always keeps an active owner: the last one can be neither archived nor
  demoted (422). The company's active owners are locked before they are counted, so
  two owners archiving each other at once cannot both succeed;
- an archived staff member's sessions end with the archiving, and their login is
  refused from then on; the record stays (sales and audit events name them);
- a new password, role or warehouse scope ends every session of the staff member
  at once (``auth.admin.end_sessions``, as the archiving does): a token or a browser
  signed in under the old password or the old rights must not keep working until
  it expires. Someone changing their own password (``change_own_password``) gets a
  fresh session for the browser they did it from; their other sessions end.
- an owner acts for the whole company, so an owner has no warehouse.

The users API keys created without ``--user`` act as (``role`` NULL, no email or
password) are not staff members in this sense: they are not listed, read or edited
here.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any, Literal, cast

from sqlalchemy import delete, func, insert, select
from sqlalchemy.ext.asyncio import AsyncSession
from typing_extensions import TypedDict

from tillbook.audit.service import record
from tillbook.auth import admin, roles
from tillbook.db import cross_tenant
from tillbook.errors import Conflict, NotFound, Unprocessable, invalid
from tillbook.kit import crypto, versions
from tillbook.kit.bounds import text_problem
from tillbook.kit.pagination import Page
from tillbook.kit.shapes import DateTimeStr, answer
from tillbook.kit.text import quoted
from tillbook.models import StaffLogin, User, Warehouse

ENTITY = "staff"
EMAIL_MAX = 200  # users.email is VARCHAR(200)
NAME_MAX = 200
PASSWORD_MIN = 8
PASSWORD_MAX = 1024
_UNSET: Any = object()


def _iso(moment: dt.datetime | None) -> str | None:
    if moment is None:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)  # SQLite hands back naive UTC times
    return moment.astimezone(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


# ``auth/roles.ROLES``: a staff member's row always has one (``create_staff``).
StaffRole = Literal["owner", "manager", "accountant", "cashier"]


# A staff member as the API and the CLI show them (never the password hash);
# ``api/admin/staff.py`` puts it in the envelope.
@answer
class StaffMember(TypedDict):
    id: int
    name: str
    email: str
    role: StaffRole
    warehouse_id: int | None
    can_log_in: bool
    has_pin: bool
    version: int
    archived_at: DateTimeStr | None
    created_at: DateTimeStr | None


def view(user: User) -> StaffMember:
    """A staff member as the API and the CLI show them (never the password hash)."""
    return {
        "id": user.id,
        "name": user.name,
        # A staff member (a role, ``_staff``) is made with an email (``create_staff``,
        # the owner with the company); only an API key's actor has none, and no role.
        "email": cast(str, user.email),
        "role": cast(StaffRole, user.role),
        "warehouse_id": user.warehouse_id,
        "can_log_in": user.password_hash is not None and user.archived_at is None,
        "has_pin": user.pin_hash is not None,
        "version": user.version,
        "archived_at": _iso(user.archived_at),
        "created_at": _iso(user.created_at),
    }


def _audited(user: User) -> dict[str, Any]:
    return {
        "name": user.name,
        "email": user.email,
        "role": user.role,
        "warehouse_id": user.warehouse_id,
        "archived_at": _iso(user.archived_at),
    }


# ---------------------------------------------------------------- checks


def check_name(name: str, field: str = "name") -> str:
    text = name.strip()
    if not text:
        raise invalid(field, "must not be empty")
    if len(text) > NAME_MAX:
        raise invalid(field, f"must be at most {NAME_MAX} characters")
    problem = text_problem(text)
    if problem is not None:
        raise invalid(field, problem)
    return text


def check_email(email: str, field: str = "email") -> str:
    text = email.strip()
    local, at, domain = text.rpartition("@")
    if not at or not local or not domain or any(c.isspace() for c in text):
        raise invalid(field, f"must be an email address (got {quoted(text)})")
    if len(text) > EMAIL_MAX:
        raise invalid(field, f"must be at most {EMAIL_MAX} characters")
    problem = text_problem(text)
    if problem is not None:
        raise invalid(field, problem)
    return text


def check_password(password: str, field: str = "password") -> str:
    if len(password) < PASSWORD_MIN:
        raise invalid(field, f"must be at least {PASSWORD_MIN} characters")
    if len(password) > PASSWORD_MAX:
        raise invalid(field, f"must be at most {PASSWORD_MAX} characters")
    if text_problem(password) is not None:
        raise invalid(field, "must not contain control characters")
    return password


def check_role(role: str, field: str = "role") -> str:
    if role not in roles.ROLES:
        raise invalid(field, f"must be one of {', '.join(roles.ROLES)} (got {quoted(role)})")
    return role


async def email_taken(session: AsyncSession, email: str, *, besides: int | None = None) -> bool:
    """Whether a staff member of any company logs in with ``email``: it is the login,
    so it is unique across companies (``staff_logins``, a coordinator table keyed by
    the email; ``CROSS_TENANT["authentication"]``)."""
    query = select(StaffLogin.user_id).where(StaffLogin.email == func.lower(email))
    if besides is not None:
        query = query.where(StaffLogin.user_id != besides)
    with cross_tenant("authentication"):
        return await session.scalar(query) is not None


async def claim_login(session: AsyncSession, user: User) -> None:
    """``user``'s email as their login (``StaffLogin``), in place of any they had;
    a concurrent twin claiming the same email fails on its key
    (``pk_staff_logins``) and its unit runs again into ``email_taken``."""
    await session.execute(delete(StaffLogin).where(StaffLogin.user_id == user.id))
    if user.email is not None:
        await session.execute(
            insert(StaffLogin).values(
                email=func.lower(user.email), company_id=user.company_id, user_id=user.id
            )
        )


async def _check_email_free(
    session: AsyncSession, email: str, *, besides: int | None = None
) -> None:
    if await email_taken(session, email, besides=besides):
        raise Conflict(f"email {quoted(email)} is already the login of another staff member")


async def _check_scope(
    session: AsyncSession, company_id: int, role: str, warehouse_id: int | None
) -> None:
    if warehouse_id is None:
        return
    if role not in roles.SCOPABLE:
        raise invalid("warehouse_id", f"an {role} acts for the whole company: leave it empty")
    found = await session.scalar(
        select(Warehouse.id).where(Warehouse.id == warehouse_id, Warehouse.company_id == company_id)
    )
    if found is None:
        raise invalid("warehouse_id", f"unknown warehouse {warehouse_id}")


# ---------------------------------------------------------------- reads


def _staff(company_id: int) -> Any:
    return select(User).where(
        User.company_id == company_id, User.user_type == "staff", User.role.is_not(None)
    )


async def get_staff(
    session: AsyncSession, company_id: int, staff_id: int, *, for_update: bool = False
) -> User:
    """One staff member of the company; another company's id is simply not found."""
    query = _staff(company_id).where(User.id == staff_id)
    if for_update:
        query = query.with_for_update()
    found: User | None = await session.scalar(query)
    if found is None:
        raise NotFound(f"staff member {staff_id} not found")
    return found


async def list_staff(
    session: AsyncSession, company_id: int, page: Page, *, include_archived: bool = True
) -> tuple[int, list[User]]:
    query = _staff(company_id)
    if not include_archived:
        query = query.where(User.archived_at.is_(None))
    total = await session.scalar(select(func.count()).select_from(query.subquery())) or 0
    rows = await session.scalars(query.order_by(User.id).offset(page.offset).limit(page.limit))
    return total, list(rows)


# ---------------------------------------------------------------- changes


@dataclass(frozen=True)
class NewStaff:
    name: str
    email: str
    role: str
    password: str
    warehouse_id: int | None = None


async def create_staff(
    session: AsyncSession, company_id: int, new: NewStaff, *, actor_id: int | None
) -> User:
    """A staff member who can log in with their email and password at once."""
    name, email = check_name(new.name), check_email(new.email)
    role, password = check_role(new.role), check_password(new.password)
    await _check_scope(session, company_id, role, new.warehouse_id)
    await _check_email_free(session, email)
    user = User(
        company_id=company_id,
        user_type="staff",
        name=name,
        email=email,
        role=role,
        warehouse_id=new.warehouse_id,
        password_hash=crypto.hash_password(password),
    )
    session.add(user)
    await session.flush()
    await claim_login(session, user)
    await record(
        session,
        company_id=company_id,
        actor_id=actor_id,
        action="created",
        entity_type=ENTITY,
        entity_id=user.id,
        after=_audited(user),
    )
    return user


async def _keep_an_owner(session: AsyncSession, company_id: int, user: User, what: str) -> None:
    """422 when ``user`` is the company's last active owner."""
    if user.role != roles.OWNER or user.archived_at is not None:
        return
    owners = await session.scalars(
        _staff(company_id)
        .where(User.role == roles.OWNER, User.archived_at.is_(None))
        .order_by(User.id)
        .with_for_update()
    )
    if not any(o.id != user.id for o in owners):
        raise Unprocessable(
            f"cannot {what} staff member {user.id}: they are the company's last active owner; "
            "make another staff member owner first"
        )


async def update_staff(
    session: AsyncSession,
    company_id: int,
    staff_id: int,
    expected_version: int | None,
    *,
    actor_id: int | None,
    name: str | None = None,
    email: str | None = None,
    role: str | None = None,
    warehouse_id: int | None = _UNSET,
    password: str | None = None,
) -> User:
    """Change what is given (``warehouse_id=None`` clears the scope), based on
    ``expected_version`` (412 when stale, 428 when None); the version grows by one.
    A new password, role or scope ends all their sessions, the actor's own too
    when they edit themselves (``change_own_password`` keeps one)."""
    user = await get_staff(session, company_id, staff_id, for_update=True)
    versions.expect(user.version, expected_version, f"staff member {staff_id}")
    before = _audited(user)
    new_role = check_role(role) if role is not None else user.role
    assert new_role is not None
    new_scope = user.warehouse_id if warehouse_id is _UNSET else warehouse_id
    if new_role == roles.OWNER and warehouse_id is _UNSET:
        new_scope = None  # promoted to owner: the whole company
    await _check_scope(session, company_id, new_role, new_scope)
    if new_role != roles.OWNER:
        await _keep_an_owner(session, company_id, user, "demote")
    if name is not None:
        user.name = check_name(name)
    if email is not None:
        email = check_email(email)
        await _check_email_free(session, email, besides=user.id)
        user.email = email
        await claim_login(session, user)
    user.role = new_role
    user.warehouse_id = new_scope
    if password is not None:
        user.password_hash = crypto.hash_password(check_password(password))
    after = _audited(user)
    if after == before and password is None:
        return user  # nothing changed: no new version, nothing to record
    user.version += 1
    rights = ("role", "warehouse_id")
    if password is not None or any(before[k] != after[k] for k in rights):
        await admin.end_sessions(session, user.company_id, user.id)
    await session.flush()
    if password is not None:
        before, after = {**before, "password": None}, {**after, "password": "changed"}
    await record(
        session,
        company_id=company_id,
        actor_id=actor_id,
        action="updated",
        entity_type=ENTITY,
        entity_id=user.id,
        before=before,
        after=after,
    )
    return user


PIN_MIN, PIN_MAX = 4, 8


def check_pin(pin: str, field: str = "pin") -> str:
    """4 to 8 ASCII digits (``isdigit`` alone takes "²" and Arabic-Indic digits,
    which a register's keypad cannot type)."""
    if not (pin.isascii() and pin.isdigit() and PIN_MIN <= len(pin) <= PIN_MAX):
        raise invalid(field, f"must be {PIN_MIN} to {PIN_MAX} digits (0-9)")
    return pin


async def set_pin(
    session: AsyncSession,
    company_id: int,
    staff_id: int,
    pin: str | None,
    *,
    actor_id: int | None,
) -> User:
    """Set (or, with None, remove) the PIN a staff member sells with at a register.
    Stored as a PBKDF2 hash (``kit/crypto.hash_pin``), since the branch's registers
    check it offline; recorded as changed or removed, never the PIN. An archived
    staff member gets no PIN (422)."""
    user = await get_staff(session, company_id, staff_id, for_update=True)
    if user.archived_at is not None:
        raise Unprocessable(f"staff member {staff_id} is archived")
    had = user.pin_hash is not None
    user.pin_hash = crypto.hash_pin(check_pin(pin)) if pin is not None else None
    if not had and pin is None:
        return user
    user.version += 1
    await session.flush()
    await record(
        session,
        company_id=company_id,
        actor_id=actor_id,
        action="updated",
        entity_type=ENTITY,
        entity_id=user.id,
        before={"pin": "set" if had else None},
        after={"pin": "changed" if pin is not None else None},
    )
    return user


async def archive_staff(
    session: AsyncSession, company_id: int, staff_id: int, *, actor_id: int | None
) -> User:
    """Archive a staff member: no login from now on and every open session ended.
    Archiving an archived one changes nothing."""
    user = await get_staff(session, company_id, staff_id, for_update=True)
    if user.archived_at is not None:
        return user
    await _keep_an_owner(session, company_id, user, "archive")
    before = _audited(user)
    user.archived_at = dt.datetime.now(dt.UTC)
    user.version += 1
    await admin.end_sessions(session, user.company_id, user.id)
    await session.flush()
    await record(
        session,
        company_id=company_id,
        actor_id=actor_id,
        action="archived",
        entity_type=ENTITY,
        entity_id=user.id,
        before=before,
        after=_audited(user),
    )
    return user


async def change_own_password(
    session: AsyncSession, company_id: int, user_id: int, password: str
) -> admin.AdminLogin:
    """The signed-in staff member's new password (their current one is checked
    before, by ``auth.admin.confirm_password``, which throttles guesses): every
    session of theirs ends, and a new one is opened for the browser or client that
    asked, which stays signed in. Audited like an owner's reset."""
    user = await get_staff(session, company_id, user_id, for_update=True)
    if user.archived_at is not None:
        raise NotFound(f"staff member {user_id} not found")
    user.password_hash = crypto.hash_password(check_password(password))
    user.version += 1
    await admin.end_sessions(session, user.company_id, user.id)
    await session.flush()
    audited = _audited(user)
    await record(
        session,
        company_id=company_id,
        actor_id=user.id,
        action="updated",
        entity_type=ENTITY,
        entity_id=user.id,
        before={**audited, "password": None},
        after={**audited, "password": "changed"},
    )
    return await admin.open_session(session, company_id, user.id)


async def acting_staff(
    session: AsyncSession, company_id: int, warehouse_id: int, user_id: int
) -> User:
    """The staff member an API key of ``warehouse_id`` will act as (``keys create
    --user``): of the key's company, staff, not archived, and, when scoped, scoped
    to the key's warehouse. 404 for anyone else, worded like a missing id."""
    user = await session.scalar(
        select(User).where(User.company_id == company_id, User.id == user_id)
    )
    if user is None or user.user_type != "staff":
        raise NotFound(f"staff member {user_id} not found in company {company_id}")
    if user.archived_at is not None:
        raise Unprocessable(f"staff member {user_id} is archived; a key cannot act as them")
    if user.warehouse_id is not None and user.warehouse_id != warehouse_id:
        raise invalid(
            "user",
            f"staff member {user_id} works at warehouse {user.warehouse_id}, "
            f"not warehouse {warehouse_id}",
        )
    return user
