"""Back-office sessions for staff members.

``login`` checks an email and password against the company's staff (any role; one
email is one login across every company, ``staff_logins``) and opens an
``AdminSession``: a random bearer token handed out once, of which only the SHA-256
digest is stored, valid for 12 hours. ``authenticate`` turns a bearer token into the
session's company, staff member, role and warehouse scope, read afresh on every
request: a demotion or an archiving takes effect on the next request, and an
archived staff member's sessions are refused (and swept). ``logout`` ends the
session.

``end_sessions`` ends every session of one staff member at once, by deleting their
rows: the one way a session is taken away, used when the staff member is archived
and when their password, role or warehouse scope changes (``tenancy/staff.py``),
so that a token or a browser signed in under the old password or the old rights
is refused on its next request (401, or the sign-in page). The web cookie holds
the same token, so both doors close together.

Guessing is made expensive and uninformative:

- an unknown email and a wrong password get the same 401 message after the same
  scrypt work (a dummy hash stands in for a missing user);
- failed logins are counted per client address, in two limits consulted before
  any password is hashed (a refused request costs no scrypt work):
  ``LOGIN_FAILURES`` (10 in 15 minutes) for one email from one address, and
  ``ADDRESS_FAILURES`` (30 in 15 minutes) for all emails from one address, so
  that guessing across many emails is as slow as guessing one. Once blocked
  (429 with ``Retry-After``, at most the window), the address is refused whatever
  the password of the next try, so a blocked guesser cannot tell a right guess
  from a wrong one (a right password before that clears the count for its email
  and address, not the address's). Because the counts are per address, a stranger's failures
  block the stranger only: the owner logs in from their own address meanwhile.
  The address is the ASGI client host; behind a reverse proxy it is the address
  uvicorn takes from ``X-Forwarded-For`` when ``--proxy-headers`` is on and the
  proxy is listed in ``--forwarded-allow-ips`` (docs/operators/cli.md). The counts live
  in the app's rate limiter storage (shared through Redis when configured);
  within one process the check and the count are serialised per address, so
  parallel guesses cannot slip past the limit.

Passwords and tokens are never logged; emails are logged as a short digest.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import weakref
from dataclasses import dataclass
from typing import Literal

from limits import RateLimitItem, parse
from sqlalchemy import bindparam, delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession
from typing_extensions import TypedDict

from tillbook.auth import roles
from tillbook.auth.actor import Actor
from tillbook.auth.ratelimit import RateLimiter, retry_after
from tillbook.db import Database, cross_tenant
from tillbook.errors import Forbidden, RateLimited, Unauthorized, invalid
from tillbook.kit import crypto
from tillbook.kit.shapes import DateTimeStr, answer
from tillbook.models import AdminSession, User

log = logging.getLogger("tillbook.auth.admin")

TOKEN_PREFIX = "adm_"
TOKEN_LENGTH = 40
SESSION_TTL = dt.timedelta(hours=12)
LOGIN_FAILURES: RateLimitItem = parse("10 per 15 minutes")  # one email from one address
ADDRESS_FAILURES: RateLimitItem = parse("30 per 15 minutes")  # every email from one address
BAD_CREDENTIALS = "invalid email or password"

_address_locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()


@dataclass(frozen=True)
class AdminLogin:
    token: str
    expires_at: dt.datetime
    company_id: int
    user_id: int

    def answer(self) -> SessionOpened:
        """What ``POST /api/v1/admin/login`` answers (flat beside ``status``)."""
        return {
            "token": self.token,
            "token_type": "Bearer",
            "expires_at": iso_utc(self.expires_at),
            "company_id": self.company_id,
        }


# The admin API's answers to a login and a logout (``api/admin/session.py`` puts
# them flat beside ``status``).
@answer
class SessionOpened(TypedDict):
    token: str
    token_type: Literal["Bearer"]
    expires_at: DateTimeStr
    company_id: int


@answer
class SessionEnded(TypedDict):
    message: str


SESSION_ENDED: SessionEnded = {"message": "logged out"}


@dataclass(frozen=True)
class AdminContext:
    """The staff member behind a back-office request. Authorization asks here:
    ``require`` for an action, ``warehouse_for`` for a read that may cover the
    company or one warehouse (``auth/roles.py`` holds the rules)."""

    session_id: int
    company_id: int
    user_id: int
    expires_at: dt.datetime
    role: str | None = None
    warehouse_id: int | None = None  # the staff member's scope; None: every warehouse
    user_name: str = ""

    @property
    def actor(self) -> Actor:
        """The staff member signed in, as the services and the audit trail name them."""
        return Actor.staff(self.user_id, self.user_name)

    def can(self, permission: str, warehouse_id: int | None = None) -> bool:
        try:
            self.require(permission, warehouse_id)
        except Forbidden:
            return False
        return True

    def require(self, permission: str, warehouse_id: int | None = None) -> None:
        """403 unless this staff member may use ``permission`` on ``warehouse_id``
        (None: on the whole company)."""
        roles.check(self.role, self.warehouse_id, permission, warehouse_id)

    def shows_costs(self, warehouse_id: int | None = None) -> bool:
        return roles.shows_costs(self.role, self.warehouse_id, warehouse_id)

    def own_work_only(self, warehouse_id: int | None = None) -> bool:
        """Sales and shifts narrowed to this staff member's own (``auth/roles.py``)."""
        return roles.own_work_only(self.role, self.warehouse_id, warehouse_id)

    def may_list(self, warehouse_id: int, *, opening_stock: bool) -> None:
        """403 unless this staff member may list a product in ``warehouse_id``
        (``roles.may_list``)."""
        roles.may_list(self.role, self.warehouse_id, warehouse_id, opening_stock=opening_stock)

    def warehouse_for(self, permission: str, warehouse_id: int | None) -> int | None:
        """The warehouse an action that may leave it unnamed covers (a report of the
        company or one warehouse, where an opening balance is posted): a scoped staff
        member's own when none is named; 403 for another one."""
        return roles.narrowed(self.role, self.warehouse_id, permission, warehouse_id)


