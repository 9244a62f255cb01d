"""an API key's previous secrets, kept for a grace period after a rotation

- ``api_keys.previous_secret_digest``, ``previous_hmac_secret_encrypted``: the
  secrets a rotation replaced, when the owner chose to let them work a while
  longer (a chain's tills switched one by one); NULL otherwise.
- ``api_keys.previous_valid_until``: when they stop.

Revision ID: a7c3e9f1d5b2
Revises: d5e7a9c3b1f4
Create Date: 2026-11-24 15:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "a7c3e9f1d5b2"
down_revision: str | None = "d5e7a9c3b1f4"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("api_keys") as batch:
        batch.add_column(sa.Column("previous_secret_digest", sa.String(64), nullable=True))
        batch.add_column(sa.Column("previous_hmac_secret_encrypted", sa.Text(), nullable=True))
        batch.add_column(
            sa.Column("previous_valid_until", sa.DateTime(timezone=True), nullable=True)
        )


def downgrade() -> None:
    with op.batch_alter_table("api_keys") as batch:
        batch.drop_column("previous_valid_until")
        batch.drop_column("previous_hmac_secret_encrypted")
        batch.drop_column("previous_secret_digest")
