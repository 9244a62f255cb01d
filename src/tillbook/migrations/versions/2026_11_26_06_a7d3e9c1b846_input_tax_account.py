"""11800 Input Tax Recoverable in every company's chart

A purchase line may now carry the tax the supplier charged: the stock takes the
cost net of it and the tax is an asset until it is reclaimed, on 11800 Input Tax
Recoverable (a posting asset account at the top level, like 11700). New
companies get it with the standard chart; this adds it to every company that
lacks it. No amounts move: every purchase so far was posted without tax.

Revision ID: a7d3e9c1b846
Revises: f3d1a8c6b205
Create Date: 2026-11-26 13:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "a7d3e9c1b846"
down_revision: str | None = "f3d1a8c6b205"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

INPUT_TAX_CODE = "11800"

companies = sa.table("companies", sa.column("id", sa.BigInteger))
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


def upgrade() -> None:
    bind = op.get_bind()
    having = sa.select(accounts.c.company_id).where(accounts.c.code == INPUT_TAX_CODE)
    lacking = bind.execute(
        sa.select(companies.c.id).where(companies.c.id.not_in(having)).order_by(companies.c.id)
    ).scalars()
    for company_id in list(lacking):
        bind.execute(
            sa.insert(accounts).values(
                company_id=company_id,
                code=INPUT_TAX_CODE,
                name="Input Tax Recoverable",
                type="asset",
                parent_code=None,
                is_posting=True,
            )
        )


def downgrade() -> None:
    # The account stays: journal lines may name it.
    pass
