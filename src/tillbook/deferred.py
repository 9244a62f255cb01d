"""Writes that nothing in a unit reads back, sent together just before COMMIT.

A sale ends with writes whose results it never reads: its journal lines, its outbox
events, its stock movements and tender allocations, the idempotency record's
response, the order's final number. Sent one by
one, each costs a round trip while the invoice counter is locked, so every other sale
of the shop waits for them. Queued with ``defer`` instead, they go to the database
together when the unit commits: on PostgreSQL as one statement, each write a
data-modifying CTE that takes its rows as arrays (``unnest``); on SQLite one
executemany per write.

Every statement here is built once, from a ``DeferredInsert`` or ``DeferredUpdate``
declared at import time, and bound only with parameters, so SQLAlchemy compiles each
combination once and caches it. (A multi-row ``insert().values(rows)`` built per call
has no cache key: SQLAlchemy compiled it, about a millisecond, on every sale.)

``write_now`` sends several such writes at once, in the same way, when the unit
must see them before it commits.

**Late text.** One value per unit can be left to that last statement: the next
number of an invoice counter (``late``). The unit uses a placeholder wherever the
number goes (the order, the journal narration, the events, the stored response);
the statement's first CTE takes the number from the counter, every late column of
the other CTEs has the placeholder replaced in SQL, and once the unit has committed
``Database.write`` puts the number into the unit's result in place of the
placeholder. The counter row is then locked from that statement to COMMIT, one
round trip, instead of for everything the unit did after taking the number: on a
busy event loop each of those steps also waited its turn while the shop's other
sales queued on the counter.

The queue lives in ``session.info``; a rollback drops it. Writes run in the order
their kinds were first queued; on PostgreSQL the CTEs of one statement see the same
snapshot and must not touch the same row twice, which these writes never do (each
names rows that only its own unit created or claimed).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from sqlalchemy import (
    ARRAY,
    ColumnElement,
    Insert,
    ScalarSelect,
    Select,
    String,
    Table,
    Update,
    and_,
    bindparam,
    event,
    func,
    insert,
    literal_column,
    select,
    update,
)
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session

_QUEUE = "tillbook.deferred"
_LATE = "tillbook.deferred.late"
_RESOLVED = "tillbook.deferred.resolved"
Row = Mapping[str, Any]
T = TypeVar("T")


class LateSource:
    """Where a late value comes from: ``statement`` (PostgreSQL only) returns one row
    of one column, ``value``, and binds only parameters the caller of ``late`` gives.
    Built once; its CTE is shared by every combination that uses it."""

    def __init__(self, statement: Insert | Update):
        self.cte = statement.cte("late_value")
        self.value: ScalarSelect[Any] = select(self.cte.c.value).scalar_subquery()
        self.placeholder = bindparam("late_placeholder", type_=String)


_PLACEHOLDER = re.compile(r"late-[0-9a-f]{32}")


class _Late:
    def __init__(self, source: LateSource, params: Mapping[str, Any]):
        self.source = source
        self.params = dict(params)
        self.placeholder = f"late-{uuid.uuid4().hex}"


class _Deferred:
    """A kind of deferred write on one table: its per-row statement (SQLite) and its
    array statement (PostgreSQL), both built once."""

    prefix: str

    def __init__(self, table: Table, columns: Sequence[str], late: Sequence[str] = ()):
        self.table = table
        self.columns = tuple(columns)
        self.late = tuple(late)
        assert set(self.late) <= set(self.columns), (table.name, late)
        self.rows_statement: Insert | Update
        self.array_statement: Insert | Update
        self._late_statements: dict[LateSource, Insert | Update] = {}

    def late_statement(self, source: LateSource) -> Insert | Update:
        """The array statement with the placeholder replaced by ``source``'s value in
        every late column; built once per source."""
        statement = self._late_statements.get(source)
        if statement is None:
            statement = self._build_array_statement(source)
            self._late_statements[source] = statement
        return statement

    def _build_array_statement(self, source: LateSource | None) -> Insert | Update:
        raise NotImplementedError

    def _given(self, arrays: Any, names: Sequence[str], source: LateSource | None) -> list[Any]:
        """Each column of ``names`` from the arrays, late ones with the value put in."""
        return [
            func.replace(arrays.c[c], source.placeholder, source.value)
            if source is not None and c in self.late
            else arrays.c[c]
            for c in names
        ]

    def _arrays(self) -> Any:
        """``unnest(:a, :b, …) AS v(a, b, …)``, one typed array parameter per column."""
        binds = [
            bindparam(self._array_name(c), type_=ARRAY(self.table.c[c].type)) for c in self.columns
        ]
        return (
            func.unnest(*binds)
            .table_valued(*self.columns)
            .render_derived(name=f"{self.prefix}_{self.table.name}")
        )

    def _array_name(self, column: str) -> str:
        return f"{self.prefix}_{self.table.name}_{column}"

    def array_params(self, rows: Sequence[Row]) -> dict[str, list[Any]]:
        return {self._array_name(c): [row[c] for row in rows] for c in self.columns}


class DeferredInsert(_Deferred):
    """Rows inserted into ``table``; each row gives every one of ``columns``. ``late``:
    text columns that may carry a late value's placeholder."""

    prefix = "ins"

    def __init__(self, table: Table, columns: Sequence[str], *, late: Sequence[str] = ()):
        super().__init__(table, columns, late)
        self.rows_statement = insert(table)
        self.array_statement = self._build_array_statement(None)

    def _build_array_statement(self, source: LateSource | None) -> Insert:
        arrays = self._arrays()
        return insert(self.table).from_select(
            list(self.columns), select(*self._given(arrays, self.columns, source))
        )


