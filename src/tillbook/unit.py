"""The unit of work: one request's transaction, as an object the write path is handed.

A write runs in three parts, and the order is what keeps it fast when every till
sells the same item:

1. **Unlocked work.** Everything that can be read, priced and checked without a
   lock: the party, the products, their open FIFO layers, prices, taxes, the
   shortage check, the FIFO plan; and the rows nobody else touches (the order,
   its lines, its payments).
2. **The closing step.** The invoice number (a counter row per warehouse and
   type, locked from here to COMMIT, so numbers are gapless), the journal entry
   that names it. Every sale of a branch passes through that row, so units queue
   for it in their process first (``gate``), in arrival order. A sale on
   PostgreSQL takes its number in the last statement instead (``Late``), with its
   journal entry under an id reserved by its order's insert, so the row is held
   for that one statement and COMMIT.
3. **The last statement** (``finish``): the writes nothing in the unit reads back
   (stock movements, tender allocations, outbox events, the idempotency response)
   and the stock changes, as *guarded* updates: commutative increments whose
   ``WHERE`` states the premise the plan was made on (the layer still holds what
   the plan takes; stock does not go below zero). Row locks on hot stock rows are
   therefore held from that one statement to COMMIT. A guard that fails means a
   neighbour changed the premise (emptied the layer first): the unit raises
   ``PremiseGone`` and ``Database.unit`` runs it again on fresh reads.

On PostgreSQL the last statement is one statement of data-modifying CTEs, each
taking its rows as arrays (``unnest``), built once per combination of kinds; on
SQLite (one writer at a time, so guards always hold) each kind is one executemany.

Prebuilt statements of the hot path may run on the driver connection (``run``):
the same SQL SQLAlchemy compiles, sent with asyncpg's public ``fetch`` on the
connection the session's transaction is on (``AsyncConnection.get_raw_connection()
.driver_connection``), about a third of the CPU of ``session.execute``. The unit's
first statement always goes through the session, so that SQLAlchemy has begun the
transaction on that connection before the driver is used; ``tests/db/test_db.py``
pins that behaviour.

Which failures mean "run the unit again" is decided here, by name (``retry_reason``).
"""

from __future__ import annotations

import asyncio
import logging
import re
import uuid
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar, cast

from sqlalchemy import (
    ARRAY,
    BigInteger,
    BindParameter,
    ColumnElement,
    Dialect,
    Executable,
    Insert,
    Integer,
    Select,
    String,
    Table,
    Text,
    Update,
    and_,
    bindparam,
    func,
    insert,
    literal_column,
    select,
    update,
)
from sqlalchemy.engine import CursorResult
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.sql.visitors import replacement_traverse

from tillbook.models.base import Base

log = logging.getLogger("tillbook.unit")
Row = Mapping[str, Any]
T = TypeVar("T")

# Called with each statement's SQL sent through ``run`` or ``finish`` on the driver
# (SQLAlchemy's ``before_cursor_execute`` does not see those): the benchmark's tools
# (``bench/floor.py --capture``, ``bench/profile_sale.py``) count every statement, and
# the tests' router-query check (``tests/router_check.py``) reads each one.
statement_observers: list[Callable[[str], None]] = []


class PremiseGone(Exception):
    """A guarded update found its row changed since the unit read it (a neighbour
    emptied a FIFO layer or took the last stock): the unit must run again."""


# Unique constraints whose violation means a concurrent twin won a race, so that a
# re-run of the unit sees the twin's committed row and takes another path: a client
# invoice number (the same number sent twice at once, or a number the counter was
# about to issue), a terminal callback's reference, an outbox fan-out, an
# idempotency token, a customer's or supplier's code, a staff login email, a
# product's item code or barcode (two set-up writes at once: the re-run finds the
# value taken and answers 409 or 422), a customer's loyalty account (two first
# movements at once: the re-run finds the account). Any other integrity error is a
# bug or bad data, not a race.
RACE_CONSTRAINTS = frozenset(
    {
        "uq_orders_invoice_number",
        "uq_shifts_open_register",
        "uq_terminal_callback_ref",
        "uq_delivery_event_webhook",
        "uq_idempotency_token",
        "uq_idempotency_company_token",
        "pk_invoice_counters",
        "pk_staff_logins",
        "uq_users_company_type_code",
        "uq_products_company_item_code",
        "uq_product_barcodes_company_barcode",
        "uq_listings_warehouse_product",
        "uq_loyalty_accounts",
    }
)
SERIALIZATION_FAILURE = "40001"
DEADLOCK = "40P01"
LOCK_TIMEOUT = "55P03"
# A value beyond its NUMERIC column: the bounds of ``kit/bounds.py`` are checked on
# what each write reads, so only two concurrent writes pushing one balance past the
# limit together can reach the database with one.
NUMERIC_OUT_OF_RANGE = "22003"
# asyncpg's cached prepared statement after a schema change (feature not supported)
CACHED_STATEMENT = "0A000"


