"""Prebuilt statements run on the unit's own asyncpg connection, past SQLAlchemy's
execution layer.

A sale issues about ten statements. Through ``AsyncSession.execute`` each costs
about 200 µs of CPU on this service's machine (greenlet switches, the ORM execute
path, the compiled-cache lookup, result wrapping); the same statement on the
asyncpg connection costs about 80 µs. For the statements of the hot path, all
built once at import time, ``run`` compiles each once for PostgreSQL (SQLAlchemy
still writes the SQL) and sends it on the connection the session's transaction is
on, through the adapter's prepared-statement cache.

The unit keeps SQLAlchemy's semantics: the transaction is the session's (begun
here if the session has not yet sent anything), and a driver error is raised as
the ``sqlalchemy.exc`` exception SQLAlchemy itself would raise, by SQLAlchemy's own
error handling (``IntegrityError`` for a unique violation; on a dead connection
``connection_invalidated``, the connection and the pool's older ones invalidated),
so ``Database.write``'s retry and 503 rules hold.
On SQLite ``run`` is plain ``session.execute``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, NoReturn

from sqlalchemy import Connection, Executable, Row, event
from sqlalchemy.engine import CursorResult, Dialect
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession
from sqlalchemy.orm import Session, SessionTransaction
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.util import greenlet_spawn


class _Compiled:
    """A statement's SQL for asyncpg, its parameter names in ``$n`` order, the values
    of the parameters the statement itself fixes, and SQLAlchemy's bind processors."""

    def __init__(self, statement: Any, keys: tuple[str, ...], dialect: Dialect):
        self.statement = statement  # held, so that its id() is never another's
        compiled: SQLCompiler = statement.compile(dialect=dialect, column_keys=list(keys))
        # Python-side column defaults are computed by SQLAlchemy's execution layer,
        # which these statements skip: a caller must give every such column.
        assert not compiled.insert_prefetch and not compiled.update_prefetch, (
            f"give the columns with Python-side defaults: {compiled.string[:80]}"
        )
        self.sql = compiled.string
        self.names: tuple[str, ...] = tuple(compiled.positiontup or ())
        binds = compiled.binds
        self.fixed = {n: binds[n].effective_value for n in self.names if n not in keys}
        self.processors: dict[str, Any] = dict(compiled._bind_processors)

    def args(self, params: Mapping[str, Any]) -> list[Any]:
        values = {**self.fixed, **params} if self.fixed else params
        processors = self.processors
        return [processors[n](values[n]) if n in processors else values[n] for n in self.names]


# Called with each statement's SQL before it is sent: SQLAlchemy's
# ``before_cursor_execute`` does not see these, and the benchmark's tools
# (``bench/floor.py --capture``, ``bench/profile_sale.py``) count every statement.
observers: list[Callable[[str], None]] = []

# keyed by id(): statements are module-level constants, and each entry holds its own
_compiled: dict[tuple[int, tuple[str, ...]], _Compiled] = {}


def _compile(statement: Executable, keys: tuple[str, ...], dialect: Dialect) -> _Compiled:
    """Once per statement and set of parameter names (an INSERT renders only the
    columns it is given)."""
    cache_key = (id(statement), keys)
    found = _compiled.get(cache_key)
    if found is None:
        found = _compiled[cache_key] = _Compiled(statement, keys, dialect)
    return found


def on_postgresql(session: AsyncSession) -> bool:
    return session.bind is not None and session.bind.dialect.name == "postgresql"


def as_dict(row: Any) -> dict[str, Any]:
    """A row of ``run`` by column name (an asyncpg record, or SQLAlchemy's row)."""
    return dict(row._mapping) if isinstance(row, Row) else dict(row)


async def run(
    session: AsyncSession,
    statement: Executable,
    params: Mapping[str, Any],
    *,
    elsewhere: Executable | None = None,
) -> Sequence[Any]:
    """The rows ``statement`` returns (positional access: ``row[0]``, by name:
    ``as_dict``), in the session's transaction; ``statement`` must be a module-level
    constant. ``elsewhere``: the statement SQLite runs instead (an ``IN`` list where
    PostgreSQL takes one array, ``= ANY(:ids)``)."""
    if not on_postgresql(session):
        result = await session.execute(statement if elsewhere is None else elsewhere, dict(params))
        if isinstance(result, CursorResult) and not result.returns_rows:
            return []
        return result.all()
    found: tuple[AsyncConnection, Any] | None = session.info.get(_CONNECTION)
    if found is None:
        connection = await session.connection()
        found = (connection, (await connection.get_raw_connection()).dbapi_connection)
        session.info[_CONNECTION] = found
    connection, adapted = found
    return await _fetch(connection, adapted, statement, params, True)


# The unit's connection, looked up once per transaction (two greenlet switches a
# statement otherwise) and forgotten when the transaction ends.
_CONNECTION = "tillbook.rawsql.connection"


@event.listens_for(Session, "after_transaction_end")
def _forget_connection(session: Session, transaction: SessionTransaction) -> None:
    if transaction.parent is None:
        session.info.pop(_CONNECTION, None)


async def first_autocommit(
    engine: AsyncEngine, statement: Executable, params: Mapping[str, Any]
) -> Mapping[str, Any] | None:
    """The first row of a read outside any transaction (no BEGIN, no COMMIT): the key
    lookup every request makes. PostgreSQL only."""
    async with engine.connect() as connection:
        adapted = (await connection.get_raw_connection()).dbapi_connection
        rows = await _fetch(connection, adapted, statement, params, False)
    return rows[0] if rows else None


async def _fetch(
    connection: AsyncConnection,
    adapted: Any,
    statement: Executable,
    params: Mapping[str, Any],
    in_transaction: bool,
) -> Sequence[Any]:
    dialect = connection.dialect
    compiled = _compile(statement, tuple(params), dialect)
    sql, args = compiled.sql, compiled.args(params)
    for observe in observers:
        observe(sql)
    try:
        async with adapted._execute_mutex:
            if in_transaction and adapted._transaction is None:
                await adapted._start_transaction()
            # the dialect's timestamp: statements prepared before a schema change
            # that SQLAlchemy saw are prepared again, as on its own path
            cache_asof = dialect._invalidate_schema_cache_asof  # type: ignore[attr-defined]
            prepared, _ = await adapted._prepare(sql, cache_asof)
            rows: Sequence[Any] = await prepared.fetch(*args)
            return rows
    except Exception as error:
        await greenlet_spawn(
            _raise_as_sqlalchemy, connection.sync_connection, adapted, error, sql, args
        )
        raise  # not reached: _raise_as_sqlalchemy always raises


def _raise_as_sqlalchemy(
    connection: Connection | None, adapted: Any, error: Exception, sql: str, args: list[Any]
) -> NoReturn:
    """Raise ``error`` as SQLAlchemy's own execution path would: the adapter turns
    the driver's error into its DB-API error, and the connection wraps that in
    ``sqlalchemy.exc`` and, on a disconnect, invalidates this connection and the
    pool's older ones (its ``_handle_dbapi_exception``, run in a greenlet as on
    that path)."""
    assert connection is not None
    try:
        adapted._handle_exception(error)  # raises the adapter's DB-API error
    except Exception as dbapi_error:
        if type(dbapi_error).__name__ == "InvalidCachedStatementError":
            connection.dialect._invalidate_schema_cache()  # type: ignore[attr-defined]
        connection._handle_dbapi_exception(dbapi_error, sql, args, None, None)
    raise AssertionError("the adapter always raises")
