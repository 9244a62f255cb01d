"""foreign currency: enabled currencies, exchange rates, documents and lines in them

- ``company_currencies``: a currency a company trades in besides its base one.
- ``exchange_rates``: the company's rates (base units per foreign unit) by date,
  insert-only (a correction is a new row; the latest entered wins from then on).
- ``journal_lines``: ``currency``, ``amount_foreign``, ``rate`` of a line converted
  from a foreign document (NULL on base lines).
- ``orders``: ``currency``, ``exchange_rate``, ``base_total``, ``base_due``;
  ``payments``: ``currency``, ``exchange_rate``; ``expenses``: ``currency``,
  ``exchange_rate``, ``base_amount``. NULL on base-currency documents, so every
  existing row stays as it was.

Revision ID: f3d1a8c6b205
Revises: e5a7c3d9f142
Create Date: 2026-11-26 13:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "f3d1a8c6b205"
down_revision: str | None = "e5a7c3d9f142"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
MONEY = sa.Numeric(18, 2)
FX_RATE = sa.Numeric(18, 8)


def upgrade() -> None:
    op.create_table(
        "company_currencies",
        sa.Column("company_id", BigId, sa.ForeignKey("companies.id"), primary_key=True),
        sa.Column("code", sa.String(3), primary_key=True),
        sa.Column("minor_units", sa.Integer(), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
    )
    op.create_table(
        "exchange_rates",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("company_id", BigId, sa.ForeignKey("companies.id"), nullable=False),
        sa.Column("currency", sa.String(3), nullable=False),
        sa.Column("rate_date", sa.Date(), nullable=False),
        sa.Column("rate", FX_RATE, nullable=False),
        sa.Column("source", sa.String(20), nullable=False),
        sa.Column("entered_by", BigId, nullable=True),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
    )
    op.create_index(
        "ix_exchange_rates_lookup", "exchange_rates", ["company_id", "currency", "rate_date", "id"]
    )
    # Plain ALTER TABLE on the journal (never a batch copy: the table's triggers
    # that refuse UPDATE and DELETE must survive on SQLite too).
    op.add_column("journal_lines", sa.Column("currency", sa.String(3), nullable=True))
    op.add_column("journal_lines", sa.Column("amount_foreign", MONEY, nullable=True))
    op.add_column("journal_lines", sa.Column("rate", FX_RATE, nullable=True))
    with op.batch_alter_table("orders") as batch:
        batch.add_column(sa.Column("currency", sa.String(3), nullable=True))
        batch.add_column(sa.Column("exchange_rate", FX_RATE, nullable=True))
        batch.add_column(sa.Column("base_total", MONEY, nullable=True))
        batch.add_column(sa.Column("base_due", MONEY, nullable=True))
    with op.batch_alter_table("payments") as batch:
        batch.add_column(sa.Column("currency", sa.String(3), nullable=True))
        batch.add_column(sa.Column("exchange_rate", FX_RATE, nullable=True))
    with op.batch_alter_table("expenses") as batch:
        batch.add_column(sa.Column("currency", sa.String(3), nullable=True))
        batch.add_column(sa.Column("exchange_rate", FX_RATE, nullable=True))
        batch.add_column(sa.Column("base_amount", MONEY, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("expenses") as batch:
        batch.drop_column("base_amount")
        batch.drop_column("exchange_rate")
        batch.drop_column("currency")
    with op.batch_alter_table("payments") as batch:
        batch.drop_column("exchange_rate")
        batch.drop_column("currency")
    with op.batch_alter_table("orders") as batch:
        batch.drop_column("base_due")
        batch.drop_column("base_total")
        batch.drop_column("exchange_rate")
        batch.drop_column("currency")
    for column in ("rate", "amount_foreign", "currency"):
        op.execute(f"ALTER TABLE journal_lines DROP COLUMN {column}")
    op.drop_index("ix_exchange_rates_lookup", table_name="exchange_rates")
    op.drop_table("exchange_rates")
    op.drop_table("company_currencies")
