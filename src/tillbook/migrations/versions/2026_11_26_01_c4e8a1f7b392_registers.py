"""registers: devices paired to a branch, staff PINs, shift references

- ``registers``: one paired device per row (its API key, prefix, last report).
- ``users.pin_hash``: a staff member's register PIN (PBKDF2-SHA256).
- ``shifts.reference``: the register's own shift reference, unique per warehouse.

Revision ID: c4e8a1f7b392
Revises: a7c3e9f1d5b2
Create Date: 2026-11-26 09:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "c4e8a1f7b392"
down_revision: str | None = "a7c3e9f1d5b2"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "registers",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("company_id", BigId, nullable=False),
        sa.Column("warehouse_id", BigId, nullable=False),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("prefix", sa.String(10), nullable=False),
        sa.Column("key_id", BigId, nullable=False),
        sa.Column("created_by", BigId, nullable=True),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()
        ),
        sa.Column("last_seen_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("queued", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("attention", sa.Text(), nullable=False, server_default="[]"),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["company_id"], ["companies.id"], name=op.f("fk_registers_company_id_companies")
        ),
        sa.ForeignKeyConstraint(
            ["warehouse_id"], ["warehouses.id"], name=op.f("fk_registers_warehouse_id_warehouses")
        ),
        sa.ForeignKeyConstraint(
            ["key_id"], ["api_keys.id"], name=op.f("fk_registers_key_id_api_keys")
        ),
        sa.ForeignKeyConstraint(
            ["created_by"], ["users.id"], name=op.f("fk_registers_created_by_users")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_registers")),
        sa.UniqueConstraint("company_id", "prefix", name="uq_registers_company_prefix"),
        sa.UniqueConstraint("company_id", "number", name="uq_registers_company_number"),
        sa.UniqueConstraint("key_id", name=op.f("uq_registers_key_id")),
    )
    op.create_index(op.f("ix_registers_company_id"), "registers", ["company_id"])
    op.create_index(op.f("ix_registers_warehouse_id"), "registers", ["warehouse_id"])
    op.add_column("users", sa.Column("pin_hash", sa.String(200), nullable=True))
    op.add_column("shifts", sa.Column("reference", sa.String(50), nullable=True))
    op.create_index("uq_shifts_wh_reference", "shifts", ["warehouse_id", "reference"], unique=True)


def downgrade() -> None:
    # Plain ALTER TABLE … DROP COLUMN (SQLite 3.35+): a batch copy of the table would
    # lose the expression and partial indexes it cannot reflect (uq_users_staff_email,
    # uq_shifts_open_register).
    op.drop_index("uq_shifts_wh_reference", table_name="shifts")
    op.drop_column("shifts", "reference")
    op.drop_column("users", "pin_hash")
    op.drop_index(op.f("ix_registers_warehouse_id"), table_name="registers")
    op.drop_index(op.f("ix_registers_company_id"), table_name="registers")
    op.drop_table("registers")
