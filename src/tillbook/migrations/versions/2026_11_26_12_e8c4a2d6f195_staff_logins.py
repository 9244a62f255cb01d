"""staff logins: one staff email across every company, in a table of its own

A staff email is one login across every company (back-office login finds the
company by the email alone). Until now the unique index ``uq_users_staff_email``
on ``lower(email)`` of ``users`` held it; a rule over every tenant cannot stay on
a table distributed by tenant (DESIGN §17: a distributed table's unique keys
include ``company_id``), so it moves to ``staff_logins``, keyed by the lower-cased
email, a coordinator table (``models/base.py``), filled here from the staff who
have an email. The staff service keeps it in the transaction that sets an email.

Downgrade puts the index back and drops the table.

Revision ID: e8c4a2d6f195
Revises: d3b9e6a1c724
Create Date: 2026-11-26 19:45:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "e8c4a2d6f195"
down_revision: str | None = "d3b9e6a1c724"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "staff_logins",
        sa.Column("email", sa.String(200), nullable=False),
        sa.Column("company_id", BigId, nullable=False),
        sa.Column("user_id", BigId, nullable=False),
        sa.PrimaryKeyConstraint("email", name="pk_staff_logins"),
    )
    op.execute(
        "INSERT INTO staff_logins (email, company_id, user_id) "
        "SELECT lower(email), company_id, id FROM users "
        "WHERE user_type = 'staff' AND email IS NOT NULL"
    )
    op.drop_index("uq_users_staff_email", table_name="users")


def downgrade() -> None:
    staff = sa.text("user_type = 'staff'")
    op.create_index(
        "uq_users_staff_email",
        "users",
        [sa.text("lower(email)")],
        unique=True,
        sqlite_where=staff,
        postgresql_where=staff,
    )
    op.drop_table("staff_logins")
