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

The queue lives in ``session.info``; a rollback drops it. Writes run in the order
their kinds were first queued; on PostgreSQL the CTEs of one statement see the same
snapshot and must not touch the same row twice, which these writes never do (each
names rows that only its own unit created or claimed).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import (
    ARRAY,
    ColumnElement,
    Insert,
    Select,
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
Row = Mapping[str, Any]


class _Deferred:
    """A kind of deferred write on one table: its per-row statement (SQLite) and its
    array statement (PostgreSQL), both built once."""

    prefix: str

    def __init__(self, table: Table, columns: Sequence[str]):
        self.table = table
        self.columns = tuple(columns)
        self.rows_statement: Insert | Update
        self.array_statement: Insert | Update

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
    """Rows inserted into ``table``; each row gives every one of ``columns``."""

    prefix = "ins"

    def __init__(self, table: Table, columns: Sequence[str]):
        super().__init__(table, columns)
        self.rows_statement = insert(table)
        arrays = self._arrays()
        self.array_statement = insert(table).from_select(
            list(self.columns), select(*(arrays.c[c] for c in self.columns))
        )


class DeferredUpdate(_Deferred):
    """Rows of ``table`` found by ``keys`` get new ``values`` and have ``increments``
    added to theirs; each row gives all of them. ``also``: columns every row sets to
    the same SQL expression (``updated_at=func.now()``)."""

    prefix = "upd"

    def __init__(
        self,
        table: Table,
        keys: Sequence[str],
        values: Sequence[str],
        *,
        increments: Sequence[str] = (),
        also: Mapping[str, Any] | None = None,
    ):
        super().__init__(table, [*keys, *values, *increments])
        self.keys = tuple(keys)
        self.values = (*values, *increments)
        new: dict[str, Any] = {v: bindparam(f"new_{v}") for v in self.values}
        self.rows_statement = (
            update(table)
            .where(and_(*(table.c[k] == bindparam(f"key_{k}") for k in keys)))
            .values(_assignments(table, values, increments, new, also))
        )
        arrays = self._arrays()
        matches: list[ColumnElement[bool]] = [table.c[k] == arrays.c[k] for k in keys]
        given = {v: arrays.c[v] for v in self.values}
        self.array_statement = (
            update(table)
            .where(and_(*matches))
            .values(_assignments(table, values, increments, given, also))
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


_combined: dict[tuple[_Deferred, ...], Select[Any]] = {}


def _combine(kinds: tuple[_Deferred, ...]) -> Select[Any]:
    """One statement running every kind's array statement as a CTE; built once per
    combination (every sale queues the same six)."""
    statement = _combined.get(kinds)
    if statement is None:
        ctes = [kind.array_statement.cte(f"deferred_{i}") for i, kind in enumerate(kinds)]
        # Data-modifying CTEs run once and to completion whether or not the main
        # query reads them.
        statement = select(literal_column("1")).add_cte(*ctes)
        _combined[kinds] = statement
    return statement


async def write_now(session: AsyncSession, *writes: tuple[_Deferred, Sequence[Row]]) -> None:
    """Several writes whose results nothing reads, sent now in one round trip (one
    statement on PostgreSQL): for writes that later statements of the unit must see,
    such as stock levels a second draw reads again."""
    queue = {kind: list(rows) for kind, rows in writes}
    await session.run_sync(_write, queue)


@event.listens_for(Session, "before_commit")
def _write_deferred(session: Session) -> None:
    _write(session, session.info.pop(_QUEUE, {}))


def _write(session: Session, queue: dict[_Deferred, list[Row]]) -> None:
    queue = {kind: rows for kind, rows in queue.items() if rows}
    if not queue:
        return
    if session.get_bind().dialect.name == "postgresql":
        params: dict[str, list[Any]] = {}
        for kind, rows in queue.items():
            params.update(kind.array_params(rows))
        if len(queue) == 1:
            (kind,) = queue
            session.execute(kind.array_statement, params)
        else:
            session.execute(_combine(tuple(queue)), params)
        return
    for kind, rows in queue.items():
        if isinstance(kind, DeferredUpdate):
            session.execute(kind.rows_statement, [kind.row_params(row) for row in rows])
        else:
            session.execute(kind.rows_statement, list(rows))


@event.listens_for(Session, "after_soft_rollback")
def _forget_deferred(session: Session, _previous: object) -> None:
    session.info.pop(_QUEUE, None)
