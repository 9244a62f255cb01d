"""Request authentication in the spec's order of checks (spec: Authentication).

1. look up the key by public key; 2. verify the secret (SHA-256 digest, constant
time); 3. require status 1; 4. require a valid subscription (403); 5. attach the
key's warehouse and user (a key whose staff member is archived is refused with
the key's own 401). Signed requests (and keys that require a signature)
are then checked: HMAC-SHA256 over ``TIMESTAMP.METHOD.PATH.BODY``, 300 s window,
a signed write accepted once (DESIGN §9, §12).

Signing is defined so that an integrator can reproduce it from what they send:
PATH is the request target exactly as it went on the wire (the raw path and the
raw query, percent-encoding untouched: never a decoded and re-encoded URL, which
differs between HTTP libraries), and the timestamp is ASCII digits only, compared
as sent. ``sign`` is the one implementation; the worked examples of the manual
(docs/integrators/signing.md) and of the OpenAPI document are computed with it
(``EXAMPLES``).
"""

from __future__ import annotations

import datetime as dt
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from sqlalchemy import bindparam, delete, insert, or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.auth.actor import Actor
from tillbook.auth.context import AuthContext
from tillbook.config import master_key
from tillbook.db import Database, commit_observers, cross_tenant
from tillbook.errors import Forbidden, Unauthorized
from tillbook.kit import crypto
from tillbook.kit.changes import utc
from tillbook.models import ApiKey, Company, Register, SeenSignature, Shift, User, Warehouse

SIGNATURE_WINDOW_S = 300
# Only a write changes anything when it is repeated; a read signed once may be
# sent again within the window (a retried GET, a poll).
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# ASCII digits only: ``int()`` would also take "+5", " 123", "1_000" or "١٢٣",
# none of which the signer can be expected to have hashed the same way. 19 digits
# hold any int64; anything longer is a mistake, not a time.
_TIMESTAMP = re.compile(r"[0-9]{1,19}")
HMAC_CONTEXT = b"api-key-hmac"
SECRET_CONTEXT = b"api-key-secret"

# Every request runs this: built once, columns only (no ORM entities to load).
KEY_LOOKUP = (
    select(
        ApiKey.id.label("key_id"),
        ApiKey.secret_digest,
        ApiKey.status,
        ApiKey.require_signature,
        ApiKey.hmac_secret_encrypted,
        ApiKey.previous_secret_digest,
        ApiKey.previous_hmac_secret_encrypted,
        ApiKey.previous_valid_until,
        ApiKey.rate_limit,
        Company.id.label("company_id"),
        Company.subscription_expires_on,
        Company.reference_version,
        Warehouse.id.label("warehouse_id"),
        Warehouse.allow_negative_stock,
        # Whether a sale must look for its till shift (``orders.shifts``): the branch
        # requires one, or one is open. Read here, the common shop without shifts
        # spends no statement of its sales on them.
        or_(
            Warehouse.require_shift,
            select(Shift.id)
            .where(Shift.warehouse_id == Warehouse.id, Shift.status == "open")
            .exists(),
        ).label("shifts_in_play"),
        User.id.label("user_id"),
        User.name.label("user_name"),
        User.archived_at.label("user_archived_at"),
        Register.id.label("register_id"),
    )
    .join(Company, Company.id == ApiKey.company_id)
    .join(
        Warehouse,
        (Warehouse.id == ApiKey.warehouse_id) & (Warehouse.company_id == ApiKey.company_id),
    )
    .join(User, (User.id == ApiKey.user_id) & (User.company_id == ApiKey.company_id))
    .outerjoin(
        Register, (Register.key_id == ApiKey.id) & (Register.company_id == ApiKey.company_id)
    )
    .where(ApiKey.public_key == bindparam("public_key"))
)


# Verified lookups of GET requests, by public key: (when read, the row). A till
# syncing its catalog sends hundreds of GETs a minute with one key; each looked the
# key up again (a round trip and a pooled connection's checkout, about a tenth of a
# product read's CPU). Only the row is kept: every request still checks its secret,
# the key's status, its staff member, the plan and a signature against it.
#
# How stale it may be: a write committed by this process forgets every key at once
# (``db.commit_observers``), so a revocation, a rotation, an archived staff member
# or a changed plan made through this process applies to its next request; one
# made by another process (the other workers, the CLI) applies to GETs within
# ``KEY_CACHE_S``. Every other method (a sale, a payment: anything that writes)
# reads the key afresh and refreshes the entry.
KEY_CACHE_S = 1.0
KEY_CACHE_MAX = 4096
READ_METHODS = frozenset({"GET", "HEAD"})
_keys: dict[str, tuple[float, Mapping[str, Any]]] = {}


