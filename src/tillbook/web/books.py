"""The books beyond the statements: an account's ledger (paged with the report's
cursor, downloadable as CSV) and the period close.

A ledger is ``books.read`` (narrowed to a scoped staff member's branch). Closing
the books through a day is ``books.close`` (the accountant's month end), reopening
``books.reopen`` (an owner's decision); both are company-wide, audited by
``reports.periods``, and run once per form (``forms.submit``): a close sent twice
closes once, and a close of a day already closed says so."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any

from fastapi import Request
from fastapi.responses import Response, StreamingResponse
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.api import routing
from tillbook.api.deps import DB
from tillbook.auth.admin import AdminContext
from tillbook.errors import Conflict, ValidationFailed, invalid
from tillbook.kit import bounds
from tillbook.models import Account
from tillbook.reports import periods
from tillbook.reports.ledgers import CSV_PAGE, account_ledger_page, csv_rows
from tillbook.reports.schemas import PeriodCloseIn, PeriodReopenIn
from tillbook.unit import UnitOfWork
from tillbook.web.forms import branches, parse_model, query_id, see_other, submit, text
from tillbook.web.render import render
from tillbook.web.session import Page, read_form

router = routing.pages()
Books = Annotated[AdminContext, Page("books.read", per_warehouse=True)]


async def _accounts(s: AsyncSession, company_id: int) -> list[tuple[str, str]]:
    rows = await s.execute(
        select(Account.code, Account.name)
        .where(Account.company_id == company_id, Account.is_posting.is_(True))
        .order_by(Account.code)
    )
    return [(code, f"{code} {name}") for code, name in rows.all()]


@router.get("/reports/ledger")
async def ledger(request: Request, ctx: Books, db: DB) -> Response:
    params = request.query_params
    shops = await branches(db, ctx)
    errors: dict[str, list[str]] = {}
    code = bounds.query_value("account", params.get("account"))
    cursor = bounds.query_value("cursor", params.get("cursor"))
    start = end = None
    wid: int | None = None
    try:
        wid = ctx.warehouse_for("books.read", query_id(params.get("warehouse_id")))
        start = bounds.query_date("date_from", params.get("date_from") or None)
        end = bounds.query_date("date_to", params.get("date_to") or None)
        if start is not None and end is not None and start > end:
            raise invalid("date_from", f"{start} is after the end date ({end})")
    except ValidationFailed as exc:
        errors = exc.errors
    accounts = await db.read(lambda s: _accounts(s, ctx.company_id))

    def read_page(at: str | None, size: int = 50) -> Any:
        assert code is not None

        async def read(s: AsyncSession) -> dict[str, Any]:
            return await account_ledger_page(
                s,
                ctx.company_id,
                code,
                warehouse_id=wid,
                date_from=start,
                date_to=end,
                cursor=at,
                limit=size,
            )

        return db.read(read)

    data = None
    if code and not errors:
        if params.get("format") == "csv":
            first = await read_page(None, CSV_PAGE)

            async def again(at: str | None) -> dict[str, Any]:
                return first if at is None else await read_page(at, CSV_PAGE)  # type: ignore[no-any-return]

            async def body() -> Any:
                async for chunk in csv_rows(again):
                    yield chunk.encode()

            return StreamingResponse(
                body(),
                media_type="text/csv; charset=utf-8",
                headers={"Content-Disposition": f'attachment; filename="ledger-{code}.csv"'},
            )
        data = await read_page(cursor)
    return render(
        request,
        "ledger.html",
        status=422 if errors else 200,
        accounts=accounts,
        data=data,
        branches=shops,
        errors=errors,
        values={
            "account": code or "",
            "warehouse_id": params.get("warehouse_id") or "",
            "date_from": params.get("date_from") or "",
            "date_to": params.get("date_to") or "",
        },
        first_page=cursor is None,
    )


# --- period close --------------------------------------------------------------------


async def _periods_page(
    request: Request,
    ctx: AdminContext,
    db: Any,
    *,
    status: int = 200,
    errors: dict[str, list[str]] | None = None,
    message: str | None = None,
    done: str | None = None,
) -> Response:
    state = await db.read(lambda s: periods.status(s, ctx.company_id))
    closed = state["closed_through"]
    offered = periods.suggested_close(
        dt.date.today(), dt.date.fromisoformat(closed) if closed else None
    )
    return render(
        request,
        "periods.html",
        status=status,
        state=state,
        can_close=ctx.can("books.close"),
        can_reopen=ctx.can("books.reopen"),
        errors=errors or {},
        values={"through": offered.isoformat() if offered else ""},
        message=message,
        done=done or request.query_params.get("done"),
    )


@router.get("/reports/periods")
async def periods_page(request: Request, ctx: Books, db: DB) -> Response:
    ctx.warehouse_for("books.read", None)
    return await _periods_page(request, ctx, db)


def _through(form: Any, required: bool) -> dict[str, Any]:
    """The day as the form sent it: the body model checks it as the API's does."""
    raw = text(form, "through")
    return {"through": None if raw == "" and not required else raw}


@router.post("/reports/periods/close")
async def close(
    request: Request, ctx: Annotated[AdminContext, Page("books.close")], db: DB
) -> Response:
    form = await read_form(request)
    try:
        body = parse_model(PeriodCloseIn, _through(form, True))

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            return await periods.close_in(uow, ctx.company_id, body.through, ctx.user_id)

        await submit(request, ctx, work)
        await periods.roll_up(db, ctx.company_id)
    except ValidationFailed as exc:
        return await _periods_page(request, ctx, db, status=422, errors=exc.errors)
    except Conflict as exc:
        return await _periods_page(request, ctx, db, status=409, message=exc.message)
    return see_other("/reports/periods?done=closed")


@router.post("/reports/periods/reopen")
async def reopen(
    request: Request, ctx: Annotated[AdminContext, Page("books.reopen")], db: DB
) -> Response:
    form = await read_form(request)
    try:
        body = parse_model(PeriodReopenIn, _through(form, False))

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            return await periods.reopen_in(uow.session, ctx.company_id, body.through, ctx.user_id)

        await submit(request, ctx, work)
    except ValidationFailed as exc:
        return await _periods_page(request, ctx, db, status=422, errors=exc.errors)
    except Conflict as exc:
        return await _periods_page(request, ctx, db, status=409, message=exc.message)
    return see_other("/reports/periods?done=reopened")