class DeferredUpdate(_Deferred):
    """Rows of ``table`` found by ``keys`` get new ``values`` and have ``increments``
    added to theirs; each row gives all of them. ``also``: columns every row sets to
    the same SQL expression (``updated_at=func.now()``). ``late``: text columns of
    ``values`` that may carry a late value's placeholder."""

    prefix = "upd"

    def __init__(
        self,
        table: Table,
        keys: Sequence[str],
        values: Sequence[str],
        *,
        increments: Sequence[str] = (),
        also: Mapping[str, Any] | None = None,
        late: Sequence[str] = (),
    ):
        super().__init__(table, [*keys, *values, *increments], late)
        assert set(self.late) <= set(values), (table.name, late)
        self.keys = tuple(keys)
        self.values = (*values, *increments)
        self._plain_values = tuple(values)
        self._increments = tuple(increments)
        self._also = also
        new: dict[str, Any] = {v: bindparam(f"new_{v}") for v in self.values}
        self.rows_statement = (
            update(table)
            .where(and_(*(table.c[k] == bindparam(f"key_{k}") for k in keys)))
            .values(_assignments(table, values, increments, new, also))
        )
        self.array_statement = self._build_array_statement(None)

    def _build_array_statement(self, source: LateSource | None) -> Update:
        arrays = self._arrays()
        matches: list[ColumnElement[bool]] = [self.table.c[k] == arrays.c[k] for k in self.keys]
        given = dict(zip(self.values, self._given(arrays, self.values, source), strict=True))
        return (
            update(self.table)
            .where(and_(*matches))
            .values(
                _assignments(self.table, self._plain_values, self._increments, given, self._also)
            )
        )

    def row_params(self, row: Row) -> dict[str, Any]:
        return {
            **{f"key_{k}": row[k] for k in self.keys},
            **{f"new_{v}": row[v] for v in self.values},
        }


def _assignments(
    table: Table,
    values: Sequence[str],
    increments: Sequence[str],
    given: Mapping[str, Any],
    also: Mapping[str, Any] | None,
) -> dict[str, Any]:
    out: dict[str, Any] = {v: given[v] for v in values}
    out.update({c: table.c[c] + given[c] for c in increments})
    out.update(also or {})
    return out


def defer(session: AsyncSession, kind: _Deferred, rows: Sequence[Row]) -> None:
    """Queue ``rows`` of one kind of write for this unit's COMMIT."""
    queue: dict[_Deferred, list[Row]] = session.info.setdefault(_QUEUE, {})
    queue.setdefault(kind, []).extend(rows)


def late(session: AsyncSession, source: LateSource, params: Mapping[str, Any]) -> str:
    """A placeholder for the value ``source`` gives in this unit's last statement
    (PostgreSQL only; one per unit). Put it only in late columns of deferred writes
    and in the unit's result: ``Database.write`` swaps it for the value after
    COMMIT."""
    if _LATE in session.info:
        raise RuntimeError("a unit has at most one late value")
    pending = _Late(source, params)
    session.info[_LATE] = pending
    return pending.placeholder


def carries_late(session: AsyncSession, text: str) -> bool:
    """Whether ``text`` holds this unit's late placeholder (and so must be written by
    a late column)."""
    pending: _Late | None = session.info.get(_LATE)
    return pending is not None and pending.placeholder in text


def without_placeholders(text: str) -> str:
    """``text`` with any late placeholder named for what it was: for records of a
    unit that rolled back (its failed-transaction record), where no value was ever
    taken."""
    return _PLACEHOLDER.sub("(number not issued)", text)


def resolved(result: T, info: Mapping[str, Any]) -> T:
    """``result`` with every late placeholder (in strings, dicts, lists, tuples)
    replaced by the value its unit's last statement gave; ``info`` is the session's."""
    values: dict[str, str] | None = info.get(_RESOLVED)
    if not values:
        return result
    return _replace(result, values)  # type: ignore[no-any-return]


