"""Change feeds for offline tills: ``updated_since`` and a stable cursor.

A list endpoint asked with ``updated_since`` (or a ``cursor`` from its previous
page) answers the records whose change time is at or after that time, in id
order. The cursor is the last id served: keyset paging, so no record is served
twice within a walk, and a page is a range of an index the table already has (a
product's by the listing's ``(warehouse_id, product_id, company_id)``): the first
sync of a 10,000-product branch reads ten ranges instead of sorting every listing
of the branch by change time for each page (a product's change time spans two
tables, the product and its listing, so no index can order it, and an index on
the listing's change time would cost every sale, whose stock update moves it, its
HOT update); a recent walk (a till's delta) is served from the records a feed
says were touched instead (``Prebuilt.recent``). A record edited while a till
pages is served in the walk if the cursor has not passed it yet, else by the next
delta: its change time is after the walk began, so after the ``sync_token``.
Archived records come as tombstones ``{"id", "xid", "archived": true}``; live ones
carry ``"archived": false``.
A feed's page is a ``Changes`` of its item type: the record's own shape with
``Live`` (``catalog/views.py`` ``ProductChange``...), or a ``Tombstone``.

``sync_token`` is what the till passes as ``updated_since`` next time, after the
last page: the database's time when the walk began, less ``OVERLAP``. A write
stamps its rows with its transaction's start time but becomes visible only when it
commits, so a transaction still running when the walk began may commit rows dated
before the walk; the overlap (longer than any write transaction runs) makes the
next delta serve them. A till may therefore see a record twice: it applies changes
as upserts by id, so that is harmless.

On a read replica (DESIGN.md §17) the walk sees the primary as of the last
transaction the replica has replayed, however far behind the clock that is: there
"when the walk began" is that transaction's commit time
(``pg_last_xact_replay_timestamp()``), so a lag longer than the overlap, or replay
paused, makes the next sync start earlier instead of skipping what the replica had
not yet replayed. A replica that has replayed nothing since it started says no
time, and the token then stays where the till's walk began.

The cursor is signed (``kit.cursors``) for its feed, company and warehouse: a till
that edits one (its time ten years ahead would answer "caught up" with nothing
served) or sends another feed's is refused, not misled.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, Protocol, TypeVar

import orjson
from sqlalchemy import (
    BindParameter,
    Boolean,
    ColumnElement,
    CompoundSelect,
    DateTime,
    Integer,
    Row,
    Select,
    String,
    and_,
    bindparam,
    func,
    literal,
    select,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.functions import FunctionElement
from sqlalchemy.types import TypeDecorator, TypeEngine
from typing_extensions import TypedDict

from tillbook.errors import invalid
from tillbook.kit import xid
from tillbook.kit.bounds import query_value
from tillbook.kit.cursors import Scope, peek
from tillbook.kit.idlists import IdList, in_ids, in_page
from tillbook.kit.pagination import parse_int
from tillbook.kit.shapes import DateTimeStr, answer

OVERLAP = dt.timedelta(seconds=60)
DEFAULT_LIMIT = 100
# A change feed's pages may be larger than a list's (100): a register's first walk of
# a 10,000-product catalog is ten requests, not a hundred.
FEED_MAX_LIMIT = 1000
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)

T = TypeVar("T")
Record = Mapping[Any, Any]
AnySelect = Select[*tuple[Any, ...]]


@answer
class Tombstone(TypedDict):
    """A record archived (or, for a product, no longer sold in this warehouse)."""

    id: int
    xid: str
    archived: Literal[True]


class Live(TypedDict):
    # What ``changes`` adds to a live record: a feed's item type is its record's
    # shape and this (``class ProductChange(ProductListItem, Live)``).
    archived: Literal[False]


@answer
class Changes(TypedDict, Generic[T]):
    # Records changed at or after ``updated_since``, in id order;
    # ``next_cursor`` pages on (null on the last page); after the last page, pass
    # ``sync_token`` as the next ``updated_since``.
    data: list[T | Tombstone]
    per_page: int
    next_cursor: str | None
    sync_token: DateTimeStr


@dataclass(frozen=True)
class Walk:
    """A change-feed request: changes at or after ``since``, after the id ``after``
    when paging on, in a walk that began at ``began``; its cursors are signed for
    ``scope``."""

    since: dt.datetime
    limit: int
    scope: Scope
    after: int | None = None
    began: dt.datetime | None = None


def utc(value: dt.datetime) -> dt.datetime:
    """Aware UTC; SQLite hands back naive UTC timestamps."""
    return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)


def iso(value: dt.datetime) -> str:
    return utc(value).isoformat().replace("+00:00", "Z")


def _parse_time(field: str, text: object) -> dt.datetime:
    """A date-time a client sent (or a cursor carries). One at the ends of the
    calendar whose offset moves it past them (0001-01-01T00:00+01:00) has no UTC
    time: refused like any other bad value."""
    try:
        if not isinstance(text, str):
            raise ValueError(text)
        value = utc(dt.datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00")))
    except (ValueError, OverflowError):
        raise invalid(field, "must be an ISO 8601 date-time such as 2026-11-20T08:30:00Z") from None
    if value < EPOCH:
        raise invalid(field, "must be 1970-01-01 or later")
    return value


def parse(
    updated_since: str | None, cursor: str | None, limit: str | None, scope: Scope
) -> Walk | None:
    """The walk a request asks for, or None for the plain list. A cursor carries the
    walk's ``updated_since`` itself (one sent beside it is not read) and must have
    been issued for ``scope``. ``limit`` is checked either way: a list without pages
    refuses a bad one too."""
    since_text = query_value("updated_since", updated_since)
    cursor_text = query_value("cursor", cursor)
    n = parse_int("limit", limit, DEFAULT_LIMIT)
    if n < 1:
        raise invalid("limit", f"must be 1 or more, got {n}")
    n = min(n, FEED_MAX_LIMIT)
    if since_text is None and cursor_text is None:
        return None
    if cursor_text is not None:
        position = scope.open(cursor_text)
        try:
            raw = orjson.loads(position)
            row_id = raw["i"]
            # checked still, though signed: a key that signed a bad one (a bug, a
            # leaked key) must not turn into a 500
            if type(row_id) is not int or not 0 <= row_id < 2**63:
                raise ValueError(row_id)
            # (a cursor issued while walks went in change-time order also
            # carries ``t``, that time: it is not needed to page on by id)
            return Walk(
                since=_parse_time("cursor", raw["u"]),
                limit=n,
                scope=scope,
                after=row_id,
                began=_parse_time("cursor", raw["s"]),
            )
        except (ValueError, KeyError, TypeError, orjson.JSONDecodeError):
            raise invalid("cursor", "is not a cursor this service gave") from None
    assert since_text is not None
    return Walk(since=_parse_time("updated_since", since_text), limit=n, scope=scope)


def _cursor(walk: Walk, row_id: int, began: dt.datetime) -> str:
    raw = orjson.dumps({"u": iso(walk.since), "i": row_id, "s": iso(began)})
    return walk.scope.seal(raw)


def tag_basis(page: Changes[Any]) -> dict[str, Any]:
    """What an ETag of a feed page covers: all of it but what moves with the clock
    (``sync_token``, and the walk's start inside ``next_cursor``). Polled again with
    nothing changed, a page has the same basis, so ``If-None-Match`` answers 304;
    the till keeps its earlier token and cursor, which page the same records."""
    basis: dict[str, Any] = {k: v for k, v in page.items() if k != "sync_token"}
    cursor = page["next_cursor"]
    if cursor is not None:
        position = orjson.loads(peek(cursor))
        basis["next_cursor"] = {k: v for k, v in position.items() if k != "s"}
    return basis


def _sqlite_text(value: dt.datetime) -> str:
    """A time as SQLite's stored ones are written. SQLite stores text:
    ``CURRENT_TIMESTAMP`` writes ``YYYY-MM-DD HH:MM:SS`` (whole seconds), so the
    bound is written the same way, its fraction only when it has one, and compares
    in time order."""
    naive = utc(value).replace(tzinfo=None)
    text = naive.strftime("%Y-%m-%d %H:%M:%S")
    if naive.microsecond:
        text += f".{naive.microsecond:06d}"
    return text


def _bound(session: AsyncSession, value: dt.datetime) -> Any:
    """A time to compare with stored ones (``_sqlite_text`` on SQLite)."""
    if session.get_bind().dialect.name != "sqlite":
        return value
    return literal(_sqlite_text(value), String())


class StoredTime(TypeDecorator[dt.datetime]):
    """The type of a prebuilt statement's bound time compared with stored change
    times: a timestamp on PostgreSQL (the driver takes the aware datetime as it is),
    ``_sqlite_text`` on SQLite."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if dialect.name == "sqlite":
            return dialect.type_descriptor(String())
        return dialect.type_descriptor(DateTime(timezone=True))

    def process_bind_param(self, value: dt.datetime | None, dialect: Dialect) -> Any:
        if value is None or dialect.name != "sqlite":
            return value
        return _sqlite_text(value)


class _InRecovery(FunctionElement[bool]):
    """Whether the database is a replica replaying a primary's changes."""

    type = Boolean()
    inherit_cache = True


class _ReplayedUntil(FunctionElement[dt.datetime]):
    """The commit time of the last transaction a replica replayed (null on a primary,
    and on a replica that has replayed none since it started)."""

    type = DateTime(timezone=True)
    inherit_cache = True


@compiles(_InRecovery)
def _no_recovery(_element: Any, _compiler: SQLCompiler, **_kw: Any) -> str:
    return "0"  # SQLite: one file, never a replica


@compiles(_InRecovery, "postgresql")
def _pg_in_recovery(_element: Any, _compiler: SQLCompiler, **_kw: Any) -> str:
    return "pg_is_in_recovery()"


@compiles(_ReplayedUntil)
def _no_replay(_element: Any, _compiler: SQLCompiler, **_kw: Any) -> str:
    return "NULL"


@compiles(_ReplayedUntil, "postgresql")
def _pg_replayed_until(_element: Any, _compiler: SQLCompiler, **_kw: Any) -> str:
    return "pg_last_xact_replay_timestamp()"


# The database's time and how far it holds every commit (``_horizon``), one statement
# on either database.
HORIZON = select(
    func.now().label("now"),
    _InRecovery().label("in_recovery"),
    _ReplayedUntil().label("replayed_until"),
)


def tombstone(row_id: int) -> Tombstone:
    return {"id": row_id, "xid": xid.encode(row_id), "archived": True}


async def changes(
    session: AsyncSession,
    walk: Walk,
    statement: Select[*tuple[Any, ...]],
    changed: Any,
    row_id: Any,
    alive: ColumnElement[bool],
    render: Callable[[Sequence[Row[Any]]], Awaitable[Sequence[Mapping[str, Any]]]],
) -> Changes[Any]:
    """One page of changes of ``statement`` (its rows, then the id and whether the
    record is alive are added as its last two columns, named ``row_id`` and
    ``alive``); ``render`` turns the live rows into items, in order (reading the
    statement's own columns by position or name).

    Each live item is ``render``'s with ``archived: false`` added: its record's type
    and ``Live``, which the caller declares (``Changes[ProductChange]``); a type
    checker cannot spell "this TypeVar and one key more", so the page is
    ``Changes[Any]`` here."""
    began = _began(walk, (await session.execute(HORIZON)).one()._mapping)
    since, after, limit = _bound(session, walk.since), walk.after or 0, walk.limit + 1
    page_rows, _ids = _paged(statement, changed, row_id, alive, since, after, limit)
    rows = (await session.execute(page_rows)).all()
    return await _page(walk, began, rows, lambda r: (r[-2], r[-1]), render)


def _paged(
    statement: AnySelect,
    changed: Any,
    row_id: Any,
    alive: ColumnElement[bool],
    since: Any,
    after: Any,
    limit: Any,
    among: ColumnElement[bool] | None = None,
) -> tuple[AnySelect, AnySelect]:
    """A walk's page of ``statement`` (values or bound parameters for ``since``,
    ``after`` and ``limit``): its rows with ``row_id`` and ``alive`` last, in id order,
    and a select of its ids. The page is chosen on the narrow row (id, alive), a CTE,
    and only its rows are then joined for their columns (and their subqueries run),
    whatever plan finds them. ``among``, when given, is a further condition on the
    page's rows (``Prebuilt.recent``)."""
    chosen = statement.with_only_columns(row_id.label("row_id"), alive.label("alive")).where(
        changed >= since, row_id > after
    )
    if among is not None:
        chosen = chosen.where(among)
    page = chosen.order_by(row_id).limit(limit).cte("page")
    rows = (
        statement.join(page, page.c.row_id == row_id)
        .add_columns(page.c.row_id, page.c.alive)
        .order_by(page.c.row_id)
    )
    return rows, select(page.c.row_id)


# The values of a prebuilt walk (``Prebuilt``), named for ``Reads``: the walk's
# ``since``, the id it pages after (0 on its first page: ids start at 1), and the
# page's size and one (which says whether there is more).
SINCE: BindParameter[dt.datetime] = bindparam("walk_since", type_=StoredTime())
AFTER: BindParameter[int] = bindparam("walk_after", type_=Integer())
LIMIT: BindParameter[int] = bindparam("walk_limit", type_=Integer())
# Where a recent walk starts looking for what was touched (``Prebuilt.recent``): its
# ``since`` less ``OVERLAP``, so that rows one write stamped with times a little
# apart (SQLite's clock moves between a transaction's statements; PostgreSQL's does
# not) are all found; the page still keeps only those changed at or after ``since``.
TOUCHED_SINCE: BindParameter[dt.datetime] = bindparam("walk_touched_since", type_=StoredTime())
# ... and where it stops, past any time a row can carry. A generic plan (every
# prebuilt statement runs with one, ``tillbook.db``) cannot see a bound's value: it
# takes ``time >= $1`` to keep a third of the rows, and ``$1 <= time AND time < $2``
# half a percent, which makes each part of ``touched`` a range of its index whatever
# the table's statistics say.
TOUCHED_UNTIL: BindParameter[dt.datetime] = bindparam("walk_touched_until", type_=StoredTime())
_END_OF_TIME = dt.datetime(9999, 1, 1, tzinfo=dt.UTC)
# How recent a walk's ``since`` must be for ``Prebuilt.recent`` to serve it: a till
# polling its deltas every few minutes. A longer gap, and the first sync, walk the
# feed's records in id order.
RECENT = dt.timedelta(hours=1)
# How many touches (a record may be touched more than once) a recent walk's page is
# chosen among, at most. Each page gathers them afresh (those after its cursor), so
# a walk's cost is its pages times its touches: after an import or a price change of
# the whole catalog, more than this many, the page walks the records in id order
# instead (a page of that walk reads its limit's worth of records when nearly all
# of them changed). The gathering stops at this many and one.
TOUCHED_MOST = 1000
# The touched records' ids, bound to the page (``Prebuilt.recent``).
TOUCHED: BindParameter[list[int]] = bindparam("walk_touched", type_=IdList())


class ReadsOne(Protocol):
    """What a prebuilt walk needs of ``tillbook.db.Reads`` (which this foundation
    module cannot import): a row and its lists in one read."""

    async def one(
        self, statement: AnySelect, params: Mapping[str, Any], **lists: AnySelect
    ) -> tuple[Record, dict[str, list[Record]]] | None: ...


@dataclass(frozen=True)
class Prebuilt:
    """A change feed's page as statements built once, for the hot feeds (a register's
    first sync of 10,000 products is a hundred of them): ``rows`` are the page's
    records with ``row_id`` and ``alive`` last, in id order; ``lists`` more rows for
    the page's records (a product's barcodes), each chosen by the page's ids. Run by
    ``read`` in one statement on PostgreSQL (``Reads.one``): the page is a CTE the
    lists share, the horizon the statement's own row."""

    rows: AnySelect
    lists: Mapping[str, AnySelect]
    # The same page for a recent walk (``RECENT``), chosen among the ids bound as
    # ``TOUCHED``, which ``touched`` selects (``TOUCHED_MOST`` and one at most): a
    # till's delta with little changed looks up those records by key instead of
    # reading every record of the feed to compare its change time.
    recent: Prebuilt | None = None
    touched: AnySelect | None = None


def prebuilt(
    statement: AnySelect,
    changed: Any,
    row_id: Any,
    alive: ColumnElement[bool],
    lists: Callable[[Callable[[Any], ColumnElement[bool]]], Mapping[str, AnySelect]],
    touched: Callable[[Callable[[Any], ColumnElement[bool]], Any], AnySelect | CompoundSelect[Any]]
    | None = None,
) -> Prebuilt:
    """``changes``' page of ``statement`` over ``SINCE``, ``AFTER`` and ``LIMIT``;
    ``lists`` builds the extra lists given a condition that an id column names a
    record of the page (``kit.idlists.in_page``).

    ``touched(recent, after)``, when given, selects the ids after ``after`` of every
    record whose ``changed`` may be recent (at or after the walk's ``since``), each
    part a range of an index, whose time column ``recent(column)`` bounds: more ids
    are harmless (the page compares ``changed`` still), one missing is a change a
    till never gets. With it, ``Prebuilt.recent`` serves recent walks with few
    changes."""

    def built(among: ColumnElement[bool] | None) -> Prebuilt:
        rows, ids = _paged(statement, changed, row_id, alive, SINCE, AFTER, LIMIT, among)
        return Prebuilt(rows, lists(lambda column: in_page(column, ids)))

    whole = built(None)
    if touched is None:
        return whole

    def recent_time(column: Any) -> ColumnElement[bool]:
        return and_(column >= TOUCHED_SINCE, column < TOUCHED_UNTIL)

    ids = touched(recent_time, AFTER).subquery("touched")
    gathered = select(next(iter(ids.c)).label("touched_id")).limit(TOUCHED_MOST + 1)
    return Prebuilt(whole.rows, whole.lists, built(in_ids(row_id, TOUCHED)), gathered)


def is_recent(walk: Walk) -> bool:
    """Whether ``walk`` may be served among what was touched (``RECENT``, by the
    server's clock: either way gives the same page)."""
    return walk.since >= dt.datetime.now(dt.UTC) - RECENT


async def _for(
    reads: ReadsOne, walk: Walk, feed: Prebuilt, values: Mapping[str, Any]
) -> tuple[Prebuilt, dict[str, Any], Record | None]:
    """Which of ``feed``'s statements serves ``walk``'s page, the values it adds, and
    the horizon the touched records were read at: for a recent walk, the records
    touched since (one round trip, a few index ranges) when there are few enough;
    otherwise the walk in id order.

    The page is read after the touched records, by a statement of its own (outside
    a transaction on PostgreSQL): a change that becomes visible in between is not
    among them, so the walk began when they were read, not when the page was (on a
    replica, whose replay may jump far ahead between two reads, that is what keeps
    the next delta from starting after it)."""
    if feed.recent is None or feed.touched is None or not is_recent(walk):
        return feed, {}, None
    window = {TOUCHED_SINCE.key: walk.since - OVERLAP, TOUCHED_UNTIL.key: _END_OF_TIME}
    found = await reads.one(HORIZON, {**values, **window}, ids=feed.touched)
    assert found is not None  # the horizon is always one row
    horizon, lists = found
    touches = lists["ids"]
    if len(touches) > TOUCHED_MOST:
        return feed, {}, horizon
    ids = sorted({row["touched_id"] for row in touches})
    return feed.recent, {TOUCHED.key: ids}, horizon


async def read(
    reads: ReadsOne,
    walk: Walk,
    feed: Prebuilt,
    params: Mapping[str, Any],
    render: Callable[[Sequence[Record], Mapping[str, list[Record]]], Sequence[Mapping[str, Any]]],
) -> Changes[Any]:
    """One page of ``feed`` (``changes``, prebuilt): ``params`` are the feed's own
    values (its company, its warehouse); ``render`` turns the live rows, with the
    page's lists, into items in order."""
    values = {
        **params,
        SINCE.key: walk.since,
        AFTER.key: walk.after or 0,
        LIMIT.key: walk.limit + 1,
    }
    statements, own, touched_at = await _for(reads, walk, feed, values)
    found = await reads.one(HORIZON, {**values, **own}, _rows=statements.rows, **statements.lists)
    assert found is not None  # the horizon is always one row
    horizon, lists = found
    began = _began(walk, horizon if touched_at is None else touched_at)
    rows = lists.pop("_rows")

    async def rendered(live: Sequence[Record]) -> Sequence[Mapping[str, Any]]:
        return render(live, lists)

    return await _page(walk, began, rows, lambda r: (r["row_id"], r["alive"]), rendered)


R = TypeVar("R")


def _began(walk: Walk, horizon: Record) -> dt.datetime:
    """When the walk began, checked against the database's time (``_horizon``)."""
    now, seen = _horizon(horizon)
    if walk.since > now:
        raise invalid("updated_since", f"is in the future (the server's time is {iso(now)})")
    if seen is None:  # a replica that cannot say how far it has replayed
        seen = min(walk.since + OVERLAP, now)
    return walk.began or seen


async def _page(
    walk: Walk,
    began: dt.datetime,
    rows: Sequence[R],
    mark: Callable[[R], tuple[int, bool]],
    render: Callable[[Sequence[R]], Awaitable[Sequence[Mapping[str, Any]]]],
) -> Changes[Any]:
    """The page of ``rows`` (``walk.limit`` of them and one that says there is
    more): each marked (id, alive) by ``mark``; live ones as ``render`` shows them, the
    rest as tombstones; a cursor after the last when there is more."""
    more = len(rows) > walk.limit
    rows = rows[: walk.limit]
    marks = [mark(r) for r in rows]
    rendered = iter(await render([r for r, (_, alive) in zip(rows, marks, strict=True) if alive]))
    items: list[Any] = [
        {**next(rendered), "archived": False} if alive else tombstone(row_id)
        for row_id, alive in marks
    ]
    next_cursor = None
    if more and marks:
        next_cursor = _cursor(walk, marks[-1][0], began)
    return {
        "data": items,
        "per_page": walk.limit,
        "next_cursor": next_cursor,
        "sync_token": iso(max(began - OVERLAP, EPOCH)),
    }


def _horizon(row: Record) -> tuple[dt.datetime, dt.datetime | None]:
    """The database's time, and the time up to which it holds every commit, from a
    row of ``HORIZON``: the same on a primary (and SQLite); on a replica, the commit
    time of the last transaction it replayed, or None when it has replayed none
    since it started."""
    now = utc(row["now"])
    if not row["in_recovery"]:
        return now, now
    replayed = row["replayed_until"]
    return now, None if replayed is None else min(now, utc(replayed))
