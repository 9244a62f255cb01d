"""Declarative base and the column types every table shares."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Annotated, Any, TypeVar

from sqlalchemy import (
    BigInteger,
    Column,
    DateTime,
    ForeignKey,
    ForeignKeyConstraint,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    func,
)
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.orm.instrumentation import manager_of_class
from sqlalchemy.schema import CreateColumn
from sqlalchemy.sql.compiler import DDLCompiler

from tillbook.kit.bounds import FX_RATE, MONEY, PRICE, QTY, RATE

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

# SQLite only auto-increments an INTEGER PRIMARY KEY.
BigId = BigInteger().with_variant(Integer(), "sqlite")

# NUMERIC(precision, scale) from ``kit/bounds.py``, where the request schemas and the
# result checks read the same limits.
Money = MONEY.column()
Price = PRICE.column()
Qty = QTY.column()
Rate = RATE.column()
FxRate = FX_RATE.column()

pk = Annotated[int, mapped_column(BigId, primary_key=True, autoincrement=True)]
money = Annotated[Decimal, mapped_column(Money, nullable=False, default=Decimal("0.00"))]
price = Annotated[Decimal, mapped_column(Price, nullable=False, default=Decimal("0"))]
qty = Annotated[Decimal, mapped_column(Qty, nullable=False, default=Decimal("0"))]
created = Annotated[
    dt.datetime,
    mapped_column(DateTime(timezone=True), nullable=False, server_default=func.now()),
]
str200 = Annotated[str, mapped_column(String(200))]


# Distribution by tenant (DESIGN §17): the one list of which table is which.
#
# Every table that has a ``company_id`` column is a *tenant table*, distributed by
# it: its primary key is ``(id, company_id)``, its unique constraints include
# ``company_id``, and a reference from it to another tenant table is the pair
# ``(x_id, company_id) -> (x.id, x.company_id)`` (``refers``), so a row can only
# name a row of its own company and Citus can keep both on one shard.
# ``id`` comes first in the key: ids stay globally unique (one sequence per table),
# so ``WHERE id = ?`` still finds the row through the primary key's index, on one
# machine as on a shard; Citus only asks that the key *include* the column.
TENANT_KEY = "company_id"
# The tenant itself, distributed by its own ``id`` and colocated with the tenant
# tables (not a reference table: the key lookup reads ``reference_version`` on
# every request and reference edits write it, and a reference table's every write
# is a two-phase commit across all nodes; colocated, a company's row sits with its
# data and the tenant tables' ``company_id -> companies.id`` keys stay local).
DISTRIBUTION_ROOT = "companies"
# Small tables without a tenant, copied to every node: none today.
REFERENCE_TABLES: tuple[str, ...] = ()
# Tables without a tenant that stay on the coordinator, with why:
COORDINATOR_TABLES: dict[str, str] = {
    # The replay window of signed requests, written and read by the signature
    # alone, before anything about the tenant is looked at, never joined, purged
    # after minutes: one small local table on the node the requests enter by.
    "seen_signatures": "a short-lived replay cache keyed by the signature alone",
    # One email, one login across every company: a rule over all tenants, which a
    # distributed table cannot hold (its unique keys include company_id).
    "staff_logins": "the staff email unique across every company, read to log in",
}


def refers(table: str) -> dict[str, str]:
    """The ``info`` of a column naming a row of the tenant table ``table``: the
    table gets the composite key ``(column, company_id) -> (table.id,
    table.company_id)`` (``Base.__table_cls__``), named as a one-column key would be
    (``fk_<table>_<column>_<referred>``)."""
    return {"refers": table}


def _tenant_keys(name: str, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """``args`` of a tenant table with its primary key ``(id, company_id)`` and a
    composite foreign key for every ``refers`` column."""
    columns = {a.name: a for a in args if isinstance(a, Column)}
    if name == DISTRIBUTION_ROOT or name in COORDINATOR_TABLES or TENANT_KEY not in columns:
        return args
    extra: list[Any] = []
    if "id" in columns and columns["id"].primary_key:
        columns[TENANT_KEY].primary_key = True
        extra.append(PrimaryKeyConstraint("id", TENANT_KEY))
    for column in columns.values():
        target = column.info.get("refers")
        if target is not None:
            extra.append(
                ForeignKeyConstraint(
                    [column.name, TENANT_KEY], [f"{target}.id", f"{target}.{TENANT_KEY}"]
                )
            )
    return (*args, *extra)


@compiles(PrimaryKeyConstraint, "sqlite")
def _sqlite_primary_key(constraint: PrimaryKeyConstraint, compiler: DDLCompiler, **kw: Any) -> str:
    """SQLite only auto-increments a one-column ``INTEGER PRIMARY KEY`` (the rowid),
    and tillbook on SQLite is one machine, nothing to distribute: a tenant table
    keeps ``PRIMARY KEY (id)`` there, plus ``UNIQUE (id, company_id)``, which the
    composite foreign keys point at. This is the one place that decides it; the
    migration (``2026_11_26_11``) builds the same, and ``alembic check`` leaves that
    unique constraint alone on SQLite (``sqlite_tenant_unique``)."""
    names = [c.name for c in constraint.columns]
    table = constraint.table
    if names == ["id", TENANT_KEY] and isinstance(table, Table):
        name = compiler.preparer.format_constraint(constraint)
        return (
            f"CONSTRAINT {name} PRIMARY KEY (id), "
            f"CONSTRAINT {sqlite_tenant_unique(table.name)} UNIQUE (id, {TENANT_KEY})"
        )
    return compiler.visit_primary_key_constraint(constraint, **kw)


@compiles(CreateColumn, "sqlite")
def _sqlite_tenant_id(create: CreateColumn, compiler: DDLCompiler, **kw: Any) -> str:
    """A tenant table's ``id`` on SQLite: the rowid alias (``_sqlite_primary_key``),
    which SQLAlchemy would refuse to auto-increment inside a two-column key."""
    column = create.element
    table = column.table
    if column.name == "id" and [c.name for c in table.primary_key] == ["id", TENANT_KEY]:
        type_ = compiler.dialect.type_compiler_instance.process(column.type)
        return f"{compiler.preparer.format_column(column)} {type_} NOT NULL"
    return str(compiler.visit_create_column(create, **kw))  # type: ignore[no-untyped-call]


def sqlite_tenant_unique(table: str) -> str:
    """The name of a tenant table's ``UNIQUE (id, company_id)`` on SQLite."""
    return f"uq_{table}_id_{TENANT_KEY}"


