"""purchase orders: ordered from a supplier, received in parts

- ``purchase_orders``: one order to a supplier for one branch (draft, ordered,
  partially_received, received, closed, cancelled), its number (``PO-00001`` per
  branch) and the expected total. Nothing is posted: the books move on receipt.
- ``purchase_order_lines``: a product ordered (base units), the expected unit cost
  and how much has been received so far.
- ``purchase_order_receipts``: the purchases received against an order.

Revision ID: e5a7c3d9f142
Revises: b4e8d2f6a913
Create Date: 2026-11-26 12:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "e5a7c3d9f142"
down_revision: str | None = "b4e8d2f6a913"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
MONEY = sa.Numeric(18, 2)
PRICE = sa.Numeric(18, 4)
QTY = sa.Numeric(18, 4)


def upgrade() -> None:
    op.create_table(
        "purchase_orders",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("company_id", BigId, sa.ForeignKey("companies.id"), nullable=False),
        sa.Column("warehouse_id", BigId, sa.ForeignKey("warehouses.id"), nullable=False),
        sa.Column("supplier_id", BigId, sa.ForeignKey("users.id"), nullable=False),
        sa.Column("number", sa.String(30), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("order_date", sa.Date(), nullable=False),
        sa.Column("expected_date", sa.Date(), nullable=True),
        sa.Column("notes", sa.Text(), nullable=False),
        sa.Column("total", MONEY, nullable=False),
        sa.Column("created_by", BigId, sa.ForeignKey("users.id"), nullable=True),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.Column("ordered_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("closed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("closed_by", BigId, sa.ForeignKey("users.id"), nullable=True),
        sa.Column("close_reason", sa.String(500), nullable=False),
        sa.UniqueConstraint("warehouse_id", "number", name="uq_purchase_orders_number"),
    )
    op.create_index("ix_purchase_orders_company_id", "purchase_orders", ["company_id"])
    op.create_index("ix_purchase_orders_warehouse_id", "purchase_orders", ["warehouse_id"])
    op.create_index("ix_purchase_orders_wh_id", "purchase_orders", ["warehouse_id", "id"])
    op.create_index("ix_purchase_orders_supplier", "purchase_orders", ["supplier_id", "status"])
    op.create_table(
        "purchase_order_lines",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("company_id", BigId, sa.ForeignKey("companies.id"), nullable=False),
        sa.Column("purchase_order_id", BigId, sa.ForeignKey("purchase_orders.id"), nullable=False),
        sa.Column("product_id", BigId, sa.ForeignKey("products.id"), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("quantity", QTY, nullable=False),
        sa.Column("unit_cost", PRICE, nullable=False),
        sa.Column("received", QTY, nullable=False),
        sa.UniqueConstraint("purchase_order_id", "product_id", name="uq_purchase_order_lines"),
    )
    op.create_index("ix_purchase_order_lines_company_id", "purchase_order_lines", ["company_id"])
    op.create_index(
        "ix_purchase_order_lines_purchase_order_id", "purchase_order_lines", ["purchase_order_id"]
    )
    op.create_table(
        "purchase_order_receipts",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("company_id", BigId, sa.ForeignKey("companies.id"), nullable=False),
        sa.Column("purchase_order_id", BigId, sa.ForeignKey("purchase_orders.id"), nullable=False),
        sa.Column("order_id", BigId, sa.ForeignKey("orders.id"), nullable=False),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.UniqueConstraint("order_id", name="uq_purchase_order_receipts_order_id"),
    )
    op.create_index(
        "ix_purchase_order_receipts_company_id", "purchase_order_receipts", ["company_id"]
    )
    op.create_index(
        "ix_purchase_order_receipts_purchase_order_id",
        "purchase_order_receipts",
        ["purchase_order_id"],
    )


def downgrade() -> None:
    op.drop_table("purchase_order_receipts")
    op.drop_table("purchase_order_lines")
    op.drop_table("purchase_orders")
