"""API keys, idempotency records, seen request signatures, admin sessions."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import (
    Boolean,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from tillbook.models.base import (
    Base,
    BigId,
    company_ref,
    created,
    opt_warehouse_ref,
    pk,
    refers,
    warehouse_ref,
)


class ApiKey(Base):
    """A key pair bound to one warehouse. The secret is kept twice: a SHA-256 digest
    compared in constant time on every request, and an AES-GCM ciphertext that only
    ``keys reveal`` (with the admin password) decrypts. After a rotation with a grace
    period the replaced secrets (``previous_*``) keep working until
    ``previous_valid_until``."""

    __tablename__ = "api_keys"
    # Unique with the tenant key (DESIGN §17); the public key is random (128 bits),
    # so it is unique across tenants by construction, and the lookup by it alone
    # still reads this index's first column.
    __table_args__ = (UniqueConstraint("public_key", "company_id", name="uq_api_keys_public_key"),)

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    warehouse_id: Mapped[warehouse_ref]
    user_id: Mapped[int] = mapped_column(BigId, info=refers("users"))
    name: Mapped[str] = mapped_column(String(200))
    public_key: Mapped[str] = mapped_column(String(100))
    secret_digest: Mapped[str] = mapped_column(String(64))
    secret_encrypted: Mapped[str] = mapped_column(Text)
    hmac_secret_encrypted: Mapped[str] = mapped_column(Text)
    rate_limit: Mapped[str] = mapped_column(String(30), default="600/minute")
    require_signature: Mapped[bool] = mapped_column(Boolean, default=False)
    status: Mapped[int] = mapped_column(Integer, default=1)
    created_at: Mapped[created]
    revoked_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    previous_secret_digest: Mapped[str | None] = mapped_column(String(64), nullable=True)
    previous_hmac_secret_encrypted: Mapped[str | None] = mapped_column(Text, nullable=True)
    previous_valid_until: Mapped[dt.datetime | None] = mapped_column(
        DateTime(timezone=True), nullable=True
    )


class IdempotencyRecord(Base):
    """Inserted first in a write transaction, completed with the response at its end.

    A public API token belongs to the key's warehouse (``warehouse_id``); a
    back-office token to the session's company (``warehouse_id`` NULL): each scope
    has its own unique index. ``company_id`` is always set (the tenant key, DESIGN
    §17)."""

    __tablename__ = "idempotency_records"
    __table_args__ = (
        UniqueConstraint("warehouse_id", "token", "company_id", name="uq_idempotency_token"),
        Index(
            "uq_idempotency_company_token",
            "company_id",
            "token",
            unique=True,
            sqlite_where=text("warehouse_id IS NULL"),
            postgresql_where=text("warehouse_id IS NULL"),
        ),
    )

    id: Mapped[pk]
    warehouse_id: Mapped[opt_warehouse_ref]
    # No index of its own: both unique indexes lead with or include it.
    company_id: Mapped[int] = mapped_column(BigId, ForeignKey("companies.id"))
    token: Mapped[str] = mapped_column(String(255))
    request_hash: Mapped[str] = mapped_column(String(64))
    response_status: Mapped[int | None] = mapped_column(Integer, nullable=True)
    response_body: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))


class SeenSignature(Base):
    """Signatures accepted within the clock-drift window, to refuse replays."""

    __tablename__ = "seen_signatures"

    signature: Mapped[str] = mapped_column(String(64), primary_key=True)
    key_id: Mapped[int] = mapped_column(BigId)
    seen_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), index=True)


class AdminSession(Base):
    __tablename__ = "admin_sessions"
    # With the tenant key (DESIGN §17): the token is random, its digest unique
    # across tenants by construction; the cookie's lookup reads the first column.
    __table_args__ = (
        UniqueConstraint("token_digest", "company_id", name="uq_admin_sessions_token_digest"),
    )

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    user_id: Mapped[int] = mapped_column(BigId, info=refers("users"))
    token_digest: Mapped[str] = mapped_column(String(64))
    expires_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    created_at: Mapped[created]


__all__ = ["AdminSession", "ApiKey", "IdempotencyRecord", "SeenSignature"]