def forget_keys() -> None:
    """Drop every remembered key lookup (after a committed write)."""
    _keys.clear()


commit_observers.append(forget_keys)


async def _key_row(db: Database, public_key: str, method: str) -> Mapping[str, Any] | None:
    """The key's row: remembered for ``KEY_CACHE_S`` for a GET, else read."""
    now = time.monotonic()
    if method in READ_METHODS:
        found = _keys.get(public_key)
        if found is not None and now - found[0] < KEY_CACHE_S:
            return found[1]
    with cross_tenant("authentication"):
        row = await db.first(KEY_LOOKUP, {"public_key": public_key})
    if row is None:
        _keys.pop(public_key, None)
        return None
    if len(_keys) >= KEY_CACHE_MAX:
        _keys.clear()  # a flood of distinct valid keys: start over rather than grow
    _keys[public_key] = (now, row)
    return row


async def authenticate(
    db: Database,
    *,
    public_key: str | None,
    secret_key: str | None,
    signature: str | None,
    timestamp: str | None,
    method: str,
    target: bytes,
    body: bytes,
) -> AuthContext:
    if not public_key or not secret_key:
        raise Unauthorized("authentication failed; both key headers are required")

    row = await _key_row(db, public_key, method.upper())
    if row is None:
        crypto.same(crypto.sha256_hex(secret_key), "0" * 64)  # same work either way
        raise Unauthorized("invalid or inactive public key")
    digest = crypto.sha256_hex(secret_key)
    hmac_secret_encrypted = row["hmac_secret_encrypted"]
    if not crypto.same(digest, row["secret_digest"]):
        if not _previous_secret(row, digest):
            raise Unauthorized("invalid secret key")
        # the secret a rotation replaced, within its grace: signed with its own
        # signing secret, as the till that still has both was set up
        hmac_secret_encrypted = row["previous_hmac_secret_encrypted"]
    if row["status"] != 1:
        raise Unauthorized("invalid or inactive public key")
    if row["user_archived_at"] is not None:
        # The key acts as a staff member who has left: it stops with their login.
        raise Unauthorized("invalid or inactive public key: its staff member is archived")
    expires = row["subscription_expires_on"]
    if expires is not None and expires < dt.datetime.now(dt.UTC).date():
        raise Forbidden(
            "plan expired; renew to continue using API services; external writes are blocked"
        )
    if signature is not None or timestamp is not None or row["require_signature"]:
        await _verify_signature(
            db, row["key_id"], hmac_secret_encrypted, signature, timestamp, method,
            target, body,
        )  # fmt: skip
    register_id = row["register_id"]
    actor = (
        Actor.key(row["key_id"], row["user_id"], row["user_name"])
        if register_id is None
        else Actor.register(register_id, row["key_id"], row["user_id"], row["user_name"])
    )
    return AuthContext(
        actor=actor,
        company_id=row["company_id"],
        warehouse_id=row["warehouse_id"],
        rate_limit=row["rate_limit"],
        allow_negative_stock=row["allow_negative_stock"],
        reference_version=row["reference_version"],
        shifts_in_play=bool(row["shifts_in_play"]),
    )


def _previous_secret(row: Mapping[str, Any], digest: str) -> bool:
    """Whether ``digest`` is the key's secret before its last rotation and the grace
    the owner gave it has not run out (compared in constant time like the current
    one)."""
    previous, until = row["previous_secret_digest"], row["previous_valid_until"]
    if previous is None or until is None:
        return False
    return bool(crypto.same(digest, previous)) and utc(until) > dt.datetime.now(dt.UTC)


def request_target(scope: Mapping[str, Any]) -> bytes:
    """PATH of the canonical string: the path and query of an ASGI request exactly as
    the client sent them (``/api/v1/public/products?search=milk%20bottle``).

    ``raw_path`` carries the path bytes as received (uvicorn and httpx set it; the
    ASGI spec makes it optional, so without it the decoded path is re-quoted, which
    gives the same bytes for any path that needed no escaping); ``query_string`` is
    always raw. A ``?`` with nothing after it does not reach the application and is
    not part of PATH."""
    raw_path = scope.get("raw_path")
    if not raw_path:
        raw_path = quote(scope.get("root_path", "") + scope["path"]).encode()
    query: bytes = scope.get("query_string") or b""
    return bytes(raw_path) + (b"?" + query if query else b"")