class Record:
    """One result row by position (``row[0]``) or by column name (``row["id"]``),
    whichever path ran the statement."""

    __slots__ = ("_index", "_values")

    def __init__(self, names: Sequence[str] | Mapping[str, int], values: Sequence[Any]):
        # (the rows of one result share one index: pass it as a mapping)
        self._index = (
            names if isinstance(names, Mapping) else {name: i for i, name in enumerate(names)}
        )
        self._values = tuple(values)

    def __getitem__(self, key: int | str) -> Any:
        return self._values[key if isinstance(key, int) else self._index[key]]

    def __iter__(self) -> Any:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def as_dict(self) -> dict[str, Any]:
        return {name: self._values[i] for name, i in self._index.items()}


def _records(names: Sequence[str], rows: Sequence[Any]) -> list[Record]:
    index = {name: i for i, name in enumerate(names)}
    return [Record(index, tuple(row)) for row in rows]


# ------------------------------------------------------------------ late values


class Late:
    """A value a unit knows only in its last statement, such as the invoice number
    a counter row gives (``orders.repository.LATE_NUMBER``).

    ``source`` is a data-modifying statement returning one row of one column (the
    counter's upsert): on PostgreSQL it runs as the first CTE of the unit's last
    statement, so the row it locks is held from there to COMMIT, one round trip,
    rather than from a statement of its own through the closing step. Until then
    the unit writes a placeholder (``UnitOfWork.late``): every text value of the
    queued writes has it replaced by the value in SQL, and what the unit returns
    has it replaced in Python (``UnitOfWork.resolve``). Nothing may write the
    placeholder outside the queue: ``tests/invariants.py`` looks for it in the
    stored text after every scenario."""

    def __init__(self, source: Insert, name: str):
        self.name = name
        self.cte = source.cte(f"late_{name}")
        self.placeholder = bindparam(f"late_{name}_placeholder", type_=Text)
        self.value = select(*self.cte.c).scalar_subquery()

    def resolve(self, expression: Any) -> Any:
        """``expression`` with the placeholder replaced by the value."""
        return func.replace(expression, self.placeholder, self.value)


PLACEHOLDER_PREFIX = "~late~"  # (ASCII that JSON keeps as it is)
_PLACEHOLDER = re.compile(re.escape(PLACEHOLDER_PREFIX) + "[0-9a-f]{32}")


def unresolved(text: str, instead: str) -> str:
    """``text`` from a unit that rolled back, with ``instead`` where it held a late
    value's placeholder: the value was never taken (a failed sale's narration, kept
    in the failed-transaction record, names no number)."""
    return _PLACEHOLDER.sub(instead, text)


PLACEHOLDER_LENGTH = len(PLACEHOLDER_PREFIX) + 32  # (a uuid4's hex digits follow it)


# ------------------------------------------------------------------ queued writes


class Queued:
    """A kind of write on one table that waits for the unit's last statement: its
    per-row statement (SQLite executemany) and its array statement (PostgreSQL),
    both built once when the repository declares it."""

    prefix = "q"

    def __init__(self, table: Table, columns: Sequence[str]):
        self.table = table
        self.columns = tuple(columns)
        self.guarded = False
        self.rows_statement: Insert | Update
        self.array_statement: Insert | Update
        # A tenant table's rows of one unit are one company's: its company_id goes as
        # one value, not an array, so that the statement names the company (a router
        # query on a database distributed by company, tests/router_check.py).
        self.tenant = "company_id" in columns
        self.company = (
            bindparam(self._array_name("company_id"), type_=table.c.company_id.type)
            if self.tenant
            else None
        )
        self._late_statements: dict[Late, Insert | Update] = {}

    def late_statement(self, late: Late) -> Insert | Update:
        """The array statement with ``late``'s placeholder replaced by its value in
        every text value it writes (built once per kind and late value)."""
        statement = self._late_statements.get(late)
        if statement is None:
            statement = self._late_statements[late] = self._array_statement(late)
        return statement

    def _array_statement(self, late: Late | None) -> Insert | Update:
        raise NotImplementedError

    def _written(self, column: str, value: Any, late: Late | None) -> Any:
        """What the array statement writes for ``column``: the given value, or, for a
        text column in a unit with a late value, the value with its placeholder
        replaced."""
        kind = self._type(column)
        if late is None or not isinstance(kind, String):
            return value
        if kind.length is not None and kind.length < PLACEHOLDER_LENGTH:
            return value  # (a column too short for the placeholder cannot hold it)
        return late.resolve(value)

    def _arrays(self) -> Any:
        """``unnest(:a, :b, …) AS v(a, b, …)``: one typed array parameter a column
        (but the one company_id)."""
        columns = [c for c in self.columns if c != "company_id"]
        binds = [bindparam(self._array_name(c), type_=ARRAY(self._type(c))) for c in columns]
        return (
            func.unnest(*binds)
            .table_valued(*columns)
            .render_derived(name=f"{self.prefix}_{self.table.name}")
        )

    def _type(self, column: str) -> Any:
        return self.table.c[column].type

    def _array_name(self, column: str) -> str:
        return f"{self.prefix}_{self.table.name}_{column}"

    def array_params(self, rows: Sequence[Row]) -> dict[str, Any]:
        params: dict[str, Any] = {
            self._array_name(c): [row[c] for row in rows] for c in self.columns
        }
        if self.tenant:
            params[self._array_name("company_id")] = one_company(params, self._array_name)
        return params

    def row_params(self, row: Row) -> dict[str, Any]:
        return dict(row)