def utc(value: dt.datetime) -> dt.datetime:
    """SQLite hands back naive datetimes; every stored time is UTC."""
    return value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)


def iso_utc(value: dt.datetime) -> str:
    return utc(value).astimezone(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


# A real scrypt hash (same parameters as ``crypto.hash_password``) of a random
# password that was thrown away: verified when no staff member has the email, so that an
# unknown email costs exactly the work of a wrong password.
DUMMY_HASH = "scrypt$+2ueEfdy2/cHOO+tPfcyaw==$3VtAlrvtKPXEhclftrtR0J9yZt+37U1O/6RG6orkBsE="


def _email_digest(email: str) -> str:
    return crypto.sha256_hex(email)[:16]


def _lock_for(address: str) -> asyncio.Lock:
    lock = _address_locks.get(address)
    if lock is None:
        lock = asyncio.Lock()
        _address_locks[address] = lock
    return lock


async def _blocked(
    limiter: RateLimiter, item: RateLimitItem, ident: str, what: str
) -> RateLimited | None:
    if await limiter.limiter.test(item, ident):
        return None
    stats = await limiter.limiter.get_window_stats(item, ident)
    wait = retry_after(stats.reset_time, item)
    return RateLimited(
        f"too many failed logins {what}; retry after {wait} seconds",
        headers={"Retry-After": str(wait)},
    )


async def _staff_with_email(session: AsyncSession, email: str) -> list[tuple[int, int, str]]:
    """Staff who may log in with this email: not archived, with a password and a
    role. One at most (the unique index); a list all the same, so a database that
    somehow holds two still checks each password."""
    rows = await session.execute(
        select(User.id, User.company_id, User.password_hash)
        .where(
            User.user_type == "staff",
            func.lower(User.email) == email,
            User.password_hash.is_not(None),
            User.role.is_not(None),
            User.archived_at.is_(None),
        )
        .order_by(User.id)
    )
    return [(uid, cid, str(pw)) for uid, cid, pw in rows.all()]


async def _verify(password: str, stored: str) -> bool:
    # scrypt takes tens of milliseconds of CPU: keep it off the event loop.
    return await asyncio.to_thread(crypto.verify_password, password, stored)


async def end_sessions(session: AsyncSession, company_id: int, user_id: int) -> None:
    """End every session of the staff member ``user_id`` (their next request with an
    old token or cookie is refused); in the caller's transaction."""
    await session.execute(
        delete(AdminSession).where(
            AdminSession.company_id == company_id, AdminSession.user_id == user_id
        )
    )


async def open_session(session: AsyncSession, company_id: int, user_id: int) -> AdminLogin:
    """A new session for a staff member already identified (a login, or a password
    just changed by its owner, who stays signed in where they changed it)."""
    now = dt.datetime.now(dt.UTC)
    # Expired sessions of this user are swept on the way in.
    await session.execute(
        delete(AdminSession).where(
            AdminSession.company_id == company_id,
            AdminSession.user_id == user_id,
            AdminSession.expires_at < now,
        )
    )
    token = crypto.random_token(TOKEN_PREFIX, TOKEN_LENGTH)
    expires_at = now + SESSION_TTL
    session.add(
        AdminSession(
            company_id=company_id,
            user_id=user_id,
            token_digest=crypto.sha256_hex(token),
            expires_at=expires_at,
            created_at=now,
        )
    )
    await session.flush()
    return AdminLogin(token=token, expires_at=expires_at, company_id=company_id, user_id=user_id)


async def login(
    db: Database, limiter: RateLimiter, email: str, password: str, address: str
) -> AdminLogin:
    """A new session for the staff member with this email and password; 401 otherwise
    (an archived staff member's right password too, with the same message).

    ``address`` is the client's network address (``request.client.host``)."""
    normalized = email.strip().lower()
    digest = _email_digest(normalized)
    address_ident = f"tillbook:admin-login-address:{address}"
    email_ident = f"tillbook:admin-login:{crypto.sha256_hex(normalized)}:{address}"
    async with _lock_for(address):
        for item, ident, what in (
            (ADDRESS_FAILURES, address_ident, "from this address"),
            (LOGIN_FAILURES, email_ident, "for this email from this address"),
        ):
            refused = await _blocked(limiter, item, ident, what)
            if refused is not None:
                log.warning(
                    "admin login refused: too many failures %s (email %s, address %s)",
                    what,
                    digest,
                    address,
                )
                raise refused
        with cross_tenant("authentication"):
            candidates = await db.read(lambda s: _staff_with_email(s, normalized))
        matched: tuple[int, int] | None = None
        if not candidates:
            await _verify(password, DUMMY_HASH)  # the same work as a real check
        for user_id, company_id, stored in candidates:
            if await _verify(password, stored):
                matched = (user_id, company_id)
                break
        if matched is None:
            await limiter.limiter.hit(ADDRESS_FAILURES, address_ident)
            await limiter.limiter.hit(LOGIN_FAILURES, email_ident)
            log.info("admin login failed (email %s, address %s)", digest, address)
            raise Unauthorized(BAD_CREDENTIALS)
        # The owner's own typos for this email are forgotten once the password is
        # right; the address's count across emails is not (one known password must
        # not reset the guessing at others).
        await limiter.limiter.clear(LOGIN_FAILURES, email_ident)
    user_id, company_id = matched
    opened = await db.write(lambda s: open_session(s, company_id, user_id))
    log.info("admin login: company %s user %s", company_id, user_id)
    return opened


def _reentry_ident(user_id: int) -> str:
    return f"tillbook:admin-password-reentry:{user_id}"


async def check_reentry(limiter: RateLimiter, user_id: int) -> None:
    """Before a signed-in staff member's password is checked again (an API key's
    secret revealed in the back office): refused (429) after as many failures as a
    login allows, so a session left open cannot be used to guess the password."""
    refused = await _blocked(limiter, LOGIN_FAILURES, _reentry_ident(user_id), "of this password")
    if refused is not None:
        raise refused


async def reentry_failed(limiter: RateLimiter, user_id: int) -> None:
    await limiter.limiter.hit(LOGIN_FAILURES, _reentry_ident(user_id))


async def confirm_password(
    db: Database, limiter: RateLimiter, company_id: int, user_id: int, password: str, field: str
) -> None:
    """The signed-in staff member's own password typed again before they change it:
    throttled like ``check_reentry`` (a session left open cannot be used to guess
    it), a wrong one is 422 on ``field``."""
    await check_reentry(limiter, user_id)
    stored = await db.read(
        lambda s: s.scalar(
            select(User.password_hash).where(User.id == user_id, User.company_id == company_id)
        )
    )
    if not await _verify(password, stored or DUMMY_HASH) or stored is None:
        await reentry_failed(limiter, user_id)
        raise invalid(field, "is not your current password")


# Every back-office request runs this: the session and its staff member in one read.
SESSION_LOOKUP = (
    select(
        AdminSession.id.label("session_id"),
        AdminSession.company_id,
        AdminSession.user_id,
        AdminSession.expires_at,
        User.user_type,
        User.role,
        User.warehouse_id,
        User.archived_at,
        User.name.label("user_name"),
    )
    .join(User, (User.id == AdminSession.user_id) & (User.company_id == AdminSession.company_id))
    .where(AdminSession.token_digest == bindparam("digest"))
)


def _well_formed(token: str) -> bool:
    return (
        token.startswith(TOKEN_PREFIX)
        and len(token) == len(TOKEN_PREFIX) + TOKEN_LENGTH
        and token.isascii()
    )


async def authenticate(db: Database, authorization: str | None) -> AdminContext:
    """The session an ``Authorization: Bearer <token>`` header names; 401 otherwise."""
    scheme, _, token = (authorization or "").strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized(
            "authentication required; log in at /api/v1/admin/login and send "
            "Authorization: Bearer <token>",
            headers={"WWW-Authenticate": "Bearer"},
        )
    token = token.strip()
    if not _well_formed(token):
        raise Unauthorized("invalid session token", headers={"WWW-Authenticate": "Bearer"})
    digest = crypto.sha256_hex(token)
    with cross_tenant("authentication"):
        row = await db.first(SESSION_LOOKUP, {"digest": digest})
    if row is None:
        raise Unauthorized("invalid session token", headers={"WWW-Authenticate": "Bearer"})
    expired = utc(row["expires_at"]) <= dt.datetime.now(dt.UTC)
    gone = row["archived_at"] is not None or row["user_type"] != "staff" or row["role"] is None
    if expired or gone:
        session_id, company_id = row["session_id"], row["company_id"]
        await db.write(
            lambda s: s.execute(
                delete(AdminSession).where(
                    AdminSession.id == session_id, AdminSession.company_id == company_id
                )
            )
        )
        raise Unauthorized(
            "session expired; log in again" if not gone else "this staff member is archived",
            headers={"WWW-Authenticate": 'Bearer error="invalid_token"'},
        )
    return AdminContext(
        session_id=row["session_id"],
        company_id=row["company_id"],
        user_id=row["user_id"],
        expires_at=utc(row["expires_at"]),
        role=row["role"],
        warehouse_id=row["warehouse_id"],
        user_name=row["user_name"],
    )


async def logout(session: AsyncSession, ctx: AdminContext) -> None:
    await session.execute(
        delete(AdminSession).where(
            AdminSession.id == ctx.session_id, AdminSession.company_id == ctx.company_id
        )
    )
    await session.flush()
