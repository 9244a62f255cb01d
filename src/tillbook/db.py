"""Engines, reads, and running a unit of work: one transaction per request,
committed in one place.

Services receive a ``UnitOfWork`` (``tillbook.unit``) or, on cold paths, its
``AsyncSession``; they flush and never commit. ``Database.unit`` owns the
transaction: it commits once, and runs the whole unit again when the failure has
a name that says a re-run can succeed (``tillbook.unit``: a lost unique race on a
named constraint, a guard whose premise a neighbour changed, a serialization
failure or deadlock, a connection that died before COMMIT was sent); a database
that stays away is a clean 503, a lock wait past the timeout a 409.

Pooled PostgreSQL connections are not pinged at checkout: SQLAlchemy's pre-ping
costs three round trips (BEGIN, ``;``, ROLLBACK) on every checkout. A dead
connection instead fails its first statement; nothing can have been committed
then, so the unit runs again on a fresh connection.

With a read replica (``read_url``, ``TILLBOOK_READ_DATABASE_URL``), the reads that
may lag (``replica_read``: reports, back-office lists, the till change feeds) go
to it; writes, idempotent replays and every read that decides a write stay on the
primary (``read``, ``unit``). A replica that is down, or that cancels a read in
conflict with its replay, sends the read to the primary instead.

SQLite (the embedded default) has one writer: writes go through a dedicated
engine with a single pooled connection and ``BEGIN IMMEDIATE``, so two writers in
one process queue instead of failing, and several processes wait on
``busy_timeout``. PostgreSQL takes row locks instead.

Behind PgBouncer in transaction pooling mode (the URL says so: ``?pooler=pgbouncer``,
docs/operators/scaling.md), consecutive transactions of one client connection may
run on different server connections, so nothing may outlive a transaction:
prepared statements are anonymous (parsed again with every execution), and the
lock timeout is set per transaction (``SET LOCAL``) rather than as a connection
parameter, which PgBouncer refuses at login.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import os
import sqlite3
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from sqlalchemy import Engine, Executable, Select, String, bindparam, event, text
from sqlalchemy import create_engine as create_sync_engine
from sqlalchemy.dialects.postgresql.asyncpg import dialect as asyncpg_dialect
from sqlalchemy.engine import URL, Dialect, make_url
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)
from sqlalchemy.util import greenlet_spawn

from tillbook.errors import Conflict, ServiceUnavailable, Unprocessable
from tillbook.kit import generations
from tillbook.unit import (
    ANONYMOUS,
    GateTimeout,
    PremiseGone,
    UnitOfWork,
    driver_fetch,
    driver_sql,
    is_database_error,
    is_lock_timeout,
    is_out_of_range,
    is_transient,
    is_unique_race,
    rows_array,
    sqlstate,
    statement_observers,
)

log = logging.getLogger("tillbook.db")
T = TypeVar("T")

# Called after every committed write of this process (``Database.unit``,
# ``standalone``): what a process remembers of the database's rows, such as the
# verified key lookups of ``auth.service``, is forgotten when it writes.
commit_observers: list[Callable[[], None]] = []


# A row by column name: asyncpg's record or SQLAlchemy's row mapping (whose keys may
# also be columns, hence not ``Mapping[str, Any]``).
Record = Mapping[Any, Any]
AnySelect = Select[*tuple[Any, ...]]


class Reads(Protocol):
    """Prebuilt read statements (built once, their values named by ``bindparam``)
    run outside any transaction: the hot reads (a product or a sale by id, a page of
    a change feed), where SQLAlchemy's compilation of a freshly built statement and
    the BEGIN and COMMIT round trips of a read transaction cost more than the rows.

    At READ COMMITTED a transaction gives its statements no common snapshot
    anyway, so a read of several statements sees the same as in one. Rows are
    mappings by column name (asyncpg's records on PostgreSQL, SQLAlchemy's row
    mappings on SQLite); values must be ones the driver returns as they are
    (numbers, text, dates, booleans: no JSON or enum columns)."""

    async def all(self, statement: Executable, params: Mapping[str, Any]) -> Sequence[Record]: ...

    async def one(
        self,
        statement: AnySelect,
        params: Mapping[str, Any],
        **lists: AnySelect,
    ) -> tuple[Record, dict[str, list[Record]]] | None:
        """The first row of ``statement`` and, by name, the rows of each of ``lists``
        (statements over the same ``params``: a product's barcodes, a sale's lines),
        or None when ``statement`` finds nothing."""
        ...


# The statement ``_DriverReads.one`` sends for a row and its lists, by the ids of the
# statements it is made of (which are built once, at import; the parts are held so
# that their ids are never another's).
_nested: dict[
    tuple[int, tuple[tuple[str, int], ...]],
    tuple[Any, AnySelect, tuple[tuple[str, str, tuple[str, ...]], ...]],
] = {}


def _nest(
    main: AnySelect, lists: Mapping[str, AnySelect]
) -> tuple[AnySelect, tuple[tuple[str, str, tuple[str, ...]], ...]]:
    """``main`` with each of ``lists`` as one more column (``unit.rows_array``), and
    for each list its name, its column's label and its own columns' names (a
    statement's ``selected_columns.keys()`` is built afresh at each call: 20 µs of a
    sale read's CPU for its three lists). One statement and one round trip for a
    row and its children: on a loopback connection each round trip's send is a
    system call doing the TCP work of both ends, the largest cost of a read by id."""
    key = (id(main), tuple((name, id(child)) for name, child in lists.items()))
    found = _nested.get(key)
    if found is None:
        columns = [rows_array(child).label(f"_list_{name}") for name, child in lists.items()]
        shapes = tuple(
            (name, f"_list_{name}", tuple(child.selected_columns.keys()))
            for name, child in lists.items()
        )
        found = _nested[key] = ((main, lists), main.add_columns(*columns), shapes)
    return found[1], found[2]


class _DriverReads:
    """``Reads`` on the asyncpg connection under one pooled connection (PostgreSQL):
    each statement compiled once (``unit.driver_sql``), prepared once per connection
    by asyncpg, sent as one round trip."""

    def __init__(self, raw: Any, dialect: Dialect):
        self.raw = raw
        self.dialect = dialect

    async def all(self, statement: Executable, params: Mapping[str, Any]) -> Sequence[Record]:
        compiled = driver_sql(statement, tuple(params), self.dialect)
        for observe in statement_observers:
            observe(compiled.sql)
        rows: Sequence[Record] = await driver_fetch(self.raw, compiled.sql, compiled.args(params))
        return rows

    async def one(
        self,
        statement: AnySelect,
        params: Mapping[str, Any],
        **lists: AnySelect,
    ) -> tuple[Record, dict[str, list[Record]]] | None:
        nested, shapes = _nest(statement, lists)
        rows = await self.all(nested, params)
        if not rows:
            return None
        row = rows[0]
        found: dict[str, list[Record]] = {}
        for name, label, keys in shapes:
            found[name] = [dict(zip(keys, values, strict=True)) for values in row[label]]
        return row, found


class _BareConnection:
    """An asyncpg connection as ``driver_fetch`` takes a pooled one."""

    def __init__(self, connection: Any):
        self.driver_connection = connection
        self.info: dict[str, Any] = {}


def driver_reads(connection: Any) -> Reads:
    """``Reads`` on a bare asyncpg ``connection``, outside the service's pool:
    the floor of the hot reads (``bench/floor.py``), which runs the service's own
    statements and builds its answers without its HTTP, keys or pool."""
    return _DriverReads(_BareConnection(connection), asyncpg_dialect())  # type: ignore[no-untyped-call]


class _ListsApart:
    """``Reads.one`` on SQLite: the row, then each list by a statement of its own
    (SQLite has no arrays of records to nest them in)."""

    async def all(self, statement: Executable, params: Mapping[str, Any]) -> Sequence[Record]:
        raise NotImplementedError

    async def one(
        self,
        statement: AnySelect,
        params: Mapping[str, Any],
        **lists: AnySelect,
    ) -> tuple[Record, dict[str, list[Record]]] | None:
        rows = await self.all(statement, params)
        if not rows:
            return None
        return rows[0], {name: list(await self.all(child, params)) for name, child in lists.items()}


class SessionReads(_ListsApart):
    """``Reads`` through a session: SQLite's (the embedded default), and a write
    unit's, whose reads see its own changes before COMMIT."""

    def __init__(self, session: AsyncSession):
        self.session = session

    async def all(self, statement: Executable, params: Mapping[str, Any]) -> Sequence[Record]:
        return (await self.session.execute(statement, dict(params))).mappings().all()


class _LoopReads(_ListsApart):
    """``Reads`` on a SQLite connection used in the event loop's own thread (the
    embedded default's hot reads, ``Database.reads``).

    aiosqlite runs every call of a connection (cursor, execute, fetch, close,
    commit) on a thread of its own and wakes the event loop for each answer: 40-70
    µs of CPU a call, about 1 ms a statement through the async engine, where SQLite
    itself answers a read by id in 10-40 µs. A product read paid 4-7 ms of CPU so.
    Here each statement is compiled once (``_LoopStatement``) and sent on the
    driver's connection in the loop's thread, for what SQLite costs. It blocks the
    loop while SQLite works, which for these reads (rows by id, a page of a feed)
    is less time than one wake-up of the thread took; the statements see one
    snapshot (a deferred ``BEGIN``), and never wait for a lock (``busy_timeout`` 0:
    a busy database sends the read the threaded way)."""

    def __init__(self, driver: sqlite3.Connection, dialect: Dialect):
        self.driver = driver
        self.dialect = dialect

    async def all(self, statement: Executable, params: Mapping[str, Any]) -> Sequence[Record]:
        shape = _loop_statement(statement, tuple(params), self.dialect)
        if shape is None:
            raise _NotForTheLoop
        for observe in statement_observers:
            observe(shape.sql)
        cursor = self.driver.execute(shape.sql, shape.args(params))
        try:
            return shape.rows(cursor)
        finally:
            cursor.close()


class _LoopStatement:
    """A SELECT's SQL for the sqlite3 driver with the SQLite dialect's own
    conversions of its values (a datetime to SQLAlchemy's stored text, a Decimal
    from SQLite's number), taken once from each column's and parameter's type with
    public SQLAlchemy API (``dialect_impl``, ``bind_processor``,
    ``result_processor``): what ``Connection.execute`` would do, without its
    per-statement setup (about 100 µs, more than SQLite's answer)."""

    def __init__(self, compiled: Any, statement: AnySelect, dialect: Dialect):
        self.compiled = compiled
        self.sql: str = compiled.sql
        binds = compiled.compiled.binds
        self.binds = [
            binds[name].type.dialect_impl(dialect).bind_processor(dialect)
            for name in compiled.names
        ]
        self.results = [
            column.type.dialect_impl(dialect).result_processor(dialect, None)
            for column in statement.selected_columns
        ]
        self.keys: list[str] | None = None
        self.converted: list[tuple[str, Callable[[Any], Any]]] = []

    def args(self, params: Mapping[str, Any]) -> list[Any]:
        values = self.compiled.args(params)
        return [
            value if process is None else process(value)
            for process, value in zip(self.binds, values, strict=True)
        ]

    def rows(self, cursor: Any) -> list[dict[str, Any]]:
        keys = self.keys
        if keys is None:  # the statement's labels, the same on every execution
            keys = [d[0] for d in cursor.description]
            last = {key: i for i, key in enumerate(keys)}  # a repeated label: the last wins
            self.converted = [
                (key, process)
                for i, (key, process) in enumerate(zip(keys, self.results, strict=True))
                if process is not None and last[key] == i
            ]
            self.keys = keys
        # Each row made by ``dict(zip(...))``, then only the columns that need
        # converting (Decimals, times) set again: a third of the cost of converting
        # every column in one comprehension, where a feed page of 100 products
        # spent 30% of its CPU.
        converted = self.converted
        out = []
        for row in cursor.fetchall():
            record = dict(zip(keys, row, strict=True))
            for key, process in converted:
                record[key] = process(record[key])
            out.append(record)
        return out


class _NotForTheLoop(Exception):
    """A statement ``_LoopReads`` cannot send (not a SELECT, or an expanding IN):
    the read goes the threaded way, where SQLAlchemy runs anything."""


# By statement id and given names: the statement itself is held beside its shape, so
# that its id is never another's.
_loop_statements: dict[tuple[int, tuple[str, ...]], tuple[Executable, _LoopStatement | None]] = {}


def _loop_statement(
    statement: Executable, keys: tuple[str, ...], dialect: Dialect
) -> _LoopStatement | None:
    """``statement``'s ``_LoopStatement``, made once per statement and set of given
    names; None for one it cannot send so (not a SELECT, or an expanding IN whose SQL
    depends on its values)."""
    cache_key = (id(statement), keys)
    found = _loop_statements.get(cache_key)
    if found is not None:
        return found[1]
    shape = None
    if isinstance(statement, Select):
        compiled = driver_sql(statement, keys, dialect)
        if "POSTCOMPILE" not in compiled.sql:
            shape = _LoopStatement(compiled, statement, dialect)
    _loop_statements[cache_key] = (statement, shape)
    return shape


def _loop_engine(url: str, pool_size: int) -> Engine | None:
    """The synchronous engine of ``_LoopReads`` for a SQLite file (None in memory,
    where another engine would open another database). Its connections only read
    (``query_only``) and never wait (``busy_timeout`` 0); the pool grows past its
    size rather than make the loop's thread wait for a connection."""
    parsed = make_url(url)
    if parsed.database in (None, "", ":memory:"):
        return None
    engine = create_sync_engine(
        parsed.set(drivername="sqlite+pysqlite"),
        pool_size=pool_size,
        max_overflow=-1,
        hide_parameters=True,
    )

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA busy_timeout=0")
        cursor.execute("PRAGMA query_only=ON")
        cursor.close()

    return engine


# SQLite's primary result codes for a lock another connection holds: an extended code
# (SQLITE_BUSY_RECOVERY, a log rebuilt after a crash) carries one in its low byte.
_SQLITE_BUSY, _SQLITE_LOCKED = 5, 6


def _busy(exc: BaseException) -> bool:
    """SQLite's driver error (or SQLAlchemy's around it) says a lock is held."""
    driver = getattr(exc, "orig", None) or exc
    code = getattr(driver, "sqlite_errorcode", None)
    return isinstance(code, int) and code & 0xFF in (_SQLITE_BUSY, _SQLITE_LOCKED)


def _committed(page: generations.Generations) -> None:
    """After a write's COMMIT (or one whose outcome is unknown), before it answers:
    the answers and key lookups this host's processes keep forget what it may have
    changed."""
    generations.committed(page)  # ``kit.generations``
    for observe in commit_observers:
        observe()


# A read session's ``info`` names its Database under this key: a report that finds
# work to do first (``ledger.rollups.current``) runs it in transactions of its own.
DATABASE = "tillbook.database"
_IN_UNIT: contextvars.ContextVar[bool] = contextvars.ContextVar("tillbook_in_unit", default=False)


def in_write_unit() -> bool:
    """Whether this task runs inside a write unit: a write of its own would wait
    for the unit's locks (SQLite's one write connection, PostgreSQL's rows)."""
    return _IN_UNIT.get()


# Every statement on a tenant table names one company_id, so that a database
# distributed by company (Citus, docs/operators/scaling.md) routes it to one node;
# ``tests/router_check.py`` holds the whole test suite to it. The work below is
# cross-tenant by nature and runs inside ``cross_tenant(name)``: on Citus those
# statements run on every shard, which is allowed because it is chosen here, once.
CROSS_TENANT: dict[str, str] = {
    "migrations": "a schema or data migration moves every company's rows",
    "authentication": "an API key, a back-office session token, a login email or a terminal "
    "callback's provider is looked up before its company is known (the lookup is what finds "
    "the company), and a staff email, being the login, is unique across companies",
    "operator": "the operator's command line names a key by its public key, or a warehouse "
    "or a webhook delivery by its id, of whichever company, before it knows the company",
    "roll-ups": "the background roll-up step finds the companies whose past months are not "
    "rolled up yet, across every company, before it rolls each one up on its own",
    "outbox worker": "the webhook worker fans out new events and claims due deliveries of "
    "every company at once (FOR UPDATE SKIP LOCKED), so one company's backlog never "
    "waits behind another's",
    "other writers": "a worker asks which processes of the service are connected to the "
    "database (pg_stat_activity), whatever company they serve, to know whether it sees "
    "all of their writes",
}
_CROSSING: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "tillbook_cross_tenant", default=None
)


