"""Declarative base and the column types every table shares."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Annotated, Any, TypeVar

from sqlalchemy import (
    BigInteger,
    DateTime,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Table,
    func,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.orm.instrumentation import manager_of_class

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


company_ref = Annotated[int, mapped_column(BigId, ForeignKey("companies.id"), index=True)]
warehouse_ref = Annotated[int, mapped_column(BigId, ForeignKey("warehouses.id"), index=True)]
opt_warehouse_ref = Annotated[
    int | None, mapped_column(BigId, ForeignKey("warehouses.id"), index=True, nullable=True)
]


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


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
    instance: M = manager.new_instance()
    instance.__dict__.update(values)
    return instance


def table_of(model: type[Base]) -> Table:
    """A model's Core table, for statements built once on hot paths: DML on the table
    skips the ORM's unit of work and its per-statement compilation."""
    table = model.__table__
    assert isinstance(table, Table)
    return table