def canonical(timestamp: str, method: str, target: bytes, body: bytes) -> bytes:
    """``TIMESTAMP.METHOD.PATH.BODY`` as the bytes that are signed."""
    return f"{timestamp}.{method.upper()}.".encode() + target + b"." + body


def sign(hmac_secret: str, timestamp: str, method: str, target: bytes, body: bytes) -> str:
    """The lower-case hex HMAC-SHA256 an integrator sends as ``X-Service-Signature``,
    keyed with the ``hmac_secret`` string's UTF-8 bytes."""
    return crypto.hmac_hex(hmac_secret, canonical(timestamp, method, target, body))


@dataclass(frozen=True)
class SigningExample:
    """A worked example with fixed inputs: shown in the manual
    (docs/integrators/signing.md) and the OpenAPI document, recomputed by the tests
    from the manual's text."""

    hmac_secret: str
    timestamp: str
    method: str
    path: str
    body: str

    @property
    def canonical(self) -> str:
        return canonical(
            self.timestamp, self.method, self.path.encode(), self.body.encode()
        ).decode()

    @property
    def signature(self) -> str:
        return sign(self.hmac_secret, self.timestamp, self.method, self.path.encode(),
                    self.body.encode())  # fmt: skip


_EXAMPLE_SECRET = "hs_EXAMPLEexampleEXAMPLEexampleEXAMPLEexa"
EXAMPLES = (
    SigningExample(
        _EXAMPLE_SECRET, "1767225600", "GET",
        "/api/v1/public/products?search=milk%20bottle&limit=5", "",
    ),
    SigningExample(
        _EXAMPLE_SECRET, "1767225600", "POST", "/api/v1/public/payments",
        '{"user_id":12,"payment_type":"in","amount":"5.00","payment_mode_id":"cash"}',
    ),
)  # fmt: skip


async def _verify_signature(
    db: Database,
    key_id: int,
    hmac_secret_encrypted: str,
    signature: str | None,
    timestamp: str | None,
    method: str,
    target: bytes,
    body: bytes,
) -> None:
    if not signature or not timestamp:
        raise Unauthorized(
            "this key requires signed requests: send X-Service-Signature and X-Service-Timestamp"
        )
    if not _TIMESTAMP.fullmatch(timestamp):
        shown = timestamp if len(timestamp) <= 40 else timestamp[:40] + "..."
        raise Unauthorized(
            "X-Service-Timestamp must be Unix seconds written with the digits 0-9 only "
            f"(no sign, space, exponent or other characters), got {shown!r}"
        )
    now_s = int(time.time())
    if abs(now_s - int(timestamp)) > SIGNATURE_WINDOW_S:
        raise Unauthorized(
            f"stale request timestamp: more than {SIGNATURE_WINDOW_S} seconds from server "
            f"time {now_s}"
        )
    hmac_secret = crypto.decrypt(hmac_secret_encrypted, master_key(), context=HMAC_CONTEXT)
    expected = sign(hmac_secret, timestamp, method, target, body)
    if not crypto.same(signature.strip().lower(), expected):
        raise Unauthorized(
            "invalid request signature: expected the lower-case hex HMAC-SHA256 of "
            "TIMESTAMP.METHOD.PATH.BODY, with PATH the path and query exactly as sent"
        )
    if method.upper() in WRITE_METHODS:
        await _refuse_replay(db, key_id, expected)


async def _refuse_replay(db: Database, key_id: int, signature: str) -> None:
    """Remember a signed write; the same signature again within the window is a
    replay (a retried write is signed anew, and its Idempotency-Key then answers)."""
    now = dt.datetime.now(dt.UTC)

    async def remember(session: AsyncSession) -> None:
        await session.execute(
            delete(SeenSignature).where(
                SeenSignature.seen_at < now - dt.timedelta(seconds=2 * SIGNATURE_WINDOW_S)
            )
        )
        await session.execute(
            insert(SeenSignature).values(signature=signature, key_id=key_id, seen_at=now)
        )

    try:
        await db.write(remember, attempts=1)
    except IntegrityError:
        raise Unauthorized(
            "replayed request signature: a signed write is accepted once; sign a retry "
            "with a new timestamp"
        ) from None
