"""one admin email per company: a unique index on lower(email) of admins

Admin login finds the company by the email alone, so an email shared by the
admins of two companies logged into whichever came first. The partial unique
index ``uq_users_admin_email`` on ``lower(email) WHERE user_type = 'admin'`` makes
the database refuse a second one, whatever the case (customers and suppliers,
in the same table, may share addresses).

A database made before this rule may already hold such duplicates, and the
migration must not fail on them. The oldest admin (lowest id) keeps the address;
each later one is renamed ``local+duplicate-<user id>@domain`` (which most mail
servers still deliver to the same mailbox), and a warning names the company, the
user and the new address, so the operator can tell that admin which email to log
in with. Duplicates are found with the database's own ``lower()``, the function the
index uses, so the index can always be built afterwards. The downgrade drops the
index and leaves the renamed addresses as they are.

Revision ID: 346f67e16cd4
Revises: 56059980b159
Create Date: 2026-11-24 09:00:00.000000
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "346f67e16cd4"
down_revision: str | None = "56059980b159"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

log = logging.getLogger("alembic.runtime.migration")

INDEX = "uq_users_admin_email"
ADMINS = "user_type = 'admin'"
EMAIL_LENGTH = 200  # users.email is VARCHAR(200)


def _renamed(bind: sa.Connection, email: str, user_id: int) -> str:
    """``local+duplicate-<id>@domain``, cut to fit the column, not yet used by any admin."""
    local, at, domain = email.rpartition("@")
    if not at:
        local, domain = email, ""
    for attempt in range(100):
        tag = f"+duplicate-{user_id}" + (f"-{attempt}" if attempt else "")
        room = EMAIL_LENGTH - len(tag) - len(at) - len(domain)
        candidate = f"{local[: max(room, 0)]}{tag}{at}{domain}"[:EMAIL_LENGTH]
        taken = bind.execute(
            sa.text(f"SELECT 1 FROM users WHERE {ADMINS} AND lower(email) = lower(:email)"),
            {"email": candidate},
        ).first()
        if taken is None:
            return candidate
    raise RuntimeError(f"no free address to rename admin user {user_id} to")


def upgrade() -> None:
    bind = op.get_bind()
    rows = bind.execute(
        sa.text(
            f"SELECT id, company_id, email, lower(email) FROM users "
            f"WHERE {ADMINS} AND email IS NOT NULL ORDER BY id"
        )
    ).all()
    keeper: dict[str, tuple[int, int]] = {}  # lower(email) -> (user id, company id)
    for user_id, company_id, email, folded in rows:
        if folded not in keeper:
            keeper[folded] = (user_id, company_id)
            continue
        new = _renamed(bind, email, user_id)
        bind.execute(
            sa.text("UPDATE users SET email = :email WHERE id = :id"),
            {"email": new, "id": user_id},
        )
        log.warning(
            "admin user %s of company %s had the admin email of company %s (user %s); "
            "renamed to %s: each admin email now belongs to one company",
            user_id,
            company_id,
            keeper[folded][1],
            keeper[folded][0],
            new,
        )
    op.create_index(
        INDEX,
        "users",
        [sa.text("lower(email)")],
        unique=True,
        sqlite_where=sa.text(ADMINS),
        postgresql_where=sa.text(ADMINS),
    )


def downgrade() -> None:
    op.drop_index(INDEX, table_name="users")
