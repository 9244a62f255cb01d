"""product barcodes: an index on (company_id, product_id)

A page of products (the list, the change feed) reads its barcodes by company and
the page's product ids. With an index on each column alone, SQLite's planner chose
between them by its statistics: on a database of many small companies (the average
company holding a handful of barcodes) it read a large company's page through
every barcode of that company. One index on both columns serves the condition
whatever the statistics say, on SQLite and PostgreSQL alike.

Revision ID: c5e1b7d3a924
Revises: e8c4a2d6f195
Create Date: 2026-11-27 20:20:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "c5e1b7d3a924"
down_revision: str | None = "e8c4a2d6f195"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        "ix_product_barcodes_company_product", "product_barcodes", ["company_id", "product_id"]
    )


def downgrade() -> None:
    op.drop_index("ix_product_barcodes_company_product", table_name="product_barcodes")