@contextlib.contextmanager
def cross_tenant(name: str) -> Iterator[None]:
    """Mark the statements sent inside as deliberately cross-tenant, for the reason
    ``CROSS_TENANT[name]`` gives (a name not in the list is a programming error)."""
    if name not in CROSS_TENANT:
        raise KeyError(f"{name!r} is not in tillbook.db.CROSS_TENANT")
    token = _CROSSING.set(name)
    try:
        yield
    finally:
        _CROSSING.reset(token)


def crossing_tenants() -> str | None:
    """The ``CROSS_TENANT`` name the current statements run under, if any."""
    return _CROSSING.get()


# admin shutdown, crash shutdown, cannot connect now (starting up or shutting down),
# too many connections; and every code of class 08, connection exception
UNAVAILABLE_PG_CODES = {"57P01", "57P02", "57P03", "53300"}
# A hot standby cancels a query whose rows its replay must remove or lock
# ("canceling statement due to conflict with recovery").
RECOVERY_CONFLICT = "40001"


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


# What every connection of a ``Database`` is named in ``pg_stat_activity``, followed by
# its page's signature (``Database.shares_writes``).
APPLICATION = "tillbook"
_OTHER_WRITERS = text(
    "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() "
    f"AND application_name LIKE '{APPLICATION} %' AND application_name <> :mine LIMIT 1"
).bindparams(bindparam("mine", type_=String))


