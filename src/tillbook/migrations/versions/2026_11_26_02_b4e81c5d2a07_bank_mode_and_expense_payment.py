"""a Bank payment mode for every company; a pending expense's later payment

- Every company without a payment mode coded ``bank`` gets one, posting to
  11110 Bank Account under 11100 (the account is added when the company lacks
  it). Paying rent or a supplier by bank transfer, and paying takings into the
  bank, then need no set-up first. The company's ``reference_version`` moves on,
  so no process keeps a copy of its modes without the new one.
- ``expenses.payment_entry_id``, ``paid_on``, ``paid_by``: a pending expense
  approved and paid later names the entry that paid it, its date and who did it.

Revision ID: b4e81c5d2a07
Revises: c4e8a1f7b392
Create Date: 2026-11-26 09:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "b4e81c5d2a07"
down_revision: str | None = "c4e8a1f7b392"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BANK_CODE = "11110"
BIG_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")

companies = sa.table(
    "companies", sa.column("id", sa.BigInteger), sa.column("reference_version", sa.Integer)
)
accounts = sa.table(
    "accounts",
    sa.column("id", sa.BigInteger),
    sa.column("company_id", sa.BigInteger),
    sa.column("code", sa.String),
    sa.column("name", sa.String),
    sa.column("type", sa.String),
    sa.column("parent_code", sa.String),
    sa.column("is_posting", sa.Boolean),
)
modes = sa.table(
    "payment_modes",
    sa.column("id", sa.BigInteger),
    sa.column("company_id", sa.BigInteger),
    sa.column("code", sa.String),
    sa.column("name", sa.String),
    sa.column("account_id", sa.BigInteger),
    sa.column("version", sa.Integer),
)


def upgrade() -> None:
    with op.batch_alter_table("expenses") as batch:
        batch.add_column(sa.Column("payment_entry_id", BIG_ID, nullable=True))
        batch.add_column(sa.Column("paid_on", sa.Date(), nullable=True))
        batch.add_column(sa.Column("paid_by", BIG_ID, nullable=True))

    bind = op.get_bind()
    with_bank = sa.select(modes.c.company_id).where(modes.c.code == "bank")
    lacking = bind.execute(
        sa.select(companies.c.id).where(companies.c.id.not_in(with_bank)).order_by(companies.c.id)
    ).scalars()
    for company_id in list(lacking):
        account_id = bind.execute(
            sa.select(accounts.c.id).where(
                accounts.c.company_id == company_id, accounts.c.code == BANK_CODE
            )
        ).scalar_one_or_none()
        if account_id is None:
            bind.execute(
                sa.insert(accounts).values(
                    company_id=company_id,
                    code=BANK_CODE,
                    name="Bank Account",
                    type="asset",
                    parent_code="11100",
                    is_posting=True,
                )
            )
            account_id = bind.execute(
                sa.select(accounts.c.id).where(
                    accounts.c.company_id == company_id, accounts.c.code == BANK_CODE
                )
            ).scalar_one()
        bind.execute(
            sa.insert(modes).values(
                company_id=company_id, code="bank", name="Bank", account_id=account_id, version=1
            )
        )
        bind.execute(
            sa.update(companies)
            .where(companies.c.id == company_id)
            .values(reference_version=companies.c.reference_version + 1)
        )


def downgrade() -> None:
    # The Bank modes stay: payments may name them.
    with op.batch_alter_table("expenses") as batch:
        batch.drop_column("paid_by")
        batch.drop_column("paid_on")
        batch.drop_column("payment_entry_id")