def one_company(params: Mapping[str, Any], name: Callable[[str], str]) -> Any:
    """The one company_id of a unit's rows of one kind (their array, in ``params``):
    a unit acts for one company, so rows of two are a bug in the caller."""
    companies = set(params[name("company_id")])
    if len(companies) != 1:
        raise ValueError(f"rows of one unit name {len(companies)} companies")
    return companies.pop()


class QueuedInsert(Queued):
    """Rows inserted into ``table``, each giving every one of ``columns``."""

    prefix = "ins"

    def __init__(self, table: Table, columns: Sequence[str]):
        super().__init__(table, columns)
        self.rows_statement = insert(table)
        self.array_statement = self._array_statement(None)

    def _array_statement(self, late: Late | None) -> Insert:
        arrays = self._arrays()
        given: dict[str, Any] = {
            c: self.company if c == "company_id" else self._written(c, arrays.c[c], late)
            for c in self.columns
        }
        return insert(self.table).from_select(
            list(self.columns), select(*(given[c] for c in self.columns))
        )


Guard = Callable[[Table, Mapping[str, Any]], ColumnElement[bool]]


class QueuedUpdate(Queued):
    """Rows of ``table`` found by ``keys`` get ``values`` and have ``increments``
    added to theirs (commutative: two units adding to one row both count).
    ``also``: columns every row sets to one SQL expression (``updated_at``).
    ``guard``: the premise each row must still meet, written over the table and
    the row's given values (``given[name]``); a guarded kind reports how many rows
    it changed, and fewer than queued is ``PremiseGone``. ``flags``: given values
    that only the guard reads (not columns of the table), with their SQL types."""

    prefix = "upd"

    def __init__(
        self,
        table: Table,
        keys: Sequence[str],
        values: Sequence[str] = (),
        *,
        increments: Sequence[str] = (),
        also: Mapping[str, Any] | None = None,
        guard: Guard | None = None,
        flags: Mapping[str, Any] | None = None,
    ):
        self.flags = dict(flags or {})
        # A tenant table's rows are found by their company too (each row gives it).
        company = table.c.get("company_id")
        tenant = ["company_id"] if company is not None and not company.nullable else []
        if "company_id" in keys:
            tenant = []
        super().__init__(table, [*tenant, *keys, *values, *increments, *self.flags])
        self.keys = tuple(self.columns[: len(tenant) + len(keys)])
        self.values = tuple(values)
        self.increments = tuple(increments)
        self.also = dict(also or {})
        self.guard = guard
        self.guarded = guard is not None
        given: dict[str, Any] = {
            c: bindparam(f"new_{c}", type_=self._type(c)) for c in self.columns
        }
        self.rows_statement = self._build(given, [table.c[k] == given[k] for k in self.keys])
        self.array_statement = self._array_statement(None)

    def _array_statement(self, late: Late | None) -> Update:
        arrays = self._arrays()
        given = {c: self.company if c == "company_id" else arrays.c[c] for c in self.columns}
        matches = [self.table.c[k] == given[k] for k in self.keys]
        # (only the values written take the late value: keys and guards are read)
        given.update({v: self._written(v, given[v], late) for v in self.values})
        statement = self._build(given, matches)
        # (the CTE of a guarded kind returns a row per row it changed, for counting)
        return statement.returning(literal_column("1")) if self.guarded else statement

    def _type(self, column: str) -> Any:
        return self.flags[column] if column in self.flags else self.table.c[column].type

    def _build(self, given: Mapping[str, Any], matches: list[ColumnElement[bool]]) -> Update:
        where = list(matches)
        if self.guard is not None:
            where.append(self.guard(self.table, given))
        assignments: dict[str, Any] = {v: given[v] for v in self.values}
        assignments.update(
            {c: _at_scale(self.table.c[c], self.table.c[c] + given[c]) for c in self.increments}
        )
        assignments.update(self.also)
        return update(self.table).where(and_(*where)).values(assignments)

    def row_params(self, row: Row) -> dict[str, Any]:
        return {f"new_{c}": row[c] for c in self.columns}

    def merge(self, rows: Sequence[Row]) -> list[Row]:
        """One row per key: an UPDATE … FROM changes a row once however many given
        rows match it, so two changes to one row in a unit (a product on two lines)
        are summed first (increments), the later winning for plain values and flags."""
        merged: dict[tuple[Any, ...], dict[str, Any]] = {}
        for row in rows:
            key = tuple(row[k] for k in self.keys)
            found = merged.get(key)
            if found is None:
                merged[key] = dict(row)
                continue
            for column in self.columns:
                if column in self.increments:
                    found[column] = found[column] + row[column]
                elif column not in self.keys:
                    found[column] = row[column]
        return list(merged.values())


def _replaced(value: Any, placeholder: str, late: str) -> Any:
    if isinstance(value, str):
        return value.replace(placeholder, late)
    if isinstance(value, dict):
        return {k: _replaced(v, placeholder, late) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_replaced(v, placeholder, late) for v in value)
    return value