def _replace(value: Any, values: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        for placeholder, real in values.items():
            value = value.replace(placeholder, real)
        return value
    if isinstance(value, dict):
        return {k: _replace(v, values) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_replace(v, values) for v in value)
    return value


_combined: dict[tuple[tuple[_Deferred, ...], LateSource | None], Select[Any]] = {}


def _combine(kinds: tuple[_Deferred, ...], source: LateSource | None) -> Select[Any]:
    """One statement running every kind's array statement as a CTE; built once per
    combination (every sale queues the same seven). With a late ``source`` its CTE
    comes along, the late columns read it, and the statement returns its value."""
    statement = _combined.get((kinds, source))
    if statement is None:
        ctes = [
            (kind.array_statement if source is None else kind.late_statement(source)).cte(
                f"deferred_{i}"
            )
            for i, kind in enumerate(kinds)
        ]
        # Data-modifying CTEs run once and to completion whether or not the main
        # query reads them.
        head = select(literal_column("1")) if source is None else select(source.cte.c.value)
        statement = head.add_cte(*ctes)
        _combined[(kinds, source)] = statement
    return statement


async def write_now(session: AsyncSession, *writes: tuple[_Deferred, Sequence[Row]]) -> None:
    """Several writes whose results nothing reads, sent now in one round trip (one
    statement on PostgreSQL): for writes that later statements of the unit must see,
    such as stock levels a second draw reads again."""
    queue = {kind: list(rows) for kind, rows in writes}
    if _dialect(session.sync_session) == "postgresql":
        await _write_pg(session, queue, None)
    else:
        await session.run_sync(_write, queue, None)


async def flush(session: AsyncSession) -> None:
    """Send the queue now, as the last statement of the unit: ``Database.write`` calls
    it just before COMMIT, so that on PostgreSQL the statement goes out on the
    asyncpg connection (``tillbook.rawsql``). What is left at COMMIT (a unit
    committed some other way) goes out from the ``before_commit`` hook."""
    queue = session.info.pop(_QUEUE, {})
    pending = session.info.pop(_LATE, None)
    if _dialect(session.sync_session) == "postgresql":
        await _write_pg(session, queue, pending)
    else:
        await session.run_sync(_write, queue, pending)


@event.listens_for(Session, "before_commit")
def _write_deferred(session: Session) -> None:
    _write(session, session.info.pop(_QUEUE, {}), session.info.pop(_LATE, None))


def _dialect(session: Session) -> str:
    return session.get_bind().dialect.name


def _pg_statement(
    queue: dict[_Deferred, list[Row]], pending: _Late | None
) -> tuple[Insert | Update | Select[Any], dict[str, Any]] | None:
    """The one statement (and its parameters) that sends ``queue`` on PostgreSQL."""
    queue = {kind: rows for kind, rows in queue.items() if rows}
    if not queue and pending is None:
        return None
    params: dict[str, Any] = {}
    for kind, rows in queue.items():
        params.update(kind.array_params(rows))
    if pending is not None:
        params.update(pending.params, late_placeholder=pending.placeholder)
        return _combine(tuple(queue), pending.source), params
    if len(queue) == 1:
        (kind,) = queue
        return kind.array_statement, params
    return _combine(tuple(queue), None), params


async def _write_pg(
    session: AsyncSession, queue: dict[_Deferred, list[Row]], pending: _Late | None
) -> None:
    from tillbook.rawsql import run  # rawsql's callers import this module

    found = _pg_statement(queue, pending)
    if found is None:
        return
    rows = await run(session, *found)
    if pending is not None:
        session.info.setdefault(_RESOLVED, {})[pending.placeholder] = rows[0][0]


def _write(session: Session, queue: dict[_Deferred, list[Row]], pending: _Late | None) -> None:
    if _dialect(session) == "postgresql":
        found = _pg_statement(queue, pending)
        if found is not None:
            result = session.execute(*found)
            if pending is not None:
                session.info.setdefault(_RESOLVED, {})[pending.placeholder] = result.scalar_one()
        return
    if pending is not None:
        raise RuntimeError("late values need PostgreSQL's data-modifying CTEs")
    for kind, rows in queue.items():
        if not rows:
            continue
        if isinstance(kind, DeferredUpdate):
            session.execute(kind.rows_statement, [kind.row_params(row) for row in rows])
        else:
            session.execute(kind.rows_statement, list(rows))


@event.listens_for(Session, "after_soft_rollback")
def _forget_deferred(session: Session, _previous: object) -> None:
    session.info.pop(_QUEUE, None)
    session.info.pop(_LATE, None)
