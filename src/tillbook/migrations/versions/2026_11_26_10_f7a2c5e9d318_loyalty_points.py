"""loyalty points: a programme per company, points per customer, a Loyalty mode

- ``loyalty_programmes`` (one per company: the base amount that earns a point,
  what a point is worth, whether it runs), ``loyalty_accounts`` (one customer's
  whole points) and ``loyalty_movements`` (every change of them, naming its order
  and journal entry, with the value 21400 moved).
- A payment mode coded ``loyalty`` posting to 21400 Loyalty Points for every
  company without one (21400 is in every chart since the gift cards' migration):
  a tender in it redeems points, a refund in it gives them back. The company's
  ``reference_version`` moves on, so no process keeps a copy of its modes without
  the new one. New tables and rows only: no amounts move.

Revision ID: f7a2c5e9d318
Revises: b4e8f2a6c913
Create Date: 2026-11-26 16:30:00
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "f7a2c5e9d318"
down_revision: str | None = "b4e8f2a6c913"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
MONEY = sa.Numeric(18, 2)
LOYALTY_POINTS = "21400"

companies = sa.table(
    "companies", sa.column("id", sa.BigInteger), sa.column("reference_version", sa.Integer)
)
accounts = sa.table(
    "accounts",
    sa.column("id", sa.BigInteger),
    sa.column("company_id", sa.BigInteger),
    sa.column("code", sa.String),
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


def _created() -> sa.Column[dt.datetime]:
    return sa.Column(
        "created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
    )


def upgrade() -> None:
    op.create_table(
        "loyalty_programmes",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("company_id", BigId, sa.ForeignKey("companies.id"), nullable=False),
        sa.Column("earn_unit", MONEY, nullable=False),
        sa.Column("point_value", MONEY, nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("updated_by", BigId, nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=True),
        _created(),
        sa.UniqueConstraint("company_id", name="uq_loyalty_programmes_company"),
        sa.CheckConstraint(
            "earn_unit > 0", name="ck_loyalty_programmes_loyalty_earn_unit_positive"
        ),
        sa.CheckConstraint(
            "point_value > 0", name="ck_loyalty_programmes_loyalty_point_value_positive"
        ),
    )
    op.create_index("ix_loyalty_programmes_company_id", "loyalty_programmes", ["company_id"])
    op.create_table(
        "loyalty_accounts",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("company_id", BigId, sa.ForeignKey("companies.id"), nullable=False),
        sa.Column("customer_id", BigId, sa.ForeignKey("users.id"), nullable=False),
        sa.Column("points", sa.BigInteger(), nullable=False),
        _created(),
        sa.UniqueConstraint("company_id", "customer_id", name="uq_loyalty_accounts"),
    )
    op.create_index("ix_loyalty_accounts_company_id", "loyalty_accounts", ["company_id"])
    op.create_index("ix_loyalty_accounts_customer_id", "loyalty_accounts", ["customer_id"])
    op.create_table(
        "loyalty_movements",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("company_id", BigId, sa.ForeignKey("companies.id"), nullable=False),
        sa.Column("account_id", BigId, sa.ForeignKey("loyalty_accounts.id"), nullable=False),
        sa.Column("warehouse_id", BigId, sa.ForeignKey("warehouses.id"), nullable=True),
        sa.Column("kind", sa.String(10), nullable=False),
        sa.Column("points", sa.BigInteger(), nullable=False),
        sa.Column("points_after", sa.BigInteger(), nullable=False),
        sa.Column("value", MONEY, nullable=False),
        sa.Column("order_id", BigId, sa.ForeignKey("orders.id"), nullable=True),
        sa.Column("journal_entry_id", BigId, nullable=True),
        sa.Column("created_by", BigId, nullable=True),
        _created(),
    )
    op.create_index("ix_loyalty_movements_company_id", "loyalty_movements", ["company_id"])
    op.create_index("ix_loyalty_movements_account", "loyalty_movements", ["account_id", "id"])
    op.create_index("ix_loyalty_movements_order_id", "loyalty_movements", ["order_id"])
    op.create_index("ix_loyalty_movements_warehouse_id", "loyalty_movements", ["warehouse_id"])

    bind = op.get_bind()
    with_mode = sa.select(modes.c.company_id).where(modes.c.code == "loyalty")
    lacking = bind.execute(
        sa.select(companies.c.id).where(companies.c.id.not_in(with_mode)).order_by(companies.c.id)
    ).scalars()
    for company_id in list(lacking):
        account_id = bind.execute(
            sa.select(accounts.c.id).where(
                accounts.c.company_id == company_id, accounts.c.code == LOYALTY_POINTS
            )
        ).scalar_one_or_none()
        if account_id is None:  # a chart without 21400 cannot hold points
            continue
        bind.execute(
            sa.insert(modes).values(
                company_id=company_id,
                code="loyalty",
                name="Loyalty points",
                account_id=account_id,
                version=1,
            )
        )
        bind.execute(
            sa.update(companies)
            .where(companies.c.id == company_id)
            .values(reference_version=companies.c.reference_version + 1)
        )


def downgrade() -> None:
    # The mode stays: payments may name it.
    op.drop_table("loyalty_movements")
    op.drop_table("loyalty_accounts")
    op.drop_table("loyalty_programmes")
