"""a till's delta by index: listings' edit time, products' and movements' by time

A till's delta (the products' change feed from its last ``sync_token``) read every
listing of its branch to filter them by change time, however little had changed: a
listing's change time moves with its stock, on every sale, so it cannot be indexed
without costing each sale its HOT update. The delta now gathers the products that
may have changed from three ranges (``catalog.changes``): products by their change
time, listings by ``edited_at`` (their own edits, not the stock, so sales leave that
index alone) and stock movements by warehouse and time. The movements' index by
warehouse alone becomes the one by warehouse and time, so a movement writes no more
index entries than before. Existing listings start with ``edited_at`` at their
change time, at or after their last edit: a delta may serve them once more, never
less.

Revision ID: b4d8e2f6a915
Revises: c5e1b7d3a924
Create Date: 2026-11-28 11:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "b4d8e2f6a915"
down_revision: str | None = "c5e1b7d3a924"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.add_column(
            "listings",
            sa.Column(
                "edited_at",
                sa.DateTime(timezone=True),
                server_default=sa.func.now(),
                nullable=False,
            ),
        )
    else:
        # SQLite adds a column only with a constant default: new listings get their
        # time from the model (the column's ``default``), as every insert of a listing
        # goes through it (``2026_11_24_12`` did the same for ``updated_at``).
        with op.batch_alter_table("listings", recreate="never") as batch:
            batch.add_column(
                sa.Column(
                    "edited_at",
                    sa.DateTime(timezone=True),
                    server_default=sa.text("'1970-01-01 00:00:00'"),
                    nullable=False,
                )
            )
    op.execute("UPDATE listings SET edited_at = updated_at")
    op.create_index("ix_listings_warehouse_edited", "listings", ["warehouse_id", "edited_at"])
    op.create_index("ix_products_company_updated", "products", ["company_id", "updated_at"])
    op.drop_index("ix_stock_movements_warehouse_id", table_name="stock_movements")
    op.create_index(
        "ix_stock_movements_warehouse_created", "stock_movements", ["warehouse_id", "created_at"]
    )


def downgrade() -> None:
    op.drop_index("ix_stock_movements_warehouse_created", table_name="stock_movements")
    op.create_index("ix_stock_movements_warehouse_id", "stock_movements", ["warehouse_id"])
    op.drop_index("ix_products_company_updated", table_name="products")
    op.drop_index("ix_listings_warehouse_edited", table_name="listings")
    op.execute("ALTER TABLE listings DROP COLUMN edited_at")