def _at_scale(column: Any, value: Any) -> Any:
    """An increment rounded to the column's scale: a no-op on PostgreSQL's numeric,
    and on SQLite, which adds in binary floating point, it keeps 3.19 stored as 3.19."""
    scale = getattr(column.type, "scale", None)
    return func.round(value, scale) if isinstance(scale, int) else value


_combined: dict[tuple[tuple[Queued, ...], Late | None], Select[Any]] = {}


def _combine(kinds: tuple[Queued, ...], late: Late | None = None) -> Select[Any]:
    """One statement running every kind's array statement as a CTE, and counting
    the rows each guarded kind changed; built once per combination (every sale
    queues the same kinds).

    With a late value, its source is the first CTE and its value the first column:
    the main query's columns are evaluated in order, so the source's row (the
    invoice counter) is locked before any guarded update takes a row lock, as it
    was when it had a statement of its own."""
    statement = _combined.get((kinds, late))
    if statement is None:
        ctes = [
            (kind.array_statement if late is None else kind.late_statement(late)).cte(f"w{i}")
            for i, kind in enumerate(kinds)
        ]
        # Data-modifying CTEs run once and to completion whether or not the main
        # query reads them; the guarded ones are read for their counts.
        counts: list[Any] = [
            select(func.count()).select_from(cte).scalar_subquery().label(f"n{i}")
            for i, (kind, cte) in enumerate(zip(kinds, ctes, strict=True))
            if kind.guarded
        ]
        if late is not None:
            counts.insert(0, late.value.label("late_value"))
            ctes.insert(0, late.cte)
        built: Select[Any] = select(*(counts or [literal_column("1")])).add_cte(*ctes)
        _combined[(kinds, late)] = statement = built
    return statement


# ------------------------------------------------------------------ the unit


class _Compiled:
    """A statement's SQL for the driver and its parameter names in ``$n`` order,
    compiled once per statement and set of given names with public SQLAlchemy API
    (``compile``, ``positiontup``, ``construct_params``). Values must be ones asyncpg
    takes as they are (Decimal, int, str, bool, date, datetime, lists of those):
    the repositories give nothing that needs a SQLAlchemy bind processor."""

    def __init__(self, statement: Executable, keys: tuple[str, ...], dialect: Dialect):
        self.statement = statement  # held, so that its id() is never another's
        compiled = statement.compile(dialect=dialect, column_keys=list(keys))  # type: ignore[attr-defined]
        self.compiled = compiled
        self.sql: str = compiled.string
        self.names: tuple[str, ...] = tuple(compiled.positiontup or ())
        # The values the statement carries itself (``literal(True)``), for names a
        # call does not give.
        self.fixed: dict[str, Any] = {
            name: bind.value
            for name, bind in compiled.binds.items()
            if bind.callable is None and not bind.required
        }

    def args(self, params: Mapping[str, Any]) -> list[Any]:
        """The values in ``$n`` order: the given ones by name, the statement's own
        for the rest, as ``construct_params`` would give them (which, at 20-30 µs a
        statement, is used only for a name that neither holds)."""
        fixed = self.fixed
        try:
            return [params[name] if name in params else fixed[name] for name in self.names]
        except KeyError:
            values = self.compiled.construct_params(dict(params))
            return [values[name] for name in self.names]


_compiled: dict[tuple[int, tuple[str, ...], str, str], _Compiled] = {}

# Key, in a pooled connection's ``info``, of its anonymous statements by SQL: set
# (``Database``) only on connections that go through a transaction pooler.
ANONYMOUS = "tillbook.anonymous_statements"
_ANONYMOUS_KEPT = 512


async def driver_fetch(raw: Any, sql: str, args: Sequence[Any]) -> Any:
    """asyncpg's rows of ``sql`` on the driver connection under ``raw`` (SQLAlchemy's
    pooled connection).

    Directly on PostgreSQL, asyncpg's own cache keeps a named prepared statement
    per SQL on the server. Behind a transaction pooler (PgBouncer) the next
    transaction may run on another server connection, where that name does not
    exist (or is another client's), so those connections have asyncpg's cache
    off and its statements are anonymous. ``fetch`` of an anonymous statement
    costs two round trips (Parse/Describe, then Parse/Bind/Execute); a kept
    anonymous ``PreparedStatement`` is parsed again with every Bind and costs one,
    so the statements of such a connection are kept here, as SQLAlchemy's dialect
    keeps its own."""
    driver = raw.driver_connection
    statements: dict[str, Any] | None = raw.info.get(ANONYMOUS)
    if statements is None:
        return await driver.fetch(sql, *args)
    statement = statements.get(sql)
    if statement is None:
        statement = await driver.prepare(sql)
        if len(statements) < _ANONYMOUS_KEPT:
            statements[sql] = statement
    return await statement.fetch(*args)


def driver_sql(statement: Executable, keys: tuple[str, ...], dialect: Dialect) -> _Compiled:
    """``statement`` compiled for the driver, once per statement, set of names and
    dialect and driver (a process may hold several: the tests run on SQLite and
    PostgreSQL)."""
    cache_key = (id(statement), keys, dialect.name, dialect.driver)
    found = _compiled.get(cache_key)
    if found is None:
        found = _compiled[cache_key] = _Compiled(statement, keys, dialect)
    return found


