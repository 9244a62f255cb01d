"""Engines and the unit of work: one transaction per request, committed in one place.

Services receive an ``AsyncSession``, flush, and never commit. ``Database.write``
owns the transaction: it commits once, retries the whole unit on a lost race
(unique violation, deadlock, serialization failure) or on a connection that died
before the commit was sent, and maps a vanished database to a clean 503.

Writes whose results the unit never reads back go out together just before COMMIT
(``tillbook.deferred``), and a late value that statement takes (an invoice number)
is put into the unit's result once it has committed.

Pooled PostgreSQL connections are not pinged at checkout: SQLAlchemy's pre-ping
costs three round trips (BEGIN, ``;``, ROLLBACK) on every checkout, two checkouts
per request. A dead connection instead fails its first statement; nothing can
have been committed then, so the unit runs again on a fresh connection.

SQLite (the embedded default) has one writer: writes go through a dedicated
engine with a single pooled connection and ``BEGIN IMMEDIATE``, so two writers in
one process queue instead of failing, and several processes wait on
``busy_timeout``. PostgreSQL takes row locks (``FOR UPDATE``) instead.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextvars import ContextVar
from typing import Any, TypeVar

from sqlalchemy import (
    ARRAY,
    Executable,
    Insert,
    Row,
    Table,
    bindparam,
    event,
    func,
    insert,
    select,
    text,
)
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

from tillbook.deferred import flush, resolved  # (importing registers the before-commit writer)
from tillbook.errors import Conflict, ServiceUnavailable
from tillbook.rawsql import first_autocommit, on_postgresql, run

log = logging.getLogger("tillbook.db")
T = TypeVar("T")

RETRYABLE_PG_CODES = {"40001", "40P01"}  # serialization failure, deadlock
LOCK_TIMEOUT_PG_CODE = "55P03"
# admin shutdown, crash shutdown, cannot connect now (starting up or shutting down),
# too many connections; and every code of class 08, connection exception
UNAVAILABLE_PG_CODES = {"57P01", "57P02", "57P03", "53300"}


# True while ``Database.write`` runs a unit again after a unique violation: code that
# trusts a unique index to catch a rare collision (invoice numbers) checks first then.
after_conflict: ContextVar[bool] = ContextVar("after_conflict", default=False)


def async_url(url: str) -> str:
    """Any SQLAlchemy URL the operator gives, with the async driver the service uses."""
    parsed = make_url(url)
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        parsed = parsed.set(drivername="sqlite+aiosqlite")
    elif backend == "postgresql":
        parsed = parsed.set(drivername="postgresql+asyncpg")
    else:
        raise ValueError(f"unsupported database {backend!r}: use sqlite or postgresql")
    return parsed.render_as_string(hide_password=False)


def _sqlite_setup(engine: AsyncEngine, *, immediate: bool) -> None:
    @event.listens_for(engine.sync_engine, "connect")
    def _connect(dbapi_connection: Any, _record: Any) -> None:
        # Let SQLAlchemy, not the driver, decide when transactions begin.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _begin(conn: Any) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


def _sqlstate(exc: DBAPIError) -> str | None:
    orig = exc.orig
    code = getattr(orig, "sqlstate", None) or getattr(orig, "pgcode", None)
    if code is None and orig is not None and orig.__cause__ is not None:
        code = getattr(orig.__cause__, "sqlstate", None)
    return code if isinstance(code, str) else None


class Database:
    def __init__(self, url: str, *, pool_size: int = 10, lock_timeout_s: float = 5.0):
        self.url = async_url(url)
        self.lock_timeout_s = lock_timeout_s
        self.is_sqlite = self.url.startswith("sqlite")
        # hide_parameters: a failed statement's error, and any log or traceback of it,
        # shows the SQL but not the values a client sent (an email, a name).
        if self.is_sqlite:
            self.engine = create_async_engine(
                self.url, pool_size=pool_size, max_overflow=0, hide_parameters=True
            )
            self.write_engine = create_async_engine(
                self.url, pool_size=1, max_overflow=0, pool_timeout=60, hide_parameters=True
            )
            _sqlite_setup(self.engine, immediate=False)
            _sqlite_setup(self.write_engine, immediate=True)
        else:
            self.engine = create_async_engine(
                self.url,
                pool_size=pool_size,
                max_overflow=pool_size,
                pool_recycle=1800,
                hide_parameters=True,
                # Set once per connection instead of a SET LOCAL round trip per write.
                connect_args={"server_settings": {"lock_timeout": str(int(lock_timeout_s * 1000))}},
            )
            self.write_engine = self.engine
        self._reader = async_sessionmaker(self.engine, expire_on_commit=False, autoflush=False)
        self._writer = async_sessionmaker(
            self.write_engine, expire_on_commit=False, autoflush=False
        )

    async def dispose(self) -> None:
        await self.engine.dispose()
        if self.write_engine is not self.engine:
            await self.write_engine.dispose()

    async def read(self, fn: Callable[[AsyncSession], Awaitable[T]]) -> T:
        async def in_transaction() -> T:
            async with self._reader() as session, session.begin():
                return await fn(session)

        return await self._reading(in_transaction)

    async def first(
        self, statement: Executable, params: dict[str, Any]
    ) -> Mapping[str, Any] | None:
        """The first row of one prebuilt read, by column name, outside any transaction
        on PostgreSQL (no BEGIN and COMMIT round trips; the statement on the asyncpg
        connection: ``rawsql.first_autocommit``); used on every request by the key
        lookup."""
        if self.is_sqlite:
            row = await self.read(lambda s: _first(s, statement, params))
            return None if row is None else dict(row._mapping)
        return await self._reading(lambda: first_autocommit(self.engine, statement, params))

    async def _reading(self, op: Callable[[], Awaitable[T]]) -> T:
        """A read runs once more on a fresh connection when its pooled one was dead;
        a database that stays away is a 503."""
        for attempt in range(2):
            try:
                return await op()
            except DBAPIError as exc:
                if isinstance(exc, IntegrityError):
                    raise
                if attempt == 0 and _stale(exc):
                    log.info("connection lost during a read; retrying on a fresh one")
                    continue
                raise self._unavailable(exc) from exc
            except OSError as exc:  # the driver's connect: refused, reset, timed out
                raise _down(exc) from exc
        raise AssertionError("unreachable")

    async def write(
        self,
        fn: Callable[[AsyncSession], Awaitable[T]],
        *,
        lock_timeout_s: float | None = None,
        attempts: int = 4,
    ) -> T:
        """Run ``fn`` in one write transaction and commit it, or roll all of it back."""
        token = after_conflict.set(False)
        try:
            return await self._write(fn, lock_timeout_s, attempts)
        finally:
            after_conflict.reset(token)

    async def _write(
        self,
        fn: Callable[[AsyncSession], Awaitable[T]],
        lock_timeout_s: float | None,
        attempts: int,
    ) -> T:
        lock_timeout_s = self.lock_timeout_s if lock_timeout_s is None else lock_timeout_s
        for attempt in range(attempts):
            in_unit = False
            try:
                if attempt:
                    after_conflict.set(True)
                async with self._writer() as session, session.begin():
                    if not self.is_sqlite and lock_timeout_s != self.lock_timeout_s:
                        await session.execute(
                            text(f"SET LOCAL lock_timeout = '{int(lock_timeout_s * 1000)}ms'")
                        )
                    in_unit = True
                    result = await fn(session)
                    await flush(session)
                    in_unit = False
                    info = session.info
                # Committed: values the last statement took (an invoice number) replace
                # their placeholders in the result.
                return resolved(result, info)
            except IntegrityError:
                # A concurrent twin won a unique race (invoice number, token, counter):
                # run again; this time the twin's committed row is visible.
                if attempt == attempts - 1:
                    raise
                log.info("write lost a unique race; retrying (attempt %d)", attempt + 2)
            except DBAPIError as exc:
                code = _sqlstate(exc)
                if in_unit and attempt < attempts - 1 and _stale(exc):
                    # The connection died before COMMIT was sent: nothing was written.
                    log.info("connection lost before commit; retrying (attempt %d)", attempt + 2)
                    continue
                if code in RETRYABLE_PG_CODES and attempt < attempts - 1:
                    await asyncio.sleep(0.01 * (attempt + 1))
                    continue
                if code == LOCK_TIMEOUT_PG_CODE:
                    raise Conflict(
                        "another request holds the same records; retry shortly",
                        headers={"Retry-After": "1"},
                    ) from exc
                raise self._unavailable(exc) from exc
            except OSError as exc:  # the driver's connect: refused, reset, timed out
                raise _down(exc) from exc
        raise AssertionError("unreachable")

    async def standalone(self, fn: Callable[[AsyncSession], Awaitable[T]]) -> T:
        """A separate short transaction (failed-transaction records, audit)."""
        async with self._writer() as session, session.begin():
            return await fn(session)

    @staticmethod
    def _unavailable(exc: DBAPIError) -> Exception:
        if (
            isinstance(exc, OperationalError)
            or exc.connection_invalidated
            or _is_connection_error(exc)
        ):
            return _down(exc.orig or exc)
        return exc


async def _first(
    session: AsyncSession, statement: Executable, params: dict[str, Any]
) -> Row[Any] | None:
    return (await session.execute(statement, params)).first()


def _stale(exc: DBAPIError) -> bool:
    """A pooled connection the server dropped (terminated backend, restart, idle
    timeout): SQLAlchemy invalidates it, and a fresh one may well work."""
    return bool(exc.connection_invalidated)


def _down(cause: BaseException) -> ServiceUnavailable:
    log.warning("database unavailable: %s: %s", type(cause).__name__, cause)
    return ServiceUnavailable(headers={"Retry-After": "2"})


def _is_connection_error(exc: DBAPIError) -> bool:
    code = _sqlstate(exc)
    if code is not None and (code.startswith("08") or code in UNAVAILABLE_PG_CODES):
        return True
    # the driver's own exception: SQLAlchemy's asyncpg adapter keeps it as the cause
    causes = (exc.orig, exc.orig.__cause__ if exc.orig is not None else None)
    names = [type(c).__name__ for c in causes if c is not None]
    markers = ("Connection", "CannotConnectNow", "AdminShutdown", "InterfaceError")
    return any(m in name for name in names for m in markers)


_INSERTS: dict[Table, Insert] = {}
_ARRAY_INSERTS: dict[tuple[Table, tuple[str, ...]], Insert] = {}


async def insert_returning_ids(
    session: AsyncSession, table: Table, rows: Sequence[Mapping[str, Any]]
) -> list[int]:
    """Insert rows into a table in one statement and return their ids in row order.

    For write paths that need ids but no ORM objects: statements built once per
    table, no unit-of-work flush (about a third of the CPU of ``add`` + ``flush``).
    Several rows on PostgreSQL go as one array insert (``_array_insert``) on the
    asyncpg connection; elsewhere as SQLAlchemy's multi-row insert, which sorts
    the returned ids by a sentinel column."""
    if not rows:
        return []
    if len(rows) > 1 and on_postgresql(session):
        columns = tuple(rows[0])
        params = {f"arr_{c}": [row[c] for row in rows] for c in columns}
        # Sorted: each row takes its id from the sequence as the SELECT yields it,
        # in row order, whatever order RETURNING lists them in.
        return sorted(r[0] for r in await run(session, _array_insert(table, columns), params))
    statement = _INSERTS.get(table)
    if statement is None:
        statement = insert(table).returning(table.c.id, sort_by_parameter_order=True)
        _INSERTS[table] = statement
    if len(rows) == 1:
        return [(await run(session, statement, rows[0]))[0][0]]
    return list((await session.execute(statement, list(rows))).scalars())


def _array_insert(table: Table, columns: tuple[str, ...]) -> Insert:
    """``INSERT … SELECT … FROM unnest(:arrays) WITH ORDINALITY ORDER BY ordinality
    RETURNING id``: one prebuilt statement whatever the number of rows (a VALUES list
    is a new statement for every count). The SELECT yields the rows in their order
    (one sort over the ordinality; an INSERT never runs a parallel plan) and each
    takes the next id of the sequence as it is inserted, so the ids, sorted, are in
    row order; ``tests/test_db.py`` holds it to that."""
    statement = _ARRAY_INSERTS.get((table, columns))
    if statement is None:
        binds = [bindparam(f"arr_{c}", type_=ARRAY(table.c[c].type)) for c in columns]
        rows = (
            func.unnest(*binds)
            .table_valued(*columns, with_ordinality="ordinality")
            .render_derived(name=f"arr_{table.name}")
        )
        select_rows = select(*(rows.c[c] for c in columns)).order_by(rows.c.ordinality)
        statement = insert(table).from_select(list(columns), select_rows).returning(table.c.id)
        _ARRAY_INSERTS[(table, columns)] = statement
    return statement
