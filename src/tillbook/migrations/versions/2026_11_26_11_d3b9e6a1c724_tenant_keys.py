"""tenant keys: every tenant table's keys include company_id (DESIGN §17)

So that the schema can be distributed by tenant (Citus), every table that belongs
to a company (``models/base.py`` says which: ``TENANT_KEY``, ``COORDINATOR_TABLES``)
is keyed with it:

- its primary key is ``(id, company_id)``; ids stay what they are (one sequence per
  table, globally unique), ``id`` first so ``WHERE id = ?`` still reads the key's
  index;
- every unique constraint includes ``company_id`` (appended, so the lookups that
  read the constraint's leading columns keep their index);
- every foreign key from one tenant table to another is ``(x_id, company_id) ->
  (x.id, x.company_id)``, under the name it had: a row can only name a row of its
  own company;
- the four tables that had no ``company_id`` get it, from their parent:
  ``delivery_attempts`` (webhook_deliveries), ``terminal_callbacks``
  (terminal_providers), ``shift_counts`` (shifts), ``invoice_counters``
  (warehouses, and into its primary key); ``idempotency_records`` of the public API
  (scoped by warehouse) get their warehouse's company, so ``company_id`` is never
  NULL there any more (the check that exactly one scope was set goes; the scope is
  ``warehouse_id`` NULL or not).

On SQLite (one machine, nothing to distribute) a tenant table keeps its rowid
``PRIMARY KEY (id)`` and gains ``UNIQUE (id, company_id)``, which the composite
foreign keys point at (``models/base.py``, ``_sqlite_primary_key``). SQLite cannot
alter constraints in place: each table is rebuilt (batch mode). Its triggers are
dropped first and created again last (renaming a rebuilt table fails while a
trigger names a table that is being rebuilt), and the partial and expression
indexes, which reflection cannot read back, are created again from their stored
SQL.

No row changes meaning: data is only copied, and the new columns are filled from
the parent every row already names. Downgrade restores the previous keys (the
test goes up, down and up again on a shop with history and compares its books and
stock).

Revision ID: d3b9e6a1c724
Revises: f7a2c5e9d318
Create Date: 2026-11-26 19:30:00
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "d3b9e6a1c724"
down_revision: str | None = "f7a2c5e9d318"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
NOT_TENANT = ("companies", "seen_signatures", "alembic_version")

# The tables that had no company_id: (parent table, the column naming it, index it).
CHILDREN: dict[str, tuple[str, str, bool]] = {
    "delivery_attempts": ("webhook_deliveries", "delivery_id", True),
    "terminal_callbacks": ("terminal_providers", "provider_id", True),
    "shift_counts": ("shifts", "shift_id", True),
    "invoice_counters": ("warehouses", "warehouse_id", False),
}

# Unique constraints: name -> (table, columns before); after, company_id is appended.
UNIQUES: dict[str, tuple[str, tuple[str, ...]]] = {
    "uq_listings_warehouse_product": ("listings", ("warehouse_id", "product_id")),
    "uq_orders_invoice_number": ("orders", ("warehouse_id", "order_type", "invoice_number")),
    "uq_outbox_events_event_id": ("outbox_events", ("event_id",)),
    "uq_delivery_event_webhook": ("webhook_deliveries", ("event_id", "webhook_id")),
    "uq_terminal_provider": ("terminal_providers", ("warehouse_id", "name")),
    "uq_terminal_callback_ref": ("terminal_callbacks", ("provider_id", "reference")),
    "uq_api_keys_public_key": ("api_keys", ("public_key",)),
    "uq_admin_sessions_token_digest": ("admin_sessions", ("token_digest",)),
    "uq_idempotency_token": ("idempotency_records", ("warehouse_id", "token")),
    "uq_stock_count_lines_count_id": ("stock_count_lines", ("count_id", "product_id")),
    "uq_purchase_orders_number": ("purchase_orders", ("warehouse_id", "number")),
    "uq_purchase_order_lines": ("purchase_order_lines", ("purchase_order_id", "product_id")),
    "uq_purchase_order_receipts_order_id": ("purchase_order_receipts", ("order_id",)),
    "uq_registers_key_id": ("registers", ("key_id",)),
}

# Unique indexes (partial ones among them): name -> (table, columns before, where).
UNIQUE_INDEXES: dict[str, tuple[str, tuple[str, ...], str | None]] = {
    "uq_shifts_open_register": ("shifts", ("warehouse_id", "register"), "status = 'open'"),
    "uq_shifts_wh_reference": ("shifts", ("warehouse_id", "reference"), None),
}

COUNTER_KEY = ("warehouse_id", "counter_type")
SCOPE_CHECK = "(warehouse_id IS NULL) <> (company_id IS NULL)"
SCOPE_CHECK_NAME = "ck_idempotency_records_ck_idempotency_records_one_scope"


def _with_tenant(columns: tuple[str, ...]) -> list[str]:
    return [*columns, "company_id"]


def _tenant_tables(inspector: Any) -> list[str]:
    return sorted(
        name
        for name in inspector.get_table_names()
        if name not in NOT_TENANT
        and any(c["name"] == "company_id" for c in inspector.get_columns(name))
    )


def _tenant_fks(inspector: Any, tables: list[str]) -> dict[str, list[dict[str, Any]]]:
    """Per tenant table, its foreign keys to another tenant table's ``id``
    (one-column before, ``(x_id, company_id)`` after)."""
    tenant = set(tables)
    found: dict[str, list[dict[str, Any]]] = {}
    for table in tables:
        for fk in inspector.get_foreign_keys(table):
            if fk["referred_table"] in tenant and fk["constrained_columns"] != ["company_id"]:
                found.setdefault(table, []).append(fk)
    return found


def _id_tables(inspector: Any, tables: list[str]) -> list[str]:
    return [
        t
        for t in tables
        if inspector.get_pk_constraint(t)["constrained_columns"] in (["id"], ["id", "company_id"])
    ]


def _add_children_company(dialect: str) -> None:
    # Public records are about to name their company: the check that exactly one of
    # the two scopes was set goes first.
    if dialect == "postgresql":
        op.drop_constraint(op.f(SCOPE_CHECK_NAME), "idempotency_records", type_="check")
    else:
        with op.batch_alter_table("idempotency_records", recreate="always") as batch:
            batch.drop_constraint(op.f(SCOPE_CHECK_NAME), type_="check")
    for table, (parent, column, _indexed) in CHILDREN.items():
        op.add_column(table, sa.Column("company_id", BigId, nullable=True))
        op.execute(
            f"UPDATE {table} SET company_id = (SELECT p.company_id FROM {parent} p "
            f"WHERE p.id = {table}.{column})"
        )
    op.execute(
        "UPDATE idempotency_records SET company_id = (SELECT w.company_id FROM warehouses w "
        "WHERE w.id = idempotency_records.warehouse_id) WHERE company_id IS NULL"
    )
    if dialect == "postgresql":
        for table, (_parent, _column, indexed) in CHILDREN.items():
            op.alter_column(table, "company_id", existing_type=BigId, nullable=False)
            op.create_foreign_key(
                f"fk_{table}_company_id_companies", table, "companies", ["company_id"], ["id"]
            )
            if indexed:
                op.create_index(f"ix_{table}_company_id", table, ["company_id"])
        op.alter_column("idempotency_records", "company_id", existing_type=BigId, nullable=False)


def upgrade() -> None:
    bind = op.get_bind()
    dialect = bind.dialect.name
    _add_children_company(dialect)
    inspector = sa.inspect(bind)
    tables = _tenant_tables(inspector)
    fks = _tenant_fks(inspector, tables)
    if dialect == "postgresql":
        _swap_keys_postgresql(inspector, tables, fks, up=True)
    else:
        _upgrade_sqlite(inspector, tables, fks)


def _swap_keys_postgresql(
    inspector: Any, tables: list[str], fks: dict[str, list[dict[str, Any]]], up: bool
) -> None:
    """The keys with ``company_id`` (``up``) or without it, in place: the foreign
    keys go first (they lean on the primary keys) and come back last."""

    def keyed(columns: Sequence[str]) -> list[str]:
        return _with_tenant(tuple(columns)) if up else list(columns)

    id_tables = _id_tables(inspector, tables)
    for table, keys in fks.items():
        for fk in keys:
            op.drop_constraint(fk["name"], table, type_="foreignkey")
    for name, (table, columns) in UNIQUES.items():
        op.drop_constraint(name, table, type_="unique")
        op.create_unique_constraint(name, table, keyed(columns))
    for name, (table, columns, where) in UNIQUE_INDEXES.items():
        op.drop_index(name, table_name=table)
        op.create_index(
            name,
            table,
            keyed(columns),
            unique=True,
            postgresql_where=sa.text(where) if where else None,
        )
    for table in id_tables:
        op.drop_constraint(f"pk_{table}", table, type_="primary")
        op.create_primary_key(f"pk_{table}", table, keyed(["id"]))
    op.drop_constraint("pk_invoice_counters", "invoice_counters", type_="primary")
    op.create_primary_key("pk_invoice_counters", "invoice_counters", keyed(COUNTER_KEY))
    for table, keys in fks.items():
        for fk in keys:
            column = fk["constrained_columns"][0]
            op.create_foreign_key(
                fk["name"], table, fk["referred_table"], keyed([column]), keyed(["id"])
            )


# -- SQLite ---------------------------------------------------------------------------


def _stored(kind: str, table: str | None = None) -> list[tuple[str, str, str]]:
    """(name, table, sql) of the stored triggers or indexes (those with SQL)."""
    query = "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = :kind AND sql IS NOT NULL"
    params: dict[str, Any] = {"kind": kind}
    if table is not None:
        query += " AND tbl_name = :table"
        params["table"] = table
    return [(r[0], r[1], r[2]) for r in op.get_bind().execute(sa.text(query), params)]


def _rebuild_sqlite(
    tables: list[str],
    fks: dict[str, list[dict[str, Any]]],
    id_tables: list[str],
    up: bool,
) -> None:
    triggers = _stored("trigger")
    for name, _table, _sql in triggers:
        op.execute(f"DROP TRIGGER {name}")
    # Indexes reflection cannot read back (partial, on expressions): kept by hand.
    special = [
        i for i in _stored("index") if " WHERE " in i[2].upper() or "(lower(" in i[2].lower()
    ]
    for table in tables:
        with op.batch_alter_table(table, recreate="always") as batch:
            for fk in fks.get(table, []):
                column = fk["constrained_columns"][0]
                batch.drop_constraint(fk["name"], type_="foreignkey")
                batch.create_foreign_key(
                    fk["name"],
                    fk["referred_table"],
                    [column, "company_id"] if up else [column],
                    ["id", "company_id"] if up else ["id"],
                )
            if table in id_tables:
                if up:
                    batch.create_unique_constraint(
                        f"uq_{table}_id_company_id", ["id", "company_id"]
                    )
                else:
                    batch.drop_constraint(f"uq_{table}_id_company_id", type_="unique")
            for name, (owner, columns) in UNIQUES.items():
                if owner == table:
                    batch.drop_constraint(name, type_="unique")
                    batch.create_unique_constraint(
                        name, _with_tenant(columns) if up else list(columns)
                    )
            if table in CHILDREN:
                _parent, _column, indexed = CHILDREN[table]
                if up:
                    batch.alter_column("company_id", existing_type=BigId, nullable=False)
                    batch.create_foreign_key(
                        f"fk_{table}_company_id_companies", "companies", ["company_id"], ["id"]
                    )
                    if indexed:
                        batch.create_index(f"ix_{table}_company_id", ["company_id"])
                else:
                    if indexed:
                        batch.drop_index(f"ix_{table}_company_id")
                    batch.drop_constraint(f"fk_{table}_company_id_companies", type_="foreignkey")
                    batch.drop_column("company_id")
            if table == "invoice_counters":
                batch.drop_constraint("pk_invoice_counters", type_="primary")
                batch.create_primary_key(
                    "pk_invoice_counters", _with_tenant(COUNTER_KEY) if up else list(COUNTER_KEY)
                )
            if table == "idempotency_records":
                if up:
                    batch.alter_column("company_id", existing_type=BigId, nullable=False)
                else:
                    batch.alter_column("company_id", existing_type=BigId, nullable=True)
    for name, _table, sql in special:
        if name in UNIQUE_INDEXES:
            continue
        op.execute(f"DROP INDEX IF EXISTS {name}")
        op.execute(sql)
    for name, (table, columns, where) in UNIQUE_INDEXES.items():
        op.execute(f"DROP INDEX IF EXISTS {name}")
        cols = ", ".join(_with_tenant(columns) if up else columns)
        op.execute(
            f"CREATE UNIQUE INDEX {name} ON {table} ({cols})" + (f" WHERE {where}" if where else "")
        )
    for _name, _table, sql in triggers:
        op.execute(sql)


def _upgrade_sqlite(
    inspector: Any, tables: list[str], fks: dict[str, list[dict[str, Any]]]
) -> None:
    _rebuild_sqlite(tables, fks, _id_tables(inspector, tables), up=True)


def downgrade() -> None:
    bind = op.get_bind()
    dialect = bind.dialect.name
    inspector = sa.inspect(bind)
    tables = _tenant_tables(inspector)
    fks = _tenant_fks(inspector, tables)
    if dialect == "postgresql":
        _swap_keys_postgresql(inspector, tables, fks, up=False)
        op.alter_column("idempotency_records", "company_id", existing_type=BigId, nullable=True)
        op.execute(
            "UPDATE idempotency_records SET company_id = NULL WHERE warehouse_id IS NOT NULL"
        )
        op.create_check_constraint(op.f(SCOPE_CHECK_NAME), "idempotency_records", SCOPE_CHECK)
        for table, (_parent, _column, indexed) in CHILDREN.items():
            if indexed:
                op.drop_index(f"ix_{table}_company_id", table_name=table)
            op.drop_constraint(f"fk_{table}_company_id_companies", table, type_="foreignkey")
            op.drop_column(table, "company_id")
    else:
        # CHILDREN are tenant tables now: their rebuild drops the column again.
        _rebuild_sqlite(tables, fks, _id_tables(inspector, tables), up=False)
        op.execute(
            "UPDATE idempotency_records SET company_id = NULL WHERE warehouse_id IS NOT NULL"
        )
        with op.batch_alter_table("idempotency_records", recreate="always") as batch:
            batch.create_check_constraint(op.f(SCOPE_CHECK_NAME), sa.text(SCOPE_CHECK))
