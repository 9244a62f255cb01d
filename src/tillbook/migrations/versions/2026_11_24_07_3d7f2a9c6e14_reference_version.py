"""companies.reference_version: a counter of reference-data changes

Bumped in the transaction of every change to a company's taxes, payment modes,
units, categories, brands, expense categories and warehouses; read with the API key
on every request, so per-process caches of taxes and payment modes are keyed by it
and never serve a rate or mode another process has changed.

Revision ID: 3d7f2a9c6e14
Revises: e61c0f3d9a57
Create Date: 2026-11-25 07:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "3d7f2a9c6e14"
down_revision: str | None = "e61c0f3d9a57"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("companies") as batch:
        batch.add_column(
            sa.Column("reference_version", sa.Integer(), nullable=False, server_default="0")
        )


def downgrade() -> None:
    with op.batch_alter_table("companies") as batch:
        batch.drop_column("reference_version")
