"""books periods: closed periods, monthly roll-ups, retained earnings

- ``ledger_periods``: one row per company that has closed its books, with the last
  closed day and the last day whose month has roll-ups.
- ``ledger_rollups`` and ``ledger_party_rollups``: Σ debit and Σ credit per account
  (and party), warehouse and closed month, so that reports read closed months from
  a few rows each and only the open period's lines.
- ``ix_journal_entries_company_date``: the entries of a date range without the
  rest of history.
- A BEFORE INSERT trigger on ``journal_entries`` refusing an entry dated on or
  before the company's ``closed_through``: every write that posts meets it in the
  statement it already sends (one primary-key lookup inside it, no round trip),
  and it is read when the row is inserted, so a close committed after a write
  began is still seen. PostgreSQL raises SQLSTATE P0001 with a message starting
  ``tillbook: period closed``; SQLite ``RAISE(ABORT, 'tillbook: period closed')``;
  ``ledger.periods.is_closed_refusal`` recognises both.
- Account 31200 Retained Earnings, where a year-end close moves the year's
  profit, added to every company's chart that lacks it.

Revision ID: b7c4d2e9f013
Revises: d4c7a2f9b613
Create Date: 2026-11-25 09:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "b7c4d2e9f013"
down_revision: str | None = "d4c7a2f9b613"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
# Sums of many lines: wider than one line's NUMERIC(18, 2).
SUM = sa.Numeric(24, 2)
MESSAGE = "tillbook: period closed"

PG_FUNCTION = f"""
CREATE OR REPLACE FUNCTION tillbook_refuse_closed_period() RETURNS trigger
LANGUAGE plpgsql AS $fn$
DECLARE
    closed date;
BEGIN
    SELECT closed_through INTO closed FROM ledger_periods WHERE company_id = NEW.company_id;
    IF closed IS NOT NULL AND NEW.entry_date <= closed THEN
        RAISE EXCEPTION '{MESSAGE} through %', closed
            USING ERRCODE = 'raise_exception',
                  DETAIL = 'entry dated ' || NEW.entry_date || ' refused';
    END IF;
    RETURN NEW;
END
$fn$
"""


def upgrade() -> None:
    op.create_table(
        "ledger_periods",
        sa.Column("company_id", BigId, nullable=False),
        sa.Column("closed_through", sa.Date(), nullable=True),
        sa.Column("rolled_up_through", sa.Date(), nullable=True),
        sa.Column("closed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("closed_by", BigId, nullable=True),
        sa.ForeignKeyConstraint(
            ["company_id"], ["companies.id"], name="fk_ledger_periods_company_id_companies"
        ),
        sa.PrimaryKeyConstraint("company_id", name="pk_ledger_periods"),
    )
    op.create_table(
        "ledger_rollups",
        sa.Column("company_id", BigId, nullable=False),
        sa.Column("period", sa.Date(), nullable=False),
        sa.Column("account_id", BigId, nullable=False),
        sa.Column("warehouse_id", BigId, nullable=False),
        sa.Column("closing", sa.Boolean(), nullable=False),
        sa.Column("debit", SUM, nullable=False),
        sa.Column("credit", SUM, nullable=False),
        sa.Column("lines", BigId, nullable=False),
        sa.ForeignKeyConstraint(
            ["company_id"], ["companies.id"], name="fk_ledger_rollups_company_id_companies"
        ),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name="fk_ledger_rollups_account_id_accounts"
        ),
        sa.PrimaryKeyConstraint(
            "company_id",
            "period",
            "account_id",
            "warehouse_id",
            "closing",
            name="pk_ledger_rollups",
        ),
    )
    op.create_table(
        "ledger_party_rollups",
        sa.Column("company_id", BigId, nullable=False),
        sa.Column("party_id", BigId, nullable=False),
        sa.Column("period", sa.Date(), nullable=False),
        sa.Column("account_id", BigId, nullable=False),
        sa.Column("warehouse_id", BigId, nullable=False),
        sa.Column("debit", SUM, nullable=False),
        sa.Column("credit", SUM, nullable=False),
        sa.ForeignKeyConstraint(
            ["company_id"], ["companies.id"], name="fk_ledger_party_rollups_company_id_companies"
        ),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name="fk_ledger_party_rollups_account_id_accounts"
        ),
        sa.PrimaryKeyConstraint(
            "company_id",
            "party_id",
            "period",
            "account_id",
            "warehouse_id",
            name="pk_ledger_party_rollups",
        ),
    )
    op.create_index(
        "ix_journal_entries_company_date",
        "journal_entries",
        ["company_id", "entry_date", "id"],
    )
    op.execute(
        "INSERT INTO accounts (company_id, code, name, type, parent_code, is_posting) "
        "SELECT c.id, '31200', 'Retained Earnings', 'equity', NULL, "
        + ("true" if op.get_bind().dialect.name == "postgresql" else "1")
        + " FROM companies c WHERE NOT EXISTS (SELECT 1 FROM accounts a "
        "WHERE a.company_id = c.id AND a.code = '31200')"
    )
    dialect = op.get_bind().dialect.name
    if dialect == "postgresql":
        op.execute(PG_FUNCTION)
        op.execute(
            "CREATE TRIGGER journal_entries_open_period BEFORE INSERT ON journal_entries "
            "FOR EACH ROW EXECUTE FUNCTION tillbook_refuse_closed_period()"
        )
    elif dialect == "sqlite":
        op.execute(
            "CREATE TRIGGER journal_entries_open_period BEFORE INSERT ON journal_entries "
            "WHEN NEW.entry_date <= (SELECT closed_through FROM ledger_periods "
            "WHERE company_id = NEW.company_id) "
            f"BEGIN SELECT RAISE(ABORT, '{MESSAGE}'); END"
        )


def downgrade() -> None:
    dialect = op.get_bind().dialect.name
    if dialect == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS journal_entries_open_period ON journal_entries")
        op.execute("DROP FUNCTION IF EXISTS tillbook_refuse_closed_period()")
    elif dialect == "sqlite":
        op.execute("DROP TRIGGER IF EXISTS journal_entries_open_period")
    # Retained earnings leaves the chart where no line names it (a company that
    # closed a year keeps it: its lines cannot be removed).
    op.execute(
        "DELETE FROM accounts WHERE code = '31200' AND NOT EXISTS "
        "(SELECT 1 FROM journal_lines l WHERE l.account_id = accounts.id) "
        "AND NOT EXISTS (SELECT 1 FROM payment_modes m WHERE m.account_id = accounts.id) "
        "AND NOT EXISTS (SELECT 1 FROM expense_categories e WHERE e.account_id = accounts.id)"
    )
    op.drop_index("ix_journal_entries_company_date", table_name="journal_entries")
    op.drop_table("ledger_party_rollups")
    op.drop_table("ledger_rollups")
    op.drop_table("ledger_periods")