def rows_array(statement: Select[Any]) -> ColumnElement[Any]:
    """``statement``'s rows as one value: an array of anonymous records in its order
    (``ARRAY(SELECT ROW(…) … ORDER BY …)``), which asyncpg decodes into tuples of
    typed values. A statement with such columns reads several statements' rows in
    one round trip (``Reads.one``'s row and its lists, ``UnitOfWork.read_ahead``)."""
    return func.array(
        statement.with_only_columns(
            func.row(*statement.selected_columns), maintain_column_froms=True
        ).scalar_subquery()
    )


def _renamed(statement: Select[Any], prefix: str) -> Select[Any]:
    """``statement`` with each named parameter renamed ``prefix`` + its name, so that
    statements whose parameters share names can go in one statement with values of
    their own. (Anonymous parameters carry their values and are numbered apart by
    the compiler anyway.)"""

    def rename(element: Any, **_kw: Any) -> Any:
        if isinstance(element, BindParameter) and not element.unique:
            return bindparam(
                prefix + element.key,
                element.value,
                type_=element.type,
                required=element.required,
                callable_=element.callable,
                expanding=element.expanding,
                literal_execute=element.literal_execute,
            )
        return None

    return cast(Select[Any], replacement_traverse(statement, {}, rename))


# The statements ``UnitOfWork.run`` sends for a read and the reads sent ahead with
# it, by the ids of the statements they are made of (held, so that their ids are
# never another's): (parts, combined statement, each part's column names).
_together: dict[tuple[int, ...], tuple[Any, Select[Any], list[tuple[str, ...]]]] = {}


def _reads_together(parts: Sequence[Select[Any]]) -> tuple[Select[Any], list[tuple[str, ...]]]:
    key = tuple(id(part) for part in parts)
    found = _together.get(key)
    if found is None:
        names = []
        for part in parts:
            keys = tuple(part.selected_columns.keys())
            if len(set(keys)) != len(keys):
                raise ValueError(f"a read sent ahead needs distinct column names: {keys}")
            names.append(keys)
        combined = select(
            *(
                rows_array(_renamed(part, f"r{i}_")).label(f"_read{i}")
                for i, part in enumerate(parts)
            )
        )
        found = _together[key] = (tuple(parts), combined, names)
    return found[1], found[2]


def _params_key(statement: Executable, params: Mapping[str, Any]) -> tuple[Any, ...]:
    """What identifies a read sent ahead: its statement and its values (a list of
    ids as a tuple)."""
    return (
        id(statement),
        *sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in params.items()),
    )


_INSERTS: dict[Table, Insert] = {}


def next_id(table: Table) -> ColumnElement[int]:
    """The id the next row of ``table`` takes from its sequence (PostgreSQL): put in
    the RETURNING of a statement a write sends anyway, it reserves an id for a row
    the write then inserts with its last statement (``insert_later``), one round
    trip fewer. An id reserved and not used is a gap, as a rolled-back insert's is."""
    return literal_column(f"nextval('{table.name}_id_seq')", BigInteger)


def next_ids(table: Table, count: str) -> Any:
    """``next_id`` for the number of rows the parameter ``count`` gives, as an array
    (NULL for none)."""
    series = func.generate_series(1, bindparam(count, type_=Integer)).table_valued("n")
    return select(func.array_agg(next_id(table))).select_from(series).scalar_subquery()


_LATER: dict[tuple[Table, tuple[str, ...]], QueuedInsert] = {}
_ARRAY_INSERTS: dict[tuple[Table, tuple[str, ...]], Insert] = {}


def _array_insert(table: Table, columns: tuple[str, ...]) -> Insert:
    """``INSERT … SELECT … FROM unnest(:arrays) WITH ORDINALITY ORDER BY ordinality
    RETURNING id``: one prebuilt statement whatever the number of rows (a VALUES list
    is a new statement for every count). The SELECT yields the rows in their order
    and each takes the next id of the sequence as it is inserted, so the ids,
    sorted, are in row order; ``tests/db/test_db.py`` holds it to that."""
    statement = _ARRAY_INSERTS.get((table, columns))
    if statement is None:
        # (a tenant table's one company_id goes as one value, as in ``Queued``)
        arrays = [c for c in columns if c != "company_id"]
        binds = [bindparam(f"arr_{c}", type_=ARRAY(table.c[c].type)) for c in arrays]
        rows = (
            func.unnest(*binds)
            .table_valued(*arrays, with_ordinality="ordinality")
            .render_derived(name=f"arr_{table.name}")
        )
        given: dict[str, Any] = {c: rows.c[c] for c in arrays}
        if "company_id" in columns:
            given["company_id"] = bindparam("arr_company_id", type_=table.c.company_id.type)
        select_rows = select(*(given[c] for c in columns)).order_by(rows.c.ordinality)
        statement = insert(table).from_select(list(columns), select_rows).returning(table.c.id)
        _ARRAY_INSERTS[(table, columns)] = statement
    return statement


# Per event loop (a process serves on one; tests run many), one FIFO lock per name.
_gates: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[Any, asyncio.Semaphore]] = (
    weakref.WeakKeyDictionary()
)


GATE_WIDTH = 2


