"""stock transfers between branches, and change times for offline tills

- ``stock_transfers`` and ``stock_transfer_lines``: stock sent from one branch to
  another, one line per FIFO draw (batch number, expiry and cost kept).
- Account 11750 Goods in Transit, added to every company's chart that lacks it.
- ``updated_at`` on every record the back office edits (users, warehouses, units,
  categories, brands, taxes, payment modes, expense categories; products and
  listings have one already): what ``updated_since`` reads. Existing rows take the
  migration's time, so a till's first delta after it sees them once more.

Revision ID: f2a8c4e6b1d3
Revises: c8e1f0a2d4b6
Create Date: 2026-11-26 09:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "f2a8c4e6b1d3"
down_revision: str | None = "c8e1f0a2d4b6"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
MONEY = sa.Numeric(18, 2)
QTY = sa.Numeric(18, 4)
TRACKED = (
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
    op.create_table(
        "stock_transfers",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("company_id", BigId, sa.ForeignKey("companies.id"), nullable=False),
        sa.Column("from_warehouse_id", BigId, sa.ForeignKey("warehouses.id"), nullable=False),
        sa.Column("to_warehouse_id", BigId, sa.ForeignKey("warehouses.id"), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("notes", sa.Text(), nullable=False),
        sa.Column("value_sent", MONEY, nullable=False),
        sa.Column("value_received", MONEY, nullable=False),
        sa.Column("value_short", MONEY, nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("created_by", BigId, sa.ForeignKey("users.id"), nullable=True),
        sa.Column("closed_by", BigId, sa.ForeignKey("users.id"), nullable=True),
        sa.Column(
            "dispatched_at",
            sa.DateTime(timezone=True),
            server_default=sa.func.now(),
            nullable=False,
        ),
        sa.Column("closed_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index("ix_stock_transfers_company_id", "stock_transfers", ["company_id"])
    op.create_index("ix_stock_transfers_from", "stock_transfers", ["from_warehouse_id", "id"])
    op.create_index("ix_stock_transfers_to", "stock_transfers", ["to_warehouse_id", "id"])
    op.create_table(
        "stock_transfer_lines",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("company_id", BigId, sa.ForeignKey("companies.id"), nullable=False),
        sa.Column("transfer_id", BigId, sa.ForeignKey("stock_transfers.id"), nullable=False),
        sa.Column("product_id", BigId, sa.ForeignKey("products.id"), nullable=False),
        sa.Column("source_batch_id", BigId, sa.ForeignKey("stock_batches.id"), nullable=False),
        sa.Column("batch_number", sa.String(100), nullable=True),
        sa.Column("expiry_date", sa.Date(), nullable=True),
        sa.Column("unit_cost", QTY, nullable=False),
        sa.Column("quantity", QTY, nullable=False),
        sa.Column("value", MONEY, nullable=False),
        sa.Column("quantity_received", QTY, nullable=False),
        sa.Column("value_received", MONEY, nullable=False),
    )
    op.create_index("ix_stock_transfer_lines_company_id", "stock_transfer_lines", ["company_id"])
    op.create_index("ix_stock_transfer_lines_transfer_id", "stock_transfer_lines", ["transfer_id"])
    dialect = op.get_bind().dialect.name
    true = "true" if dialect == "postgresql" else "1"
    op.execute(
        "INSERT INTO accounts (company_id, code, name, type, parent_code, is_posting) "
        f"SELECT c.id, '11750', 'Goods in Transit', 'asset', NULL, {true} "
        "FROM companies c WHERE NOT EXISTS (SELECT 1 FROM accounts a "
        "WHERE a.company_id = c.id AND a.code = '11750')"
    )
    for table in TRACKED:
        if dialect == "postgresql":
            op.add_column(
                table,
                sa.Column(
                    "updated_at",
                    sa.DateTime(timezone=True),
                    server_default=sa.func.now(),
                    nullable=False,
                ),
            )
        else:
            # SQLite adds a column only with a constant default: the rows take the
            # migration's time, and new rows get theirs from the model (the column's
            # ``default``), which every insert of these tables goes through.
            with op.batch_alter_table(table, recreate="never") as batch:
                batch.add_column(
                    sa.Column(
                        "updated_at",
                        sa.DateTime(timezone=True),
                        server_default=sa.text("'1970-01-01 00:00:00'"),
                        nullable=False,
                    )
                )
            op.execute(f"UPDATE {table} SET updated_at = CURRENT_TIMESTAMP")


def downgrade() -> None:
    # A plain DROP COLUMN on both engines (SQLite 3.35+): a batch copy of ``users``
    # would lose its expression indexes, which SQLite cannot reflect.
    for table in TRACKED:
        op.execute(f"ALTER TABLE {table} DROP COLUMN updated_at")
    op.execute(
        "DELETE FROM accounts WHERE code = '11750' AND NOT EXISTS "
        "(SELECT 1 FROM journal_lines l WHERE l.account_id = accounts.id)"
    )
    op.drop_table("stock_transfer_lines")
    op.drop_table("stock_transfers")
