"""API keys (staff and webhooks: ``staffing.py``, ``hooks.py``), the import page and the reports.

API keys: the secret is shown once, on the page that answers the creation; it is
never stored in the form's replay record (``forms.submit`` keeps only the key's id
and public key), so a form sent twice creates one key and the second answer says
the secret was shown already."""

from __future__ import annotations

import datetime as dt
import io
from decimal import Decimal
from typing import Annotated, Any

from fastapi import Request
from fastapi.responses import Response
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.api import routing
from tillbook.api.admin.deps import path_id
from tillbook.api.deps import DB
from tillbook.auth import admin
from tillbook.auth.admin import AdminContext
from tillbook.catalog import import_export as catalog_import_export
from tillbook.errors import RateLimited, Unauthorized, ValidationFailed, invalid
from tillbook.imports import ImportRejected
from tillbook.kit import csvcells
from tillbook.kit.changes import utc
from tillbook.kit.pagination import Page as Paging
from tillbook.kit.pagination import parse_page
from tillbook.parties import import_export as party_import_export
from tillbook.reports import (
    balance_sheet,
    profit_loss,
    stock_valuation,
    stock_valuation_company,
    stock_valuation_page,
    trial_balance,
)
from tillbook.tenancy import service as tenancy
from tillbook.tenancy import staff as staff_service
from tillbook.unit import UnitOfWork
from tillbook.web.charts import bar_chart
from tillbook.web.forms import branches, id_field, query_id, see_other, submit, text, upload, values
from tillbook.web.render import render
from tillbook.web.session import Page, read_form

router = routing.pages()

Keys = Annotated[AdminContext, Page("keys.manage")]


async def _keys_page(
    request: Request,
    ctx: AdminContext,
    db: Any,
    *,
    status: int = 200,
    created: dict[str, Any] | None = None,
    errors: dict[str, list[str]] | None = None,
    form_values: dict[str, str] | None = None,
) -> Response:
    keys = await db.read(lambda s: tenancy.list_api_keys(s, ctx.company_id))
    now = dt.datetime.now(dt.UTC)
    graces = {  # keys whose old secrets still work after a rotation, until when
        k.id: utc(k.previous_valid_until)
        for k in keys
        if k.status == 1 and k.previous_valid_until and utc(k.previous_valid_until) > now
    }
    _total, members = await db.read(
        lambda s: staff_service.list_staff(
            s, ctx.company_id, Paging(page=1, limit=100), include_archived=False
        )
    )
    return render(
        request,
        "keys.html",
        status=status,
        keys=keys,
        graces=graces,
        staff_choices=[(u.id, f"{u.name} ({u.role})") for u in members if u.role],
        staff_names={u.id: u.name for u in members},
        branches=await branches(db, ctx),
        created=created,
        errors=errors or {},
        values=form_values or {},
    )


def _shown_once(new: tenancy.NewKey, secret: dict[str, str]) -> dict[str, Any]:
    """The body ``forms.submit`` stores to answer a second send of the form: the key
    without its secrets, which go into ``secret`` for this one answer only."""
    secret["secret_key"] = new.secret_key
    secret["hmac_secret"] = new.hmac_secret
    return {"id": new.key.id, "public_key": new.key.public_key, "name": new.key.name}


@router.get("/settings/keys")
async def keys_list(request: Request, ctx: Keys, db: DB) -> Response:
    return await _keys_page(request, ctx, db)


@router.post("/settings/keys")
async def keys_create(request: Request, ctx: Keys, db: DB) -> Response:
    form = await read_form(request)
    errors: dict[str, list[str]] = {}
    warehouse_id = id_field(form, "warehouse_id", errors)
    user_id = id_field(form, "user_id", errors)
    name = text(form, "name")
    secret: dict[str, str] = {}
    try:
        if warehouse_id is None:
            errors.setdefault("warehouse_id", []).append("choose a branch")
        if errors:
            raise ValidationFailed(errors)
        assert warehouse_id is not None

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            new = await tenancy.issue_api_key(
                uow.session,
                ctx.company_id,
                warehouse_id,
                name,
                actor_id=ctx.user_id,
                user_id=user_id,
            )
            return _shown_once(new, secret)

        body, replayed = await submit(request, ctx, work)
    except ValidationFailed as exc:
        return await _keys_page(
            request, ctx, db, status=422, errors=exc.errors, form_values=values(form)
        )
    return await _keys_page(request, ctx, db, created={**body, **secret, "replayed": replayed})


