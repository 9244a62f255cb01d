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
the ``sqlalchemy.exc`` exception SQLAlchemy itself would raise (``IntegrityError``
for a unique violation, ``connection_invalidated`` on a dead connection, which is
invalidated as SQLAlchemy would), so ``Database.write``'s retry and 503 rules hold.
On SQLite ``run`` is plain ``session.execute``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqlalchemy import Executable, Row, event, exc
from sqlalchemy.engine import CursorResult, Dialect
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession
from sqlalchemy.orm import Session, SessionTransaction
from sqlalchemy.sql.compiler import SQLCompiler


class _Compiled:
    """A statement's SQL for asyncpg, its parameter names in ``$n`` order, the values
    of the parameters the statement itself fixes, and SQLAlchemy's bind processors."""

    def __init__(self, statement: Any, keys: tuple[str, ...], dialect: Dialect):
        self.statement = statement  # held, so that its id() is never another's
        compiled: SQLCompiler = statement.compile(dialect=dialect, column_keys=list(keys))
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
    try:
        return await _fetch(adapted, connection.dialect, statement, params, True)
    except exc.DBAPIError as error:
        if error.connection_invalidated:
            await connection.invalidate(error.orig)
        raise


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
    """The first row of a read outside any transaction (no BEGIN, no COMMIT), on a
    pooled connection taken and given back without SQLAlchemy's connection layer:
    the key lookup every request makes. PostgreSQL only."""
    fairy = await engine.raw_connection()
    try:
        rows = await _fetch(fairy.dbapi_connection, engine.dialect, statement, params, False)
    except exc.DBAPIError as error:
        if error.connection_invalidated:
            fairy.invalidate(error.orig)
        raise
    finally:
        fairy.close()  # back to the pool; nothing to roll back
    return rows[0] if rows else None


async def _fetch(
    adapted: Any,
    dialect: Dialect,
    statement: Executable,
    params: Mapping[str, Any],
    in_transaction: bool,
) -> Sequence[Any]:
    compiled = _compile(statement, tuple(params), dialect)
    sql, args = compiled.sql, compiled.args(params)
    for observe in observers:
        observe(sql)
    try:
        async with adapted._execute_mutex:
            if in_transaction and adapted._transaction is None:
                await adapted._start_transaction()
            prepared, _ = await adapted._prepare(sql, adapted._invalidate_schema_cache_asof)
            rows: Sequence[Any] = await prepared.fetch(*args)
            return rows
    except exc.DBAPIError:
        raise
    except Exception as error:
        try:
            adapted._handle_exception(error)  # raises the adapter's DB-API error
        except dialect.loaded_dbapi.Error as dbapi_error:
            raise exc.DBAPIError.instance(
                sql,
                args,
                dbapi_error,
                dialect.loaded_dbapi.Error,
                connection_invalidated=dialect.is_disconnect(dbapi_error, adapted, None),
                dialect=dialect,
            ) from error
        raise
