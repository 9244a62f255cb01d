"""Request authentication in the spec's order of checks (spec: Authentication).

1. look up the key by public key; 2. verify the secret (SHA-256 digest, constant
time); 3. require status 1; 4. require a valid subscription (403); 5. attach the
key's warehouse and user. Signed requests (and keys that require a signature)
are then checked: HMAC-SHA256 over ``TIMESTAMP.METHOD.PATH.BODY``, 300 s window,
each signature accepted once.
"""

from __future__ import annotations

import datetime as dt
import time

from sqlalchemy import bindparam, delete, insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.auth.context import AuthContext
from tillbook.config import master_key
from tillbook.db import Database
from tillbook.errors import Forbidden, Unauthorized
from tillbook.kit import crypto
from tillbook.models import ApiKey, Company, SeenSignature, User, Warehouse

SIGNATURE_WINDOW_S = 300
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
        ApiKey.rate_limit,
        Company.id.label("company_id"),
        Company.subscription_expires_on,
        Warehouse.id.label("warehouse_id"),
        Warehouse.allow_negative_stock,
        User.id.label("user_id"),
        User.name.label("user_name"),
    )
    .join(Company, Company.id == ApiKey.company_id)
    .join(Warehouse, Warehouse.id == ApiKey.warehouse_id)
    .join(User, User.id == ApiKey.user_id)
    .where(ApiKey.public_key == bindparam("public_key"))
)


async def authenticate(
    db: Database,
    *,
    public_key: str | None,
    secret_key: str | None,
    signature: str | None,
    timestamp: str | None,
    method: str,
    path_with_query: str,
    body: bytes,
) -> AuthContext:
    if not public_key or not secret_key:
        raise Unauthorized("authentication failed; both key headers are required")

    row = await db.first(KEY_LOOKUP, {"public_key": public_key})
    if row is None:
        crypto.same(crypto.sha256_hex(secret_key), "0" * 64)  # same work either way
        raise Unauthorized("invalid or inactive public key")
    if not crypto.same(crypto.sha256_hex(secret_key), row["secret_digest"]):
        raise Unauthorized("invalid secret key")
    if row["status"] != 1:
        raise Unauthorized("invalid or inactive public key")
    expires = row["subscription_expires_on"]
    if expires is not None and expires < dt.datetime.now(dt.UTC).date():
        raise Forbidden(
            "plan expired; renew to continue using API services; external writes are blocked"
        )
    if signature is not None or timestamp is not None or row["require_signature"]:
        await _verify_signature(
            db, row["key_id"], row["hmac_secret_encrypted"], signature, timestamp, method,
            path_with_query, body,
        )  # fmt: skip
    return AuthContext(
        key_id=row["key_id"],
        company_id=row["company_id"],
        warehouse_id=row["warehouse_id"],
        user_id=row["user_id"],
        user_name=row["user_name"],
        rate_limit=row["rate_limit"],
        allow_negative_stock=row["allow_negative_stock"],
    )


def canonical(timestamp: str, method: str, path_with_query: str, body: bytes) -> bytes:
    return f"{timestamp}.{method.upper()}.{path_with_query}.".encode() + body


async def _verify_signature(
    db: Database,
    key_id: int,
    hmac_secret_encrypted: str,
    signature: str | None,
    timestamp: str | None,
    method: str,
    path_with_query: str,
    body: bytes,
) -> None:
    if not signature or not timestamp:
        raise Unauthorized(
            "this key requires signed requests: send X-Service-Signature and X-Service-Timestamp"
        )
    try:
        ts = int(timestamp)
    except ValueError:
        raise Unauthorized(f"X-Service-Timestamp must be Unix seconds, got {timestamp!r}") from None
    if abs(int(time.time()) - ts) > SIGNATURE_WINDOW_S:  # ints: a huge ts must not overflow
        raise Unauthorized("stale request timestamp: more than 300 seconds from server time")
    hmac_secret = crypto.decrypt(hmac_secret_encrypted, master_key(), context=HMAC_CONTEXT)
    expected = crypto.hmac_hex(hmac_secret, canonical(timestamp, method, path_with_query, body))
    if not crypto.same(signature.lower(), expected):
        raise Unauthorized("invalid request signature")
    now = dt.datetime.now(dt.UTC)

    async def remember(session: AsyncSession) -> None:
        await session.execute(
            delete(SeenSignature).where(
                SeenSignature.seen_at < now - dt.timedelta(seconds=2 * SIGNATURE_WINDOW_S)
            )
        )
        await session.execute(
            insert(SeenSignature).values(signature=expected, key_id=key_id, seen_at=now)
        )

    try:
        await db.write(remember, attempts=1)
    except IntegrityError:
        raise Unauthorized("replayed request signature: each signature is accepted once") from None
