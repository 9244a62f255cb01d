"""staff owners: the company admin becomes a staff member with the owner role

Back-office users are staff with a role (owner, manager, accountant, cashier) and
an optional warehouse. Each company's ``admin`` user becomes a staff ``owner``
(same id, email and password: they log in as before, and everything that names
them, audit events and sessions, still does).

One email, one login: the unique index on ``lower(email)`` that covered admins
(``uq_users_admin_email``, 346f67e16cd4) now covers every staff member
(``uq_users_staff_email``). The former admins' emails are unique already (that
revision renamed duplicates); before this revision no code gave any other staff
row an email (the users API keys act as have none), so the index builds.

Idempotency records gain a second scope: a back-office request's token belongs to
the session's company (``company_id``, with ``warehouse_id`` NULL), unique per
company; the public API's stays per warehouse. The downgrade deletes the
company-scoped records (they cannot be stored per warehouse) and turns owners back
into admins (other staff members keep their rows, without a login index).

Revision ID: d4c7a2f9b613
Revises: 3d7f2a9c6e14
Create Date: 2026-11-25 09:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "d4c7a2f9b613"
down_revision: str | None = "3d7f2a9c6e14"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
ADMINS = "user_type = 'admin'"
STAFF = "user_type = 'staff'"
ADMIN_SCOPE = "warehouse_id IS NULL"


def upgrade() -> None:
    op.drop_index("uq_users_admin_email", table_name="users")
    op.execute(sa.text(f"UPDATE users SET user_type = 'staff', role = 'owner' WHERE {ADMINS}"))
    op.create_index(
        "uq_users_staff_email",
        "users",
        [sa.text("lower(email)")],
        unique=True,
        sqlite_where=sa.text(STAFF),
        postgresql_where=sa.text(STAFF),
    )
    with op.batch_alter_table("idempotency_records") as batch:
        batch.add_column(sa.Column("company_id", BigId, nullable=True))
        batch.alter_column("warehouse_id", existing_type=BigId, nullable=True)
        batch.create_foreign_key(
            "fk_idempotency_records_company_id_companies", "companies", ["company_id"], ["id"]
        )
        batch.create_check_constraint(
            "ck_idempotency_records_one_scope", "(warehouse_id IS NULL) <> (company_id IS NULL)"
        )
    op.create_index(
        "uq_idempotency_company_token",
        "idempotency_records",
        ["company_id", "token"],
        unique=True,
        sqlite_where=sa.text(ADMIN_SCOPE),
        postgresql_where=sa.text(ADMIN_SCOPE),
    )


def downgrade() -> None:
    op.drop_index("uq_idempotency_company_token", table_name="idempotency_records")
    op.execute(sa.text(f"DELETE FROM idempotency_records WHERE {ADMIN_SCOPE}"))
    with op.batch_alter_table("idempotency_records") as batch:
        batch.drop_constraint("ck_idempotency_records_one_scope", type_="check")
        batch.drop_constraint("fk_idempotency_records_company_id_companies", type_="foreignkey")
        batch.alter_column("warehouse_id", existing_type=BigId, nullable=False)
        batch.drop_column("company_id")
    op.drop_index("uq_users_staff_email", table_name="users")
    op.execute(
        sa.text(
            f"UPDATE users SET user_type = 'admin', role = NULL WHERE {STAFF} AND role = 'owner'"
        )
    )
    op.create_index(
        "uq_users_admin_email",
        "users",
        [sa.text("lower(email)")],
        unique=True,
        sqlite_where=sa.text(ADMINS),
        postgresql_where=sa.text(ADMINS),
    )
