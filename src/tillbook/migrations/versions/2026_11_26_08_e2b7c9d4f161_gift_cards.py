"""gift cards and store credit: their tables, three accounts and a Gift Card mode

- ``gift_cards`` (a card's keyed code hash and last four, or a customer's store
  credit; its balance, expiry and status) and ``gift_card_movements`` (every change
  of a balance, naming its order and journal entry).
- 21300 Gift Cards and Store Credit, 21400 Loyalty Points (liabilities) and 41500
  Breakage Income in every company's chart that lacks them (new companies get them
  with the standard chart). No amounts move.
- A payment mode coded ``gift-card`` posting to 21300 for every company without
  one: a tender in it spends a card or store credit, a refund in it credits them.
  The company's ``reference_version`` moves on, so no process keeps a copy of its
  modes without the new one.

Revision ID: e2b7c9d4f161
Revises: c9e2f4a7d318
Create Date: 2026-11-26 15:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "e2b7c9d4f161"
down_revision: str | None = "c9e2f4a7d318"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
MONEY = sa.Numeric(18, 2)
GIFT_CARDS = "21300"
NEW_ACCOUNTS = (
    (GIFT_CARDS, "Gift Cards and Store Credit", "liability"),
    ("21400", "Loyalty Points", "liability"),
    ("41500", "Breakage Income", "income"),
)

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
    op.create_table(
        "gift_cards",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("company_id", BigId, sa.ForeignKey("companies.id"), nullable=False),
        sa.Column("kind", sa.String(10), nullable=False),
        sa.Column("lookup_key", sa.String(80), nullable=False),
        sa.Column("last4", sa.String(4), nullable=True),
        sa.Column("customer_id", BigId, sa.ForeignKey("users.id"), nullable=True),
        sa.Column("balance", MONEY, nullable=False),
        sa.Column("expires_on", sa.Date(), nullable=True),
        sa.Column("status", sa.String(10), nullable=False),
        sa.Column("warehouse_id", BigId, sa.ForeignKey("warehouses.id"), nullable=True),
        sa.Column("created_by", BigId, nullable=True),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.UniqueConstraint("company_id", "lookup_key", name="uq_gift_cards_lookup"),
        sa.CheckConstraint("balance >= 0", name="ck_gift_cards_gift_card_balance_not_negative"),
    )
    op.create_index("ix_gift_cards_company_id", "gift_cards", ["company_id"])
    op.create_index("ix_gift_cards_customer_id", "gift_cards", ["customer_id"])
    op.create_index("ix_gift_cards_warehouse_id", "gift_cards", ["warehouse_id"])
    op.create_table(
        "gift_card_movements",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("company_id", BigId, sa.ForeignKey("companies.id"), nullable=False),
        sa.Column("card_id", BigId, sa.ForeignKey("gift_cards.id"), nullable=False),
        sa.Column("warehouse_id", BigId, sa.ForeignKey("warehouses.id"), nullable=True),
        sa.Column("kind", sa.String(10), nullable=False),
        sa.Column("amount", MONEY, nullable=False),
        sa.Column("balance_after", MONEY, nullable=False),
        sa.Column("order_id", BigId, sa.ForeignKey("orders.id"), nullable=True),
        sa.Column("journal_entry_id", BigId, nullable=True),
        sa.Column("created_by", BigId, nullable=True),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
    )
    op.create_index("ix_gift_card_movements_company_id", "gift_card_movements", ["company_id"])
    op.create_index("ix_gift_card_movements_card", "gift_card_movements", ["card_id", "id"])
    op.create_index("ix_gift_card_movements_order_id", "gift_card_movements", ["order_id"])
    op.create_index("ix_gift_card_movements_warehouse_id", "gift_card_movements", ["warehouse_id"])

    bind = op.get_bind()
    for code, name, type_ in NEW_ACCOUNTS:
        having = sa.select(accounts.c.company_id).where(accounts.c.code == code)
        lacking = bind.execute(
            sa.select(companies.c.id).where(companies.c.id.not_in(having)).order_by(companies.c.id)
        ).scalars()
        for company_id in list(lacking):
            bind.execute(
                sa.insert(accounts).values(
                    company_id=company_id,
                    code=code,
                    name=name,
                    type=type_,
                    parent_code=None,
                    is_posting=True,
                )
            )
    with_mode = sa.select(modes.c.company_id).where(modes.c.code == "gift-card")
    lacking = bind.execute(
        sa.select(companies.c.id).where(companies.c.id.not_in(with_mode)).order_by(companies.c.id)
    ).scalars()
    for company_id in list(lacking):
        account_id = bind.execute(
            sa.select(accounts.c.id).where(
                accounts.c.company_id == company_id, accounts.c.code == GIFT_CARDS
            )
        ).scalar_one()
        bind.execute(
            sa.insert(modes).values(
                company_id=company_id,
                code="gift-card",
                name="Gift card",
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
    # The accounts and the mode stay: journal lines and payments may name them.
    op.drop_table("gift_card_movements")
    op.drop_table("gift_cards")