@router.get("/settings/keys/{key_id}/revoke")
async def key_revoke_confirm(request: Request, key_id: str, ctx: Keys, db: DB) -> Response:
    kid = path_id(key_id, "key")
    key = await db.read(lambda s: tenancy.company_key(s, ctx.company_id, kid))
    return render(request, "key_revoke.html", key=key)


@router.post("/settings/keys/{key_id}/revoke")
async def key_revoke(request: Request, key_id: str, ctx: Keys) -> Response:
    kid = path_id(key_id, "key")

    async def work(uow: UnitOfWork) -> dict[str, Any]:
        done = await tenancy.revoke_company_key(
            uow.session, ctx.company_id, kid, actor_id=ctx.user_id
        )
        return {"id": done.key.id, "already_revoked": done.already_revoked}

    await submit(request, ctx, work)
    return see_other("/settings/keys")


GRACE_CHOICES = (
    ("none", "No: they stop at once"),
    ("1h", "For 1 hour"),
    ("24h", "For 24 hours"),
    ("7d", "For 7 days"),
)


async def _rotate_page(
    request: Request,
    ctx: AdminContext,
    db: Any,
    kid: int,
    *,
    status: int = 200,
    errors: dict[str, list[str]] | None = None,
) -> Response:
    key = await db.read(lambda s: tenancy.company_key(s, ctx.company_id, kid))
    return render(
        request,
        "key_rotate.html",
        status=status,
        key=key,
        graces=GRACE_CHOICES,
        errors=errors or {},
    )


@router.get("/settings/keys/{key_id}/rotate")
async def key_rotate_confirm(request: Request, key_id: str, ctx: Keys, db: DB) -> Response:
    return await _rotate_page(request, ctx, db, path_id(key_id, "key"))


@router.post("/settings/keys/{key_id}/rotate")
async def key_rotate(request: Request, key_id: str, ctx: Keys, db: DB) -> Response:
    """New secrets for the key, shown once on the keys page as at creation (and,
    like there, kept out of the form's replay record: a second send of the form
    rotates nothing and says the secrets were shown already). ``grace``: how long
    the old secrets keep working (``tenancy.ROTATION_GRACE``; none by default)."""
    kid = path_id(key_id, "key")
    form = await read_form(request)
    try:
        grace = tenancy.rotation_grace(text(form, "grace"))
    except ValidationFailed as exc:
        return await _rotate_page(request, ctx, db, kid, status=422, errors=exc.errors)
    secret: dict[str, str] = {}

    async def work(uow: UnitOfWork) -> dict[str, Any]:
        new = await tenancy.rotate_company_key(
            uow.session, ctx.company_id, kid, actor_id=ctx.user_id, grace=grace
        )
        until = new.key.previous_valid_until
        return {**_shown_once(new, secret), "old_until": until.isoformat() if until else None}

    body, replayed = await submit(request, ctx, work)
    return await _keys_page(
        request, ctx, db, created={**body, **secret, "replayed": replayed, "rotated": True}
    )


async def _reveal_page(
    request: Request,
    ctx: AdminContext,
    db: Any,
    kid: int,
    *,
    status: int = 200,
    secret: str | None = None,
    errors: dict[str, list[str]] | None = None,
) -> Response:
    key = await db.read(lambda s: tenancy.company_key(s, ctx.company_id, kid))
    return render(
        request, "key_reveal.html", status=status, key=key, secret=secret, errors=errors or {}
    )


@router.get("/settings/keys/{key_id}/reveal")
async def key_reveal_form(request: Request, key_id: str, ctx: Keys, db: DB) -> Response:
    return await _reveal_page(request, ctx, db, path_id(key_id, "key"))


@router.post("/settings/keys/{key_id}/reveal")
async def key_reveal(request: Request, key_id: str, ctx: Keys, db: DB) -> Response:
    """The secret again after the signed-in owner's own password
    (``tenancy.reveal_company_secret``: not a fellow owner's); the showing is
    audited, and wrong passwords are throttled per staff member like logins. Not a
    one-time form: it changes nothing but the trail, and the secret must not be kept
    in a replay record."""
    kid = path_id(key_id, "key")
    form = await read_form(request)
    raw = form.get("password")
    password = raw if isinstance(raw, str) else ""
    if not password:
        return await _reveal_page(
            request, ctx, db, kid, status=422, errors={"password": ["enter your password"]}
        )
    limiter = request.app.state.ratelimiter
    try:
        await admin.check_reentry(limiter, ctx.user_id)
        secret = await db.write(
            lambda s: tenancy.reveal_company_secret(
                s, ctx.company_id, kid, password, actor_id=ctx.user_id
            )
        )
    except Unauthorized:
        await admin.reentry_failed(limiter, ctx.user_id)
        return await _reveal_page(
            request, ctx, db, kid, status=403, errors={"password": ["wrong password"]}
        )
    except RateLimited as exc:
        page = await _reveal_page(
            request, ctx, db, kid, status=429, errors={"password": [exc.message]}
        )
        page.headers.update(exc.headers or {})
        return page
    return await _reveal_page(request, ctx, db, kid, secret=secret)


