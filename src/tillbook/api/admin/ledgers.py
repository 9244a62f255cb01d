"""Ledgers, statements and the statements of the books for the back office: paged
JSON, or the whole range as a CSV download streamed page by page."""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import Query
from fastapi.responses import StreamingResponse

from tillbook.api import envelope, routing
from tillbook.api.admin.deps import Allowed, query_id
from tillbook.api.deps import DB
from tillbook.auth.admin import AdminContext
from tillbook.db import Database
from tillbook.errors import invalid
from tillbook.kit import bounds
from tillbook.kit.pagination import parse_int
from tillbook.kit.text import quoted
from tillbook.reports import balance_sheet, periods, profit_loss
from tillbook.reports.ledgers import (
    CSV_PAGE,
    FORMATS,
    PageReader,
    account_ledger_page,
    csv_rows,
    party_statement_page,
)

router = routing.admin("/reports", tags=["admin: reports"])

# A staff member scoped to one warehouse reads that warehouse\'s books only.
BooksReader = Annotated[AdminContext, Allowed("books.read", per_warehouse=True)]

FromQ = Annotated[str | None, Query(alias="from")]
ToQ = Annotated[str | None, Query(alias="to")]


def _range(date_from: str | None, date_to: str | None) -> tuple[dt.date | None, dt.date | None]:
    start, end = bounds.query_date("from", date_from), bounds.query_date("to", date_to)
    if start is not None and end is not None and start > end:
        raise invalid("from", f"{start} is after to ({end})")
    return start, end


def _format(value: str | None) -> str:
    fmt = (value or "json").strip().lower()
    if fmt not in FORMATS:
        raise invalid("format", f"must be json or csv (got {quoted(value or '')})")
    return fmt


def _limit(value: str | None) -> int | None:
    return None if value is None or value == "" else parse_int("limit", value, 100)


async def _first_then_stream(db: Database, read_page: PageReader, filename: str) -> Any:
    """The first page is read before the response starts, so a bad cursor or an
    unknown account is a plain 4xx; the rest stream, a page per read."""
    first = await read_page(None)

    async def again(cursor: str | None) -> dict[str, Any]:
        return first if cursor is None else await read_page(cursor)

    async def body() -> AsyncIterator[bytes]:
        async for chunk in csv_rows(again):
            yield chunk.encode()

    return StreamingResponse(
        body(),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )


@router.get("/ledger")
async def get_ledger(
    ctx: BooksReader,
    db: DB,
    account: str | None = None,
    warehouse_id: str | None = None,
    date_from: FromQ = None,
    date_to: ToQ = None,
    cursor: str | None = None,
    limit: str | None = None,
    format: str | None = None,
) -> Any:
    """One account's ledger: a page (``cursor``, ``limit``) or, with
    ``format=csv``, every line of the range as a CSV download."""
    # Every parameter checked before the missing one is named: a NUL anywhere is a
    # 422 naming where it was (DESIGN.md §12).
    code = bounds.query_value("account", account)
    wid = ctx.warehouse_for("books.read", query_id(warehouse_id, "warehouse_id"))
    start, end = _range(date_from, date_to)
    size = _limit(limit)
    fmt = _format(format)
    cursor = bounds.query_value("cursor", cursor)
    if code is None:
        raise invalid("account", "is required (an account code, e.g. 11101)")

    def read_page(at: str | None, n: int | None = size) -> Any:
        return db.replica_read(
            lambda s: account_ledger_page(
                s,
                ctx.company_id,
                code,
                warehouse_id=wid,
                date_from=start,
                date_to=end,
                cursor=at,
                limit=n,
            )
        )

    if fmt == "csv":
        return await _first_then_stream(
            db, lambda at: read_page(at, CSV_PAGE), f"ledger-{code}.csv"
        )
    return envelope.ok(await read_page(cursor))


@router.get("/statement")
async def get_statement(
    ctx: BooksReader,
    db: DB,
    party_id: str | None = None,
    warehouse_id: str | None = None,
    date_from: FromQ = None,
    date_to: ToQ = None,
    cursor: str | None = None,
    limit: str | None = None,
    format: str | None = None,
) -> Any:
    """A customer's or supplier's statement, paged or as a CSV download."""
    pid = query_id(party_id, "party_id")
    wid = ctx.warehouse_for("books.read", query_id(warehouse_id, "warehouse_id"))
    start, end = _range(date_from, date_to)
    size = _limit(limit)
    fmt = _format(format)
    cursor = bounds.query_value("cursor", cursor)
    if pid is None:
        raise invalid("party_id", "is required")

    def read_page(at: str | None, n: int | None = size) -> Any:
        return db.replica_read(
            lambda s: party_statement_page(
                s,
                ctx.company_id,
                pid,
                warehouse_id=wid,
                date_from=start,
                date_to=end,
                cursor=at,
                limit=n,
            )
        )

    if fmt == "csv":
        return await _first_then_stream(
            db, lambda at: read_page(at, CSV_PAGE), f"statement-{pid}.csv"
        )
    return envelope.ok(await read_page(cursor))


@router.get("/profit-loss")
async def get_profit_loss(
    ctx: BooksReader,
    db: DB,
    warehouse_id: str | None = None,
    date_from: FromQ = None,
    date_to: ToQ = None,
) -> dict[str, Any]:
    wid = ctx.warehouse_for("books.read", query_id(warehouse_id, "warehouse_id"))
    start, end = _range(date_from, date_to)
    data = await db.replica_read(lambda s: profit_loss(s, ctx.company_id, wid, start, end))
    return envelope.ok(data)


@router.get("/balance-sheet")
async def get_balance_sheet(
    ctx: BooksReader, db: DB, warehouse_id: str | None = None, date_to: ToQ = None
) -> dict[str, Any]:
    wid = ctx.warehouse_for("books.read", query_id(warehouse_id, "warehouse_id"))
    as_of = bounds.query_date("to", date_to)
    data = await db.replica_read(lambda s: balance_sheet(s, ctx.company_id, wid, as_of))
    return envelope.ok(data)


@router.get("/check-rollups")
async def get_rollup_check(
    ctx: Annotated[AdminContext, Allowed("books.read")], db: DB
) -> dict[str, Any]:
    """The whole company's roll-ups against its lines: not for a staff member scoped
    to one warehouse."""
    data = await periods.check(db, ctx.company_id)
    return envelope.ok(data)