class GateTimeout(Exception):
    """A unit waited longer than the lock timeout for its turn at a gate."""


class UnitOfWork:
    """One write transaction: the session, the queue for the last statement, and
    what a re-run needs to know (``attempt``; ``after_unique_race``: a twin won a
    unique race last time, so numbers are checked before they are used)."""

    def __init__(
        self,
        session: AsyncSession,
        *,
        attempt: int = 0,
        after_unique_race: bool = False,
        lock_timeout_s: float = 5.0,
    ):
        self.session = session
        self.lock_timeout_s = lock_timeout_s
        bind = session.get_bind()
        self.dialect: Dialect = bind.dialect
        self.is_postgresql = self.dialect.name == "postgresql"
        self.attempt = attempt
        self.after_unique_race = after_unique_race
        self._queue: dict[Queued, list[Row]] = {}
        # Reads to send with the next read (``read_ahead``), and the rows of those
        # sent, until asked for.
        self._ahead: list[tuple[Select[Any], dict[str, Any]]] = []
        self._read: dict[tuple[Any, ...], list[Record]] = {}
        self._driver: Any = None
        self._begun = False
        self._gates: list[tuple[Any, asyncio.Semaphore]] = []
        # The unit's late value: its source, the source's parameters and the
        # placeholder; then, after the last statement, (placeholder, value).
        self._late: tuple[Late, dict[str, Any], str] | None = None
        self._resolved: tuple[str, str] | None = None
        self._failures: list[Callable[[BaseException], Exception | None]] = []

    # -- gates

    async def gate(self, name: Any) -> None:
        """Wait for this process's turn at ``name`` and keep it until the unit has
        committed or rolled back (``Database`` calls ``release_gates``).

        For a row every unit of a kind locks until COMMIT (a branch's invoice
        counter): PostgreSQL gives a released row lock to whichever waiter gets it
        first, not to the one waiting longest, so with sixteen tills queued on one
        counter some sales waited seven times the median (bench/README.md). Here
        units pass in arrival order (``asyncio.Semaphore`` serves its waiters
        first come, first served), ``GATE_WIDTH`` at a time: the one holding the
        row and the next, already waiting at the database, so the row is handed
        on without waiting for this process's event loop. A unit holds a gate
        once however often it asks, and a unit run again goes straight to the
        row; waiting longer than the unit's lock timeout is ``GateTimeout`` (a
        409, like a lock timeout)."""
        if self.attempt > 0 or any(held == name for held, _lock in self._gates):
            # A unit run again has waited its turn once already: sent to the back of
            # the queue, a sale that found its FIFO layer emptied would plan again
            # and wait behind every sale that arrived since, find the layer emptied
            # again, and so on until it gave up (tests/db/test_hot_item.py).
            return
        loop = asyncio.get_running_loop()
        lock = _gates.setdefault(loop, {}).setdefault(name, asyncio.Semaphore(GATE_WIDTH))
        try:
            # (``asyncio.timeout``, not ``wait_for``: no task per wait)
            async with asyncio.timeout(self.lock_timeout_s):
                await lock.acquire()
        except TimeoutError:
            raise GateTimeout(str(name)) from None
        self._gates.append((name, lock))

    def release_gates(self) -> None:
        for _name, lock in reversed(self._gates):
            lock.release()
        self._gates = []

    # -- statements

    def read_ahead(self, statement: Select[Any], params: Mapping[str, Any]) -> None:
        """Send the prebuilt read ``statement`` with the unit's next read (``run`` of
        a ``SELECT``), in its round trip; ``run`` of the same statement and values
        then answers with those rows, without a statement of its own.

        For an unlocked read whose values the unit knows before an earlier one: a
        sale reads its customer, its products and their FIFO layers one after the
        other, each a round trip (on a loopback connection each costs a system call
        doing the TCP work of both ends, and PostgreSQL a statement's overhead).
        At READ COMMITTED each statement sees the database as of its own start, so
        a read sent with an earlier one sees what it would have seen at its turn
        or earlier: only a read whose premise the unit checks later may go ahead
        (stock read unlocked is checked by the guarded updates of the last
        statement). On SQLite nothing is sent ahead (no round trips to save)."""
        if self.is_postgresql:
            self._ahead.append((statement, dict(params)))

    async def run(self, statement: Executable, params: Mapping[str, Any]) -> list[Record]:
        """The rows a prebuilt (module-level) statement returns, in this unit's
        transaction. On PostgreSQL on the driver, the transaction begun first
        (``_begin_on_driver``); a ``SELECT`` takes the reads sent ahead with it
        (``read_ahead``)."""
        if not self.is_postgresql:
            result = await self.session.execute(statement, dict(params))
            self._begun = True
            if isinstance(result, CursorResult) and not result.returns_rows:
                return []
            return _records(list(result.keys()), result.all())
        if self._driver is None:
            await self._begin_on_driver()
        if self._read:
            found = self._read.pop(_params_key(statement, params), None)
            if found is not None:
                return found
        if self._ahead and isinstance(statement, Select):
            return await self._run_with_reads_ahead(statement, params)
        compiled = driver_sql(statement, tuple(params), self.dialect)
        for observe in statement_observers:
            observe(compiled.sql)
        rows = await driver_fetch(self._driver, compiled.sql, compiled.args(params))
        if not rows:
            return []
        return _records(list(rows[0].keys()), rows)

    async def _run_with_reads_ahead(
        self, statement: Select[Any], params: Mapping[str, Any]
    ) -> list[Record]:
        reads = [(statement, dict(params)), *self._ahead]
        self._ahead = []
        combined, names = _reads_together([read for read, _values in reads])
        values = {f"r{i}_{k}": v for i, (_, given) in enumerate(reads) for k, v in given.items()}
        compiled = driver_sql(combined, tuple(values), self.dialect)
        for observe in statement_observers:
            observe(compiled.sql)
        row = (await driver_fetch(self._driver, compiled.sql, compiled.args(values)))[0]
        answers = [_records(keys, row[i]) for i, keys in enumerate(names)]
        for (read, given), rows in zip(reads[1:], answers[1:], strict=True):
            self._read[_params_key(read, given)] = rows
        return answers[0]

    async def _begin_on_driver(self) -> None:
        """Open the unit's transaction on its connection as SQLAlchemy would for its
        first statement, without sending one through the session.

        ``session.connection()`` checks the connection out and begins SQLAlchemy's
        transaction; the asyncpg adapter under it sends BEGIN lazily, before the
        first statement it is given, and keeps the transaction that COMMIT and
        ROLLBACK then end. Its ``_start_transaction`` is that step: called here, the
        unit's first statement needs no trip through the ORM session (0.3-0.4 ms of
        CPU a sale: compilation cache key, execution context, result). Behind a
        pooler, the engine's ``begin`` listener has sent ``SET LOCAL`` already and
        the transaction is open. ``tests/db/test_db.py`` pins that driver statements
        run inside the transaction and roll back with it. An error starting it is
        raised as the driver's own, as every statement on the driver raises."""
        connection = await self.session.connection()
        raw = await connection.get_raw_connection()
        adapted: Any = raw.dbapi_connection
        if getattr(adapted, "_transaction", None) is None:
            try:
                await adapted._start_transaction()
            except Exception as exc:
                cause = exc.__cause__
                if isinstance(cause, Exception):
                    raise cause from None
                raise
        self._begun = True
        self._driver = raw

    async def insert_returning_ids(self, table: Table, rows: Sequence[Row]) -> list[int]:
        """Insert ``rows`` into ``table`` in one statement and return their ids in row
        order: for write paths that need ids but no ORM objects. Several rows on
        PostgreSQL go as one array insert (``_array_insert``); elsewhere as
        SQLAlchemy's multi-row insert, which sorts the returned ids itself.

        Name every column the table needs: a Python-side column default is not
        applied to the array insert's rows after its first use in a unit
        (``tests/catalog/test_import_products.py`` inserts in chunks to hold callers to it)."""
        if not rows:
            return []
        if len(rows) > 1 and self.is_postgresql:
            columns = tuple(rows[0])
            params: dict[str, Any] = {f"arr_{c}": [row[c] for row in rows] for c in columns}
            if "company_id" in columns:
                params["arr_company_id"] = one_company(params, lambda c: f"arr_{c}")
            # Sorted: each row takes its id from the sequence as the SELECT yields
            # it, in row order, whatever order RETURNING lists them in.
            return sorted(r[0] for r in await self.run(_array_insert(table, columns), params))
        statement = _INSERTS.get(table)
        if statement is None:
            statement = insert(table).returning(table.c.id, sort_by_parameter_order=True)
            _INSERTS[table] = statement
        if len(rows) == 1:
            return [(await self.run(statement, rows[0]))[0][0]]
        self._begun = True
        return list((await self.session.execute(statement, list(rows))).scalars())

    # -- late values

    def late(self, late: Late, params: Mapping[str, Any]) -> str:
        """A placeholder for ``late``'s value, which the unit's last statement
        computes with ``params`` (PostgreSQL only; one late value a unit)."""
        if not self.is_postgresql:
            raise ValueError("a late value needs the last statement's CTEs (PostgreSQL)")
        if self._late is not None:
            raise ValueError("a unit has one late value")
        placeholder = f"{PLACEHOLDER_PREFIX}{uuid.uuid4().hex}"
        self._late = (late, {**params, late.placeholder.key: placeholder}, placeholder)
        return placeholder

    def resolve(self, value: T) -> T:
        """``value`` (what the unit returns: strings, and dicts, lists and tuples of
        them) with the late value in place of its placeholder."""
        if self._resolved is None:
            return value
        placeholder, late = self._resolved
        return cast(T, _replaced(value, placeholder, late))

    def on_failure(self, translate: Callable[[BaseException], Exception | None]) -> None:
        """When the last statement fails, ``translate`` may name the failure for the
        client (a write queued there that the database refused, such as a journal
        entry dated into a closed period): the first error it returns is raised."""
        self._failures.append(translate)

    # -- the queue and the last statement

    def insert_later(self, table: Table, rows: Sequence[Row]) -> None:
        """Insert ``rows`` into ``table`` with the unit's last statement, each naming
        the id reserved for it (``next_id``) and every column the table needs, as
        ``insert_returning_ids`` asks."""
        if not rows:
            return
        columns = tuple(rows[0])
        kind = _LATER.get((table, columns))
        if kind is None:
            kind = _LATER[(table, columns)] = QueuedInsert(table, columns)
        self.defer(kind, rows)

    def defer(self, kind: Queued, rows: Sequence[Row]) -> None:
        """Queue ``rows`` of one kind of write for the unit's last statement."""
        if rows:
            self._queue.setdefault(kind, []).extend(rows)

    async def finish(self) -> None:
        """Send the queue as the unit's last statement before COMMIT, and raise
        ``PremiseGone`` when a guarded update changed fewer rows than it was given."""
        try:
            await self._finish()
        except Exception as exc:
            for translate in self._failures:
                named = translate(exc)
                if named is not None:
                    raise named from None
            raise

    async def _finish(self) -> None:
        queue = {
            kind: kind.merge(rows) if isinstance(kind, QueuedUpdate) else rows
            for kind, rows in self._queue.items()
        }
        self._queue = {}
        late, self._late = self._late, None
        if not queue and late is None:
            return
        kinds = tuple(queue)
        if self.is_postgresql:
            params: dict[str, Any] = {}
            for kind in kinds:
                params.update(kind.array_params(queue[kind]))
            if late is None and len(kinds) == 1 and not kinds[0].guarded:
                await self.run(kinds[0].array_statement, params)
                return
            if late is not None:
                params.update(late[1])
            row = (await self.run(_combine(kinds, None if late is None else late[0]), params))[0]
            counts = list(row)
            if late is not None:
                self._resolved = (late[2], str(counts.pop(0)))
            guarded = [kind for kind in kinds if kind.guarded]
            for kind, count in zip(guarded, counts, strict=False):
                if count != len(queue[kind]):
                    raise PremiseGone(f"{kind.table.name}: {count} of {len(queue[kind])} rows")
            return
        for kind in kinds:
            rows = [kind.row_params(row) for row in queue[kind]]
            result = await self.session.execute(kind.rows_statement, rows)
            if kind.guarded:
                changed = getattr(result, "rowcount", len(rows))
                if changed != len(rows):
                    raise PremiseGone(f"{kind.table.name}: {changed} of {len(rows)} rows")