# --- import ----------------------------------------------------------------------------

Importer = Annotated[AdminContext, Page("catalog.write")]
IMPORTS = {"products": "Products", "customers": "Customers", "suppliers": "Suppliers"}


@router.get("/import")
async def import_page(request: Request, ctx: Importer) -> Response:
    return render(request, "import.html", kinds=IMPORTS, problems=None, counts=None)


@router.post("/import")
async def import_file(request: Request, ctx: Importer) -> Response:
    form = await read_form(request)
    kind = text(form, "kind")
    problems: list[str] | None = None
    counts: dict[str, Any] | None = None
    errors: dict[str, list[str]] = {}
    try:
        if kind not in IMPORTS:
            raise invalid("kind", "choose what the file holds")
        if kind != "products":
            # A party file may carry opening balances: the same permission as the API's.
            ctx.require("parties.credit")
        data = await upload(form, "file", catalog_import_export.MAX_BYTES)
        if not data:
            raise invalid("file", "choose a CSV file")
        file_bytes = data

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            if kind == "products":
                done = await catalog_import_export.import_products(
                    uow, ctx.company_id, file_bytes, actor_id=ctx.user_id
                )
            else:
                done = await party_import_export.import_parties(
                    uow,
                    ctx.company_id,
                    kind.rstrip("s"),
                    file_bytes,
                    actor_id=ctx.user_id,
                    placed=lambda wid: ctx.warehouse_for("parties.credit", wid),
                )
            return dict(done.as_dict())

        counts, _replayed = await submit(request, ctx, work, file_bytes=file_bytes)
    except ImportRejected as exc:
        problems = exc.lines()
    except ValidationFailed as exc:
        errors = exc.errors
    status = 422 if problems or errors else 200
    return render(
        request,
        "import.html",
        status=status,
        kinds=IMPORTS,
        problems=problems,
        counts=counts,
        errors=errors,
        values={"kind": kind},
    )


# --- reports ---------------------------------------------------------------------------

Books = Annotated[AdminContext, Page("books.read", per_warehouse=True)]
REPORTS = {
    "trial-balance": "Trial balance",
    "profit-loss": "Profit and loss",
    "balance-sheet": "Balance sheet",
    "stock-valuation": "Stock valuation",
}
# The filters each report takes (the page shows only those): a balance sheet is
# at a day, a stock valuation is as it is now.
REPORT_FILTERS: dict[str, frozenset[str]] = {
    "trial-balance": frozenset({"warehouse_id", "date_from", "date_to"}),
    "profit-loss": frozenset({"warehouse_id", "date_from", "date_to"}),
    "balance-sheet": frozenset({"warehouse_id", "date_to"}),
    "stock-valuation": frozenset({"warehouse_id"}),
}
CHART_MONTHS = 12


def _date(raw: str | None, field: str) -> dt.date | None:
    if not raw:
        return None
    try:
        return dt.date.fromisoformat(raw)
    except ValueError:
        raise invalid(field, f"must be a date YYYY-MM-DD, got {raw[:20]!r}") from None


def _csv(rows: list[list[str]], name: str) -> Response:
    buffer = io.StringIO()
    csvcells.writer(buffer).writerows(rows)
    return Response(
        buffer.getvalue().encode(),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{name}.csv"'},
    )


