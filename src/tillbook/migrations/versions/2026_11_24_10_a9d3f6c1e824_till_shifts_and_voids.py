"""till shifts and voids

- ``shifts``, ``shift_cash`` and ``shift_counts``: a register's shift from its
  opening float to its counted close, the cash put in and taken out of its drawer,
  and what the close counted per payment mode; at most one open shift per register
  of a warehouse (partial unique index ``uq_shifts_open_register``).
- ``orders.shift_id`` and ``payments.shift_id``: the shift an order was made in and
  a payment taken or given in; ``orders.void_reason``, ``voided_at`` and
  ``void_shift_id`` for a voided sale.
- ``warehouses.require_shift``: sales there need an open shift.
- Account 52500 Cash Over/Short, where a close posts what the counts differ from
  what was expected, added to every company's chart that lacks it.

Revision ID: a9d3f6c1e824
Revises: b7c4d2e9f013
Create Date: 2026-11-26 09:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "a9d3f6c1e824"
down_revision: str | None = "b7c4d2e9f013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
MONEY = sa.Numeric(18, 2)


def upgrade() -> None:
    op.create_table(
        "shifts",
        sa.Column("id", BigId, autoincrement=True, nullable=False),
        sa.Column("company_id", BigId, nullable=False),
        sa.Column("warehouse_id", BigId, nullable=False),
        sa.Column("register", sa.String(length=50), nullable=False),
        sa.Column("status", sa.String(length=10), nullable=False),
        sa.Column("cash_mode_id", BigId, nullable=False),
        sa.Column("opening_float", MONEY, nullable=False),
        sa.Column("opened_by", BigId, nullable=True),
        sa.Column(
            "opened_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.Column("closed_by", BigId, nullable=True),
        sa.Column("closed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("sales_count", sa.Integer(), server_default="0", nullable=False),
        sa.Column("notes", sa.Text(), nullable=False),
        sa.Column("journal_entry_id", BigId, nullable=True),
        sa.ForeignKeyConstraint(
            ["company_id"], ["companies.id"], name=op.f("fk_shifts_company_id_companies")
        ),
        sa.ForeignKeyConstraint(
            ["warehouse_id"], ["warehouses.id"], name=op.f("fk_shifts_warehouse_id_warehouses")
        ),
        sa.ForeignKeyConstraint(
            ["cash_mode_id"],
            ["payment_modes.id"],
            name=op.f("fk_shifts_cash_mode_id_payment_modes"),
        ),
        sa.ForeignKeyConstraint(
            ["opened_by"], ["users.id"], name=op.f("fk_shifts_opened_by_users")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_shifts")),
    )
    op.create_index(op.f("ix_shifts_company_id"), "shifts", ["company_id"])
    op.create_index(op.f("ix_shifts_warehouse_id"), "shifts", ["warehouse_id"])
    op.create_index("ix_shifts_wh_id", "shifts", ["warehouse_id", "id"])
    op.create_index(
        "uq_shifts_open_register",
        "shifts",
        ["warehouse_id", "register"],
        unique=True,
        sqlite_where=sa.text("status = 'open'"),
        postgresql_where=sa.text("status = 'open'"),
    )
    op.create_table(
        "shift_cash",
        sa.Column("id", BigId, autoincrement=True, nullable=False),
        sa.Column("company_id", BigId, nullable=False),
        sa.Column("shift_id", BigId, nullable=False),
        sa.Column("direction", sa.String(length=5), nullable=False),
        sa.Column("amount", MONEY, nullable=False),
        sa.Column("reason", sa.String(length=500), nullable=False),
        sa.Column("expense_id", BigId, nullable=True),
        sa.Column("payment_mode_id", BigId, nullable=True),
        sa.Column("journal_entry_id", BigId, nullable=True),
        sa.Column("created_by", BigId, nullable=True),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.ForeignKeyConstraint(
            ["company_id"], ["companies.id"], name=op.f("fk_shift_cash_company_id_companies")
        ),
        sa.ForeignKeyConstraint(
            ["shift_id"], ["shifts.id"], name=op.f("fk_shift_cash_shift_id_shifts")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_shift_cash")),
    )
    op.create_index(op.f("ix_shift_cash_company_id"), "shift_cash", ["company_id"])
    op.create_index(op.f("ix_shift_cash_shift_id"), "shift_cash", ["shift_id"])
    op.create_table(
        "shift_counts",
        sa.Column("id", BigId, autoincrement=True, nullable=False),
        sa.Column("shift_id", BigId, nullable=False),
        sa.Column("payment_mode_id", BigId, nullable=False),
        sa.Column("expected", MONEY, nullable=False),
        sa.Column("counted", MONEY, nullable=False),
        sa.ForeignKeyConstraint(
            ["shift_id"], ["shifts.id"], name=op.f("fk_shift_counts_shift_id_shifts")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_shift_counts")),
    )
    op.create_index(op.f("ix_shift_counts_shift_id"), "shift_counts", ["shift_id"])
    with op.batch_alter_table("orders") as batch:
        batch.add_column(sa.Column("shift_id", BigId, nullable=True))
        batch.add_column(sa.Column("void_reason", sa.String(length=500), nullable=True))
        batch.add_column(sa.Column("voided_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("void_shift_id", BigId, nullable=True))
        batch.create_foreign_key(op.f("fk_orders_shift_id_shifts"), "shifts", ["shift_id"], ["id"])
    with op.batch_alter_table("payments") as batch:
        batch.add_column(sa.Column("shift_id", BigId, nullable=True))
        batch.create_index(op.f("ix_payments_shift_id"), ["shift_id"])
    with op.batch_alter_table("warehouses") as batch:
        batch.add_column(
            sa.Column("require_shift", sa.Boolean(), server_default=sa.false(), nullable=False)
        )
    op.execute(
        "INSERT INTO accounts (company_id, code, name, type, parent_code, is_posting) "
        "SELECT c.id, '52500', 'Cash Over/Short', 'expense', NULL, "
        + ("true" if op.get_bind().dialect.name == "postgresql" else "1")
        + " FROM companies c WHERE NOT EXISTS (SELECT 1 FROM accounts a "
        "WHERE a.company_id = c.id AND a.code = '52500')"
    )


def downgrade() -> None:
    op.execute(
        "DELETE FROM accounts WHERE code = '52500' AND NOT EXISTS "
        "(SELECT 1 FROM journal_lines l WHERE l.account_id = accounts.id) "
        "AND NOT EXISTS (SELECT 1 FROM payment_modes m WHERE m.account_id = accounts.id) "
        "AND NOT EXISTS (SELECT 1 FROM expense_categories e WHERE e.account_id = accounts.id)"
    )
    with op.batch_alter_table("warehouses") as batch:
        batch.drop_column("require_shift")
    with op.batch_alter_table("payments") as batch:
        batch.drop_index(op.f("ix_payments_shift_id"))
        batch.drop_column("shift_id")
    with op.batch_alter_table("orders") as batch:
        batch.drop_constraint(op.f("fk_orders_shift_id_shifts"), type_="foreignkey")
        batch.drop_column("void_shift_id")
        batch.drop_column("voided_at")
        batch.drop_column("void_reason")
        batch.drop_column("shift_id")
    op.drop_table("shift_counts")
    op.drop_table("shift_cash")
    op.drop_index("uq_shifts_open_register", table_name="shifts")
    op.drop_table("shifts")