def identity(url: str) -> str | None:
    """The database ``url`` reaches, as every process of the host that reaches it by
    the same address names it (``kit.generations``): a SQLite file by its real path,
    a PostgreSQL database by server and name, without user, password or options.
    None for a database in memory. Two addresses of one database (a pooler's and
    the server's, ``localhost`` and ``127.0.0.1``) name two."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        path = (parsed.database or "").removeprefix("file:").split("?", 1)[0]
        in_memory = parsed.query.get("mode") == "memory" or "mode=memory" in (parsed.database or "")
        if path in ("", ":memory:") or in_memory:
            return None
        return "sqlite:" + os.path.realpath(path)
    return f"postgresql://{parsed.host or ''}:{parsed.port or 5432}/{parsed.database or ''}"


# The query parameter of a PostgreSQL URL that names the pooler in front of it
# (tillbook's own: it is taken off before the URL reaches the driver).
POOLER_PARAM = "pooler"
POOLERS = ("pgbouncer",)


def split_pooler(url: str) -> tuple[URL, str | None]:
    """``url`` with the async driver and without ``pooler=``, and the pooler it names."""
    parsed = make_url(async_url(url))
    pooler = parsed.query.get(POOLER_PARAM)
    if pooler is None:
        return parsed, None
    if not isinstance(pooler, str) or pooler not in POOLERS:
        raise ValueError(f"unsupported {POOLER_PARAM}={pooler!r}: use one of {', '.join(POOLERS)}")
    if parsed.get_backend_name() != "postgresql":
        raise ValueError(f"{POOLER_PARAM}= applies to PostgreSQL URLs only")
    return parsed.difference_update_query([POOLER_PARAM]), pooler


# How PostgreSQL plans the statements a connection has prepared (asyncpg prepares
# and keeps every statement it sends, per connection): once, with its values as
# parameters. By default (``auto``) it plans a statement afresh for each execution's
# values for five executions, then keeps its generic plan only if that looks no
# costlier than the average of those; a statement reading by an array of ids or a
# ``LIMIT`` never passes that test, so a sale's products, its FIFO layers, its
# order's insert and its last statement were planned again at every sale (up to a
# fifth of PostgreSQL's CPU per sale; bench/README.md). The hot paths' statements
# are keyed by ids and the company, where the plan does not depend on the values.
# Reads through a session (``Database.read``: reports and back-office pages, whose
# best plan does depend on their dates and filters), and the writes that aggregate
# over dates (a month's roll-up, a period's close), keep the default per
# transaction (``plans_by_values``).
GENERIC_PLANS = {"plan_cache_mode": "force_generic_plan"}
PLANS_BY_VALUES = text("SET LOCAL plan_cache_mode = auto")


async def plans_by_values(session: AsyncSession) -> None:
    """Plan this transaction's statements for their values (``GENERIC_PLANS``): for a
    read through a session, and for a write that aggregates over a range of dates.
    Behind a pooler, where statements are planned as they run anyway, it changes
    nothing (session reads skip it there: ``Database.generic_plans``)."""
    if session.get_bind().dialect.name == "postgresql":
        await session.execute(PLANS_BY_VALUES)


def create_engine(
    url: str,
    *,
    server_settings: Mapping[str, str] | None = None,
    generic_plans: bool = False,
    application_name: str | None = None,
    **kwargs: Any,
) -> AsyncEngine:
    """An async engine for ``url`` whose connections run with ``server_settings``,
    and plan the statements they prepare once (``GENERIC_PLANS``) with
    ``generic_plans``, named ``application_name`` in ``pg_stat_activity`` (a login
    parameter PgBouncer passes on).

    Behind a transaction pooler, its connections keep nothing on the server
    between transactions: asyncpg's statement cache is off, so its statements are
    anonymous (``driver_fetch`` keeps them on the client, and PostgreSQL plans each
    one as it runs it, so ``generic_plans`` has nothing to apply to), and the
    settings, which PgBouncer refuses as login parameters and would in any case
    leave on whichever server connection took them, are set at the start of every
    transaction (``SET LOCAL``, sent with its first statement: one round trip more
    each)."""
    parsed, pooler = split_pooler(url)
    named = {} if application_name is None else {"application_name": application_name}
    if pooler is None:
        on_connect = {
            **(server_settings or {}),
            **(GENERIC_PLANS if generic_plans else {}),
            **named,
        }
        if on_connect:
            kwargs["connect_args"] = {"server_settings": on_connect}
        return create_async_engine(parsed, **kwargs)
    engine = create_async_engine(
        parsed, connect_args={"statement_cache_size": 0, "server_settings": named}, **kwargs
    )
    settings = "; ".join(
        f"SET LOCAL {name} = '{value}'" for name, value in (server_settings or {}).items()
    )

    @event.listens_for(engine.sync_engine, "connect")
    def _connect(_dbapi_connection: Any, record: Any) -> None:
        record.info[ANONYMOUS] = {}

    if settings:

        @event.listens_for(engine.sync_engine, "begin")
        def _begin(connection: Any) -> None:
            connection.exec_driver_sql(settings)

    return engine


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


class Database:
    def __init__(
        self,
        url: str,
        *,
        read_url: str | None = None,
        pool_size: int = 10,
        lock_timeout_s: float = 5.0,
    ):
        self.url = async_url(url)
        self.lock_timeout_s = lock_timeout_s
        # What this host's processes have written to it (``kit.generations``), and
        # the name its connections show (``shares_writes``).
        self.generations = generations.of_database(identity(url))
        self.application_name = f"{APPLICATION} {self.generations.signature}"
        self.is_sqlite = self.url.startswith("sqlite")
        self.pooler = split_pooler(url)[1]
        # (``GENERIC_PLANS``: PostgreSQL's prepared statements, not a pooler's)
        self.generic_plans = not self.is_sqlite and self.pooler is None
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
            self._loop_engine = _loop_engine(self.url, pool_size)
        else:
            self.engine = create_engine(
                self.url,
                pool_size=pool_size,
                max_overflow=pool_size,
                pool_recycle=1800,
                hide_parameters=True,
                # Set once per connection instead of a SET LOCAL round trip per write
                # (behind a pooler, per transaction: ``create_engine``).
                server_settings={"lock_timeout": str(int(lock_timeout_s * 1000))},
                generic_plans=True,
                application_name=self.application_name,
            )
            self.write_engine = self.engine
            self._loop_engine = None
        self._reader = async_sessionmaker(
            self.engine, expire_on_commit=False, autoflush=False, info={DATABASE: self}
        )
        self._writer = async_sessionmaker(
            self.write_engine, expire_on_commit=False, autoflush=False
        )
        self.replica_engine: AsyncEngine | None = None
        self._replica_reader = self._reader
        if read_url:
            if self.is_sqlite or split_pooler(read_url)[0].get_backend_name() != "postgresql":
                raise ValueError("a read replica is a PostgreSQL replica of a PostgreSQL primary")
            self.replica_engine = create_engine(
                read_url,
                pool_size=pool_size,
                max_overflow=pool_size,
                pool_recycle=1800,
                hide_parameters=True,
                server_settings={"lock_timeout": str(int(lock_timeout_s * 1000))},
                generic_plans=True,
            )
            self._replica_reader = async_sessionmaker(
                self.replica_engine, expire_on_commit=False, autoflush=False
            )

    async def shares_writes(self) -> bool:
        """Whether every process of the service connected to this database writes to
        this process's page of ``kit.generations`` (so that its answers see their
        writes at once): on PostgreSQL, none of the connections named
        ``tillbook …`` (``application_name``, set on every connection of a
        ``Database``) bears another page's signature: another host's, or this host's
        reaching the database by another address. SQLite's file is this host's: its
        writers share the page, unless this process could not map it."""
        if self.is_sqlite:
            return self.generations.trusted
        with cross_tenant("other writers"):
            rows = await self.reads(
                lambda r: r.all(_OTHER_WRITERS, {"mine": self.application_name})
            )
        return not rows

    async def dispose(self) -> None:
        await self.engine.dispose()
        if self.write_engine is not self.engine:
            await self.write_engine.dispose()
        if self.replica_engine is not None:
            await self.replica_engine.dispose()
        if self._loop_engine is not None:
            self._loop_engine.dispose()

    async def keep_statistics(self, stop: asyncio.Event, every_s: float = 600) -> None:
        """``tillbook serve``'s upkeep of SQLite's planner statistics: ``analyze`` at
        the start and every ``every_s`` seconds (PostgreSQL keeps its own)."""
        if not self.is_sqlite:
            return
        while not stop.is_set():
            try:
                await self.analyze()
            except Exception:
                log.exception("ANALYZE failed")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), every_s)

    async def analyze(self) -> None:
        """SQLite's ``ANALYZE``, each index sampled (``analysis_limit``: tens of ms
        whatever the size). Without statistics SQLite takes any equality for the
        most selective condition: a feed page's barcodes were read through the
        company's index, every barcode of the company, instead of by the page's
        product ids (1.4 ms against 0.4 for a page of 100). ``PRAGMA optimize``
        would not do it here: before SQLite 3.46 it analyzes only tables its own
        connection has queried."""
        if not self.is_sqlite:
            return
        async with self.write_engine.connect() as connection:
            await connection.exec_driver_sql("PRAGMA analysis_limit=1000")
            await connection.exec_driver_sql("ANALYZE")
            await connection.commit()
        # A connection loads the statistics when it first reads the schema, and
        # ANALYZE does not change the schema's version: the pools start afresh (a
        # connection out in a request is closed when it comes back).
        await self.engine.dispose()
        await self.write_engine.dispose()
        if self._loop_engine is not None:
            self._loop_engine.dispose()

    async def read(self, fn: Callable[[AsyncSession], Awaitable[T]]) -> T:
        """A read on the primary: what it sees is what a write would see."""
        return await self._reading(
            lambda: _in_transaction(self._reader, fn, by_values=self.generic_plans)
        )

    async def replica_read(self, fn: Callable[[AsyncSession], Awaitable[T]]) -> T:
        """A read that may lag behind the primary (reports, back-office lists, change
        feeds), on the read replica when there is one; never one a write is decided
        on. A replica that is down or cancels the read (a conflict with its replay)
        costs a retry on the primary, not an error."""
        if self.replica_engine is None:
            return await self.read(fn)
        return await self._from_replica(
            lambda: self._reading(
                lambda: _in_transaction(self._replica_reader, fn, by_values=self.generic_plans)
            ),
            lambda: self.read(fn),
        )

    @staticmethod
    async def _from_replica(
        replica: Callable[[], Awaitable[T]], primary: Callable[[], Awaitable[T]]
    ) -> T:
        """``replica``'s answer; ``primary``'s when the replica is down or cancels
        the read in conflict with its replay (a retry, not an error)."""
        try:
            return await replica()
        except ServiceUnavailable:
            log.warning("read replica unavailable; reading the primary")
        except Exception as exc:
            if not is_database_error(exc) or sqlstate(exc) != RECOVERY_CONFLICT:
                raise
            log.info("read cancelled by the replica's replay; reading the primary")
        return await primary()

    async def reads(self, fn: Callable[[Reads], Awaitable[T]]) -> T:
        """``fn``'s prebuilt statements on the primary, outside a transaction
        (``Reads``)."""
        if self.is_sqlite:
            return await self._sqlite_reads(fn)
        return await self._reading(lambda: _on_driver(self.engine, fn))

    async def _sqlite_reads(self, fn: Callable[[Reads], Awaitable[T]]) -> T:
        """``fn`` in the loop's thread (``_LoopReads``); through the async engine's
        thread when the database is busy (a writer's checkpoint or recovery holds
        a lock a reader must wait for) or in memory."""
        if self._loop_engine is not None:
            try:
                # The pooled driver connection itself: SQLAlchemy's Connection around
                # it (events, transaction object) cost more than a read by id. The
                # pool's reset on return rolls the snapshot back.
                pooled = self._loop_engine.raw_connection()
                try:
                    driver = pooled.dbapi_connection
                    assert isinstance(driver, sqlite3.Connection)
                    driver.execute("BEGIN")
                    return await fn(_LoopReads(driver, self._loop_engine.dialect))
                finally:
                    pooled.close()
            except _NotForTheLoop:
                pass
            except (OperationalError, sqlite3.OperationalError) as exc:
                if not _busy(exc):
                    raise self._unavailable(exc) from exc
                log.debug("database busy; reading through the async engine")
        return await self.read(lambda s: fn(SessionReads(s)))

    async def replica_reads(self, fn: Callable[[Reads], Awaitable[T]]) -> T:
        """``reads`` that may lag behind the primary (the change feeds), on the
        replica when there is one, as ``replica_read``."""
        if self.replica_engine is None:
            return await self.reads(fn)
        replica = self.replica_engine
        return await self._from_replica(
            lambda: self._reading(lambda: _on_driver(replica, fn)), lambda: self.reads(fn)
        )

    async def first(
        self, statement: Executable, params: dict[str, Any]
    ) -> Mapping[str, Any] | None:
        """The first row of one prebuilt read, by column name, outside any transaction
        on PostgreSQL (no BEGIN and COMMIT round trips: the statement goes on the
        driver connection, which SQLAlchemy has not begun a transaction on); used on
        every request by the key lookup."""
        rows = await self.reads(lambda r: r.all(statement, params))
        return dict(rows[0]) if rows else None

    async def _reading(self, op: Callable[[], Awaitable[T]]) -> T:
        """A read runs once more on a fresh connection when its pooled one was dead;
        a database that stays away is a 503."""
        for attempt in range(2):
            try:
                return await op()
            except Exception as exc:
                if not (is_database_error(exc) or isinstance(exc, OSError)):
                    raise
                if isinstance(exc, IntegrityError):
                    raise
                if attempt == 0 and _connection_lost(exc):
                    log.info("connection lost during a read; retrying on a fresh one")
                    continue
                raise self._unavailable(exc) from exc
        raise AssertionError("unreachable")

    async def write(
        self,
        fn: Callable[[AsyncSession], Awaitable[T]],
        *,
        lock_timeout_s: float | None = None,
        attempts: int = 4,
    ) -> T:
        """Run ``fn`` on the session of one unit of work (the cold paths, which need
        nothing of the unit but its transaction)."""
        return await self.unit(
            lambda uow: fn(uow.session), lock_timeout_s=lock_timeout_s, attempts=attempts
        )

    async def unit(
        self,
        fn: Callable[[UnitOfWork], Awaitable[T]],
        *,
        lock_timeout_s: float | None = None,
        attempts: int = 8,
    ) -> T:
        """Run ``fn`` in one write transaction and commit it, or roll all of it back;
        run it again, up to ``attempts`` times, when the failure says a re-run can
        succeed."""
        lock_timeout_s = self.lock_timeout_s if lock_timeout_s is None else lock_timeout_s
        unique_race = False
        for attempt in range(attempts):
            last = attempt == attempts - 1
            try:
                return await self._once(fn, attempt, unique_race, lock_timeout_s)
            except GateTimeout as exc:
                raise Conflict(
                    "another request holds the same records; retry shortly",
                    headers={"Retry-After": "1"},
                ) from exc
            except PremiseGone as exc:
                if last:
                    raise Conflict(
                        "too many concurrent changes to the same stock; retry shortly",
                        headers={"Retry-After": "1"},
                    ) from exc
                log.debug("premise gone (%s); running the unit again", exc)
                await asyncio.sleep(0)
            except _LostBeforeCommit as exc:
                if last:
                    raise _down(exc.cause) from exc.cause
                log.info("connection lost before commit; retrying (attempt %d)", attempt + 2)
            except Exception as exc:
                if not (is_database_error(exc) or isinstance(exc, OSError)):
                    raise
                if is_unique_race(exc) and not last:
                    # A concurrent twin won a unique race: run again; this time the
                    # twin's committed row is visible.
                    unique_race = True
                    log.info("write lost a unique race; retrying (attempt %d)", attempt + 2)
                    continue
                if is_transient(exc) and not last:
                    await asyncio.sleep(0.01 * (attempt + 1))
                    continue
                if is_out_of_range(exc):
                    raise Unprocessable(
                        "a value this write produces is beyond what the books hold; "
                        "nothing was recorded"
                    ) from exc
                if is_lock_timeout(exc):
                    raise Conflict(
                        "another request holds the same records; retry shortly",
                        headers={"Retry-After": "1"},
                    ) from exc
                if isinstance(exc, IntegrityError):
                    raise
                raise self._unavailable(exc) from exc
        raise AssertionError("unreachable")

    async def _once(
        self,
        fn: Callable[[UnitOfWork], Awaitable[T]],
        attempt: int,
        unique_race: bool,
        lock_timeout_s: float,
    ) -> T:
        async with self._writer() as session:
            in_unit = False
            uow: UnitOfWork | None = None
            try:
                async with session.begin():
                    if not self.is_sqlite and lock_timeout_s != self.lock_timeout_s:
                        await self._set_lock_timeout(session, lock_timeout_s)
                    uow = UnitOfWork(
                        session,
                        attempt=attempt,
                        after_unique_race=unique_race,
                        lock_timeout_s=lock_timeout_s,
                    )
                    in_unit = True
                    token = _IN_UNIT.set(True)
                    try:
                        result = await fn(uow)
                    finally:
                        _IN_UNIT.reset(token)
                    await uow.finish()
                    in_unit = False
                _committed(self.generations)
                return uow.resolve(result)
            except Exception as exc:
                if uow is not None and not in_unit:
                    # Failed in COMMIT itself: it may have been written, so what this
                    # process remembers of the rows is forgotten as after a commit.
                    _committed(self.generations)
                if in_unit and _connection_lost(exc):
                    # The connection died before COMMIT was sent: nothing was written.
                    with contextlib.suppress(Exception):  # already dead: best effort
                        await (await session.connection()).invalidate()
                    raise _LostBeforeCommit(exc) from exc
                raise
            finally:
                if uow is not None:  # committed or rolled back by now
                    uow.release_gates()

    async def standalone(self, fn: Callable[[AsyncSession], Awaitable[T]]) -> T:
        """A separate short transaction (failed-transaction records, audit)."""
        async with self._writer() as session:
            async with session.begin():
                result = await fn(session)
            _committed(self.generations)
            return result

    @staticmethod
    async def _set_lock_timeout(session: AsyncSession, seconds: float) -> None:
        await session.execute(text(f"SET LOCAL lock_timeout = '{int(seconds * 1000)}ms'"))

    @staticmethod
    def _unavailable(exc: Exception) -> Exception:
        if isinstance(exc, OSError | OperationalError | sqlite3.OperationalError) or (
            _connection_lost(exc)
        ):
            cause: BaseException = getattr(exc, "orig", None) or exc
            return _down(cause)
        return exc


class _LostBeforeCommit(Exception):
    def __init__(self, cause: BaseException):
        super().__init__(str(cause))
        self.cause = cause


async def _in_transaction(
    maker: async_sessionmaker[AsyncSession],
    fn: Callable[[AsyncSession], Awaitable[T]],
    *,
    by_values: bool,
) -> T:
    """``fn`` in a read transaction; ``by_values``: its statements planned for their
    values (``plans_by_values``), on a connection that otherwise keeps generic
    plans."""
    async with maker() as session, session.begin():
        if by_values:
            await plans_by_values(session)
        return await fn(session)


async def _on_driver(engine: AsyncEngine, fn: Callable[[Reads], Awaitable[T]]) -> T:
    """``fn`` on the pooled connection itself, not a ``Connection`` around it:
    nothing here needs SQLAlchemy's transaction or events, and their setup and
    teardown cost as much CPU as a statement (50-100 µs of every request's key
    lookup). A connection found dead is discarded (``Database._reading`` retries)."""
    raw = await engine.raw_connection()
    try:
        return await fn(_DriverReads(raw, engine.dialect))
    except Exception as exc:
        if _connection_lost(exc):
            await greenlet_spawn(raw.invalidate, exc)
        raise
    finally:
        await greenlet_spawn(raw.close)  # back to the pool


def _connection_lost(exc: BaseException) -> bool:
    """A connection the server dropped or never gave (terminated backend, restart,
    refused connect): SQLAlchemy's own error marks it invalidated; the driver's
    errors name it; a fresh connection may well work."""
    if isinstance(exc, DBAPIError) and exc.connection_invalidated:
        return True
    if isinstance(exc, OSError):
        return True
    code = sqlstate(exc)
    if code is not None and (code.startswith("08") or code in UNAVAILABLE_PG_CODES):
        return True
    current: BaseException | None = exc
    seen: list[BaseException] = []
    # InternalClientError: asyncpg found its protocol mid-way through another
    # operation (one cut off when the server killed the backend): that connection
    # cannot be used again either.
    markers = ("ConnectionDoesNotExist", "ConnectionReset", "CannotConnectNow", "AdminShutdown",
               "InterfaceError", "ConnectionError", "InternalClientError")  # fmt: skip
    while current is not None and current not in seen:
        seen.append(current)
        if any(m in type(current).__name__ for m in markers):
            return True
        current = getattr(current, "orig", None) or current.__cause__
    return False


def _down(cause: BaseException) -> ServiceUnavailable:
    log.warning("database unavailable: %s: %s", type(cause).__name__, cause)
    return ServiceUnavailable(headers={"Retry-After": "2"})