def _months(start: dt.date | None, end: dt.date) -> list[tuple[dt.date, dt.date]]:
    """The calendar months a chart shows: those of the range, at most the last
    ``CHART_MONTHS`` of it, each cut to the range."""
    first = dt.date(end.year, end.month, 1)
    out: list[tuple[dt.date, dt.date]] = []
    while len(out) < CHART_MONTHS:
        nxt = dt.date(first.year + first.month // 12, first.month % 12 + 1, 1)
        out.append((max(first, start) if start else first, min(nxt - dt.timedelta(days=1), end)))
        if start is not None and first <= start:
            break
        first = dt.date(first.year - (first.month == 1), (first.month - 2) % 12 + 1, 1)
    return out[::-1]


def month_chart(months: list[tuple[dt.date, Decimal]]) -> dict[str, Any]:
    """Net profit per month as a labelled bar chart (``web.charts``): a loss hangs
    below the zero line."""
    return bar_chart(
        [(m.strftime("%B %Y"), m.strftime("%b %y"), v) for m, v in months],
        title="Net profit by month",
        x_label="Month",
        y_label="Net profit",
    )


def _report_csv(report: str, data: dict[str, Any]) -> Response:
    rows: list[list[str]]
    if report == "profit-loss":
        rows = [["section", "code", "name", "amount"]]
        for section in ("income", "expenses"):
            rows += [
                [section, a["code"], a["name"], a["amount"]] for a in data[section]["accounts"]
            ]
        rows.append(["net_profit", "", "", data["net_profit"]])
    elif report == "balance-sheet":
        rows = [["section", "code", "name", "amount"]]
        for section in ("assets", "liabilities", "equity"):
            rows += [
                [section, a["code"], a["name"], a["amount"]] for a in data[section]["accounts"]
            ]
            if section == "equity":
                rows.append([section, "", "current earnings", data["equity"]["current_earnings"]])
            rows.append([section, "", "total", data[section]["total"]])
        rows.append(["", "", "total liabilities and equity", data["total_liabilities_and_equity"]])
    elif report == "stock-valuation":
        rows = [["warehouse_id", "product_id", "name", "current_stock", "value"]]
        for w in data["warehouses"]:
            rows += [
                [w["warehouse_id"], p["product_id"], p["name"], p["current_stock"], p["value"]]
                for p in w["products"]
            ]
        rows.append(["", "", "total", "", data["total_value"]])
    else:
        rows = [["code", "name", "type", "debit", "credit", "balance"]]
        rows += [
            [a["code"], a["name"], a["type"], a["debit"], a["credit"], a["balance"]]
            for a in data["accounts"]
        ]
        rows.append(["", "total", "", data["total_debit"], data["total_credit"], ""])
    return _csv(rows, report)


@router.get("/reports")
async def reports_page(
    request: Request,
    ctx: Books,
    db: DB,
    report: str = "trial-balance",
    warehouse_id: str | None = None,
    date_from: str | None = None,
    date_to: str | None = None,
    format: str | None = None,
    page: str | None = None,
) -> Response:
    if report not in REPORTS:
        report = "trial-balance"
    shops = await branches(db, ctx)
    errors: dict[str, list[str]] = {}
    chart: dict[str, Any] | None = None
    paging = parse_page(page, "50")
    takes = REPORT_FILTERS[report]  # a filter the report does not take is ignored
    date_from = date_from if "date_from" in takes else None
    date_to = date_to if "date_to" in takes else None
    try:
        wh = query_id(warehouse_id)
        wh = ctx.warehouse_for("books.read", wh)
        start, end = _date(date_from, "date_from"), _date(date_to, "date_to")

        async def read(s: AsyncSession) -> dict[str, Any]:
            if report == "profit-loss":
                # the chart's months come with the figures, from the same read
                return await profit_loss(s, ctx.company_id, wh, start, end, by_month=True)
            if report == "balance-sheet":
                return await balance_sheet(s, ctx.company_id, wh, end)
            if report == "stock-valuation" and format != "csv":
                ids = [wh] if wh is not None else [i for i, _n in shops]
                return await stock_valuation_page(s, ctx.company_id, ids, paging)
            if report == "stock-valuation":
                if wh is not None:
                    one = await stock_valuation(s, ctx.company_id, wh)
                    return {
                        "warehouses": [one],
                        "total_value": one["total_value"],
                        "gl_inventory_balance": one["gl_inventory_balance"],
                    }
                return await stock_valuation_company(s, ctx.company_id)
            return await trial_balance(s, ctx.company_id, wh, start, end)

        data: dict[str, Any] | None = await db.read(read)
        if report == "profit-loss" and data is not None:
            nets = dict(data.pop("months"))
            shown = _months(start, end or dt.date.today())
            chart = month_chart([(a, nets.get(a.replace(day=1), Decimal(0))) for a, _b in shown])
    except ValidationFailed as exc:
        errors, data = exc.errors, None
    if format == "csv" and data is not None:
        return _report_csv(report, data)
    query = request.url.query
    return render(
        request,
        "reports.html",
        status=422 if errors else 200,
        reports=REPORTS,
        report=report,
        filters=takes,
        data=data,
        chart=chart,
        paging=paging,
        branches=shops,
        errors=errors,
        values={
            "warehouse_id": warehouse_id or "",
            "date_from": date_from or "",
            "date_to": date_to or "",
        },
        csv_url=f"/reports?{query + '&' if query else ''}format=csv",
        page_url="/reports?"
        + "&".join(f"{k}={v}" for k, v in request.query_params.items() if k != "page"),
    )