company_ref = Annotated[int, mapped_column(BigId, ForeignKey("companies.id"), index=True)]
warehouse_ref = Annotated[int, mapped_column(BigId, info=refers("warehouses"), index=True)]
opt_warehouse_ref = Annotated[
    int | None, mapped_column(BigId, info=refers("warehouses"), index=True, nullable=True)
]


class Base(DeclarativeBase):
    """The declarative base. A tenant table's mapped identity is its primary key
    ``(id, company_id)``, as the database's is: every UPDATE and DELETE the ORM
    flushes names the row's company beside its id (a router query, DESIGN §17),
    and ``session.get(Model, (id, company_id))`` cannot return another company's
    row."""

    metadata = MetaData(naming_convention=NAMING)

    @classmethod
    def __table_cls__(cls, name: str, metadata: MetaData, *args: Any, **kw: Any) -> Table:
        return Table(name, metadata, *_tenant_keys(name, args), **kw)


class Editable:
    """A record the back office edits: ``version`` grows by one on every edit (the
    ETag an edit must name, ``kit/versions.py``), and a record with history is
    archived (``archived_at``), never deleted."""

    version: Mapped[int] = mapped_column(Integer, nullable=False, default=1, server_default="1")
    archived_at: Mapped[dt.datetime | None] = mapped_column(
        DateTime(timezone=True), nullable=True, default=None
    )
    # When the record last changed (an edit, archiving, a balance moving): what an
    # offline till's ``updated_since`` reads (``catalog.changes``).
    updated_at: Mapped[dt.datetime] = mapped_column(
        DateTime(timezone=True),
        nullable=False,
        default=func.now(),
        server_default=func.now(),
        onupdate=func.now(),
    )


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


M = TypeVar("M", bound=Base)


def value_of(model: type[M], **values: Any) -> M:
    """A transient instance of ``model`` holding ``values``, built as the ORM builds
    a loaded row (its state created, the values put straight into its dictionary),
    without the constructor's event per attribute: a write path's values for its
    response, detail view and events (an order, its lines, its payments, the party),
    never added to a session. A tenth of the constructor's CPU (``Order(**values)``
    costs about 90 µs); attributes set afterwards are tracked as usual. A name that
    is no attribute of the model is a TypeError, as the constructor's is."""
    manager = manager_of_class(model)
    unknown = [name for name in values if name not in manager]
    if unknown:
        raise TypeError(f"{unknown[0]!r} is an invalid keyword argument for {model.__name__}")
    return columns_of(model, values)


def columns_of(model: type[M], values: dict[str, Any]) -> M:
    """``value_of`` for ``values`` named by the model's own columns (a row read with
    its table's columns): the names are not checked again, which was half of the
    cost of an order's instance in a sale read (25 µs of 37)."""
    instance: M = manager_of_class(model).new_instance()
    instance.__dict__.update(values)
    return instance


def table_of(model: type[Base]) -> Table:
    """A model's Core table, for statements built once on hot paths: DML on the table
    skips the ORM's unit of work and its per-statement compilation."""
    table = model.__table__
    assert isinstance(table, Table)
    return table
