"""journal insert-only: triggers refusing UPDATE, DELETE and TRUNCATE of the books

A posted journal entry is a fact: a correction is a new, reversing entry, never an
edit (formance's append-only log, beancount's immutable postings). ``models/ledger.py``
refuses changed or deleted ORM objects of both classes at flush; these triggers
make the database itself refuse every path around it: a Core or raw SQL statement,
a script, an operator's psql session.

- PostgreSQL: one plpgsql function, ``tillbook_journal_insert_only()``, raising
  SQLSTATE P0001 (``raise_exception``, not an integrity class: a write that meets it
  is a bug, not a lost race to run again), called by a BEFORE UPDATE OR DELETE row
  trigger and a BEFORE TRUNCATE statement trigger on each table. (A superuser can
  still disable triggers, ``session_replication_role = replica``; that is an
  operator's deliberate act, not something the service does.)
- SQLite: BEFORE UPDATE and BEFORE DELETE triggers doing ``RAISE(ABORT, ...)``.
  SQLite has no TRUNCATE (``DELETE`` without ``WHERE`` fires the trigger too).

A later migration that batch-alters ``journal_entries`` or ``journal_lines`` on
SQLite rebuilds the table without its triggers, and must create them again.

Revision ID: 7ea926272366
Revises: c3a1e0b7d215
Create Date: 2026-11-24 03:30:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "7ea926272366"
down_revision: str | None = "c3a1e0b7d215"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLES = ("journal_entries", "journal_lines")
MESSAGE = "journal entries are insert-only; post a reversing entry"

PG_FUNCTION = f"""
CREATE OR REPLACE FUNCTION tillbook_journal_insert_only() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
    RAISE EXCEPTION '{MESSAGE}'
        USING ERRCODE = 'raise_exception',
              DETAIL = TG_OP || ' on ' || TG_TABLE_NAME || ' refused';
END
$fn$
"""


def upgrade() -> None:
    dialect = op.get_bind().dialect.name
    if dialect == "postgresql":
        op.execute(PG_FUNCTION)
        for table in TABLES:
            op.execute(
                f"CREATE TRIGGER {table}_insert_only BEFORE UPDATE OR DELETE ON {table} "
                "FOR EACH ROW EXECUTE FUNCTION tillbook_journal_insert_only()"
            )
            op.execute(
                f"CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table} "
                "FOR EACH STATEMENT EXECUTE FUNCTION tillbook_journal_insert_only()"
            )
    elif dialect == "sqlite":
        for table in TABLES:
            for event in ("update", "delete"):
                op.execute(
                    f"CREATE TRIGGER {table}_no_{event} BEFORE {event.upper()} ON {table} "
                    f"BEGIN SELECT RAISE(ABORT, '{MESSAGE}'); END"
                )


def downgrade() -> None:
    dialect = op.get_bind().dialect.name
    if dialect == "postgresql":
        for table in TABLES:
            op.execute(f"DROP TRIGGER IF EXISTS {table}_no_truncate ON {table}")
            op.execute(f"DROP TRIGGER IF EXISTS {table}_insert_only ON {table}")
        op.execute("DROP FUNCTION IF EXISTS tillbook_journal_insert_only()")
    elif dialect == "sqlite":
        for table in TABLES:
            for event in ("update", "delete"):
                op.execute(f"DROP TRIGGER IF EXISTS {table}_no_{event}")
