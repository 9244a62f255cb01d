"""editable set-up records: versions, archiving, party and branch details, staff roles

Every record the back office edits gains ``version`` (optimistic concurrency) and
``archived_at`` (a record with history is archived, never deleted). Customers and
suppliers gain their code, tax number, address and credit limit; warehouses their
address, phone and receipt header and footer; staff users their role.

Revision ID: 8b3e5f1a7c42
Revises: 5a0d1e7c2b90
Create Date: 2026-11-24 07:05:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "8b3e5f1a7c42"
down_revision: str | None = "5a0d1e7c2b90"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

EDITABLE = (
    "users",
    "warehouses",
    "units",
    "categories",
    "brands",
    "taxes",
    "payment_modes",
    "expense_categories",
)


def upgrade() -> None:
    for table in EDITABLE:
        with op.batch_alter_table(table) as batch:
            batch.add_column(sa.Column("version", sa.Integer(), nullable=False, server_default="1"))
            batch.add_column(sa.Column("archived_at", sa.DateTime(timezone=True), nullable=True))
    with op.batch_alter_table("users") as batch:
        batch.add_column(sa.Column("code", sa.String(50), nullable=True))
        batch.add_column(sa.Column("tax_number", sa.String(50), nullable=True))
        batch.add_column(sa.Column("address", sa.String(500), nullable=True))
        batch.add_column(sa.Column("credit_limit", sa.Numeric(18, 2), nullable=True))
        batch.add_column(sa.Column("role", sa.String(20), nullable=True))
    op.create_index(
        "uq_users_company_type_code", "users", ["company_id", "user_type", "code"], unique=True
    )
    with op.batch_alter_table("warehouses") as batch:
        batch.add_column(sa.Column("address", sa.String(500), nullable=True))
        batch.add_column(sa.Column("phone", sa.String(50), nullable=True))
        batch.add_column(sa.Column("receipt_header", sa.String(500), nullable=True))
        batch.add_column(sa.Column("receipt_footer", sa.String(500), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("warehouses") as batch:
        for column in ("receipt_footer", "receipt_header", "phone", "address"):
            batch.drop_column(column)
    op.drop_index("uq_users_company_type_code", table_name="users")
    with op.batch_alter_table("users") as batch:
        for column in ("role", "credit_limit", "address", "tax_number", "code"):
            batch.drop_column(column)
    for table in EDITABLE:
        with op.batch_alter_table(table) as batch:
            batch.drop_column("archived_at")
            batch.drop_column("version")
