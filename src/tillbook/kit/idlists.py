"""``column IN`` a list of ids, in a prebuilt read: the ids of a page (a SELECT)
or a list bound as one value.

SQLAlchemy's expanding IN writes a placeholder per id, so its SQL changes with the
number of ids and cannot be compiled once (``tillbook.db.Reads``). ``in_ids`` takes
the whole list as one value (``IdList``): an array on PostgreSQL (``column =
ANY($1::BIGINT[])``), a JSON array on SQLite (``column IN (SELECT value FROM
json_each(?))``; SQLite's JSON functions are built in since 3.38). ``in_page``
takes a SELECT of ids: ``column = ANY(ARRAY(SELECT ids))`` on PostgreSQL, whose
planner cannot tell how few ids a CTE holds and planned the ``IN`` as a hash join
over a scan of every barcode of the company (2.5 ms a page of the bench; with an
array it looks each id up by index, 0.3 ms). Either way each id is found by
index."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import BigInteger, Boolean, ColumnElement, Select, String, func
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.engine import Dialect
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.visitors import InternalTraversal
from sqlalchemy.types import TypeDecorator, TypeEngine


class IdList(TypeDecorator[list[int]]):
    """The type of a bound list of ids: ``BIGINT[]`` on PostgreSQL (the driver takes
    the list as it is), its JSON text elsewhere."""

    impl = String
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if dialect.name == "postgresql":
            return dialect.type_descriptor(ARRAY(BigInteger()))
        return dialect.type_descriptor(String())

    def process_bind_param(self, value: list[int] | None, dialect: Dialect) -> Any:
        if value is None or dialect.name == "postgresql":
            return value
        return json.dumps([int(v) for v in value])


class _InIds(ColumnElement[bool]):
    """``column`` is one of ``ids``: a SELECT of ids, or a bound ``IdList``."""

    inherit_cache = True
    _traverse_internals = [  # noqa: RUF012 (a list, as SQLAlchemy declares it)
        ("column", InternalTraversal.dp_clauseelement),
        ("ids", InternalTraversal.dp_clauseelement),
    ]
    type = Boolean()
    # A condition in itself, as an IN is: without it SQLite's compiler (no native
    # booleans) writes ``… IN (…) = 1``, which no index serves (a scan of every
    # barcode of the company on each page).
    _is_implicitly_boolean = True

    def __init__(self, column: ColumnElement[Any], ids: Any):
        self.column = column
        self.ids = ids


def in_page(column: ColumnElement[Any], ids: Select[Any]) -> ColumnElement[bool]:
    """``column`` is one of the ids ``ids`` selects."""
    return _InIds(column, ids)


def in_ids(column: ColumnElement[Any], ids: ColumnElement[Any]) -> ColumnElement[bool]:
    """``column`` is one of ``ids``, a ``bindparam`` of type ``IdList``."""
    return _InIds(column, ids)


@compiles(_InIds)
def _in_ids(element: _InIds, compiler: SQLCompiler, **kw: Any) -> str:
    if isinstance(element.ids, Select):
        return compiler.process(element.column.in_(element.ids), **kw)
    column = compiler.process(element.column, **kw)
    return f"{column} IN (SELECT value FROM json_each({compiler.process(element.ids, **kw)}))"


@compiles(_InIds, "postgresql")
def _pg_in_ids(element: _InIds, compiler: SQLCompiler, **kw: Any) -> str:
    ids = element.ids
    if isinstance(ids, Select):
        ids = func.array(ids.scalar_subquery())
    return compiler.process(element.column == func.any(ids), **kw)
