"""stocktakes: count sheets kept as drafts, posted as stock adjustments

- ``stock_counts``: one stocktake of one branch (draft, posted or cancelled), how
  its sheet was drawn up (every product, a category, a chosen list) and, once
  posted, the value of its gains and losses.
- ``stock_count_lines``: a product of the sheet, what was counted, the book stock
  when the count was entered, and the adjustment its difference became.

Revision ID: b4e8d2f6a913
Revises: b4e81c5d2a07
Create Date: 2026-11-26 10:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "b4e8d2f6a913"
down_revision: str | None = "b4e81c5d2a07"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
MONEY = sa.Numeric(18, 2)
QTY = sa.Numeric(18, 4)


def upgrade() -> None:
    op.create_table(
        "stock_counts",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("company_id", BigId, sa.ForeignKey("companies.id"), nullable=False),
        sa.Column("warehouse_id", BigId, sa.ForeignKey("warehouses.id"), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("scope", sa.String(20), nullable=False),
        sa.Column("category_id", BigId, sa.ForeignKey("categories.id"), nullable=True),
        sa.Column("notes", sa.Text(), nullable=False),
        sa.Column("value_gain", MONEY, nullable=False),
        sa.Column("value_loss", MONEY, nullable=False),
        sa.Column("lines_adjusted", sa.Integer(), nullable=False),
        sa.Column("created_by", BigId, sa.ForeignKey("users.id"), nullable=True),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.Column("closed_by", BigId, sa.ForeignKey("users.id"), nullable=True),
        sa.Column("closed_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index("ix_stock_counts_company_id", "stock_counts", ["company_id"])
    op.create_index("ix_stock_counts_wh_id", "stock_counts", ["warehouse_id", "id"])
    op.create_table(
        "stock_count_lines",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("company_id", BigId, sa.ForeignKey("companies.id"), nullable=False),
        sa.Column("count_id", BigId, sa.ForeignKey("stock_counts.id"), nullable=False),
        sa.Column("product_id", BigId, sa.ForeignKey("products.id"), nullable=False),
        sa.Column("counted", QTY, nullable=True),
        sa.Column("expected", QTY, nullable=True),
        sa.Column("counted_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("adjustment_id", BigId, sa.ForeignKey("stock_adjustments.id"), nullable=True),
        sa.Column("difference", QTY, nullable=False),
        sa.Column("cost_amount", MONEY, nullable=False),
        sa.UniqueConstraint("count_id", "product_id", name="uq_stock_count_lines_count_id"),
    )
    op.create_index("ix_stock_count_lines_company_id", "stock_count_lines", ["company_id"])
    op.create_index("ix_stock_count_lines_count_id", "stock_count_lines", ["count_id"])


def downgrade() -> None:
    op.drop_table("stock_count_lines")
    op.drop_table("stock_counts")