# ------------------------------------------------------------------ failures by name


def sqlstate(exc: BaseException) -> str | None:
    """The SQLSTATE of a database error, whichever layer raised it (SQLAlchemy's
    wrapper, the adapter's DB-API error or asyncpg's own exception)."""
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen:
        seen.append(current)
        code = getattr(current, "sqlstate", None) or getattr(current, "pgcode", None)
        if isinstance(code, str):
            return code
        current = getattr(current, "orig", None) or current.__cause__
    return None


_SQLITE_UNIQUE = re.compile(r"UNIQUE constraint failed: ([\w.,\s]+)")
_SQLITE_INDEX = re.compile(r"UNIQUE constraint failed: index '(\w+)'")


def constraint_name(exc: BaseException) -> str | None:
    """The name of the constraint an integrity error names: asyncpg gives it; for
    SQLite, whose message lists the table's columns, the metadata's constraint with
    exactly those columns."""
    current: BaseException | None = exc
    seen: list[BaseException] = []
    while current is not None and current not in seen:
        seen.append(current)
        name = getattr(current, "constraint_name", None)
        if isinstance(name, str):
            return name
        current = getattr(current, "orig", None) or current.__cause__
    named = _SQLITE_INDEX.search(str(exc))
    if named is not None:
        return named.group(1)
    match = _SQLITE_UNIQUE.search(str(exc))
    if match is None:
        return None
    pairs = [part.strip().split(".", 1) for part in match.group(1).split(",")]
    table = Base.metadata.tables.get(pairs[0][0])
    if table is None:
        return None
    columns = {column for _, column in pairs}
    for constraint in table.constraints:
        if {c.name for c in getattr(constraint, "columns", ())} == columns:
            return str(constraint.name)
    return None


def is_unique_race(exc: BaseException) -> bool:
    """An integrity error that a concurrent twin caused (``RACE_CONSTRAINTS``)."""
    if not isinstance(exc, IntegrityError) and sqlstate(exc) != "23505":
        return False
    return constraint_name(exc) in RACE_CONSTRAINTS


def is_integrity_error(exc: BaseException) -> bool:
    code = sqlstate(exc)
    return isinstance(exc, IntegrityError) or (code is not None and code.startswith("23"))


def is_transient(exc: BaseException) -> bool:
    """Serialization failure, deadlock, or a cached statement a schema change made
    stale: the same unit run again can succeed."""
    return sqlstate(exc) in (SERIALIZATION_FAILURE, DEADLOCK, CACHED_STATEMENT)


def is_out_of_range(exc: BaseException) -> bool:
    return sqlstate(exc) == NUMERIC_OUT_OF_RANGE


def is_lock_timeout(exc: BaseException) -> bool:
    return sqlstate(exc) == LOCK_TIMEOUT


def is_database_error(exc: BaseException) -> bool:
    """Raised by the database or its driver (not by the service's own code)."""
    if isinstance(exc, DBAPIError):
        return True
    module = type(exc).__module__
    return module.startswith("asyncpg") or module.startswith("sqlite3")
