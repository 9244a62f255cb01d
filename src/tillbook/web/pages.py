"""The back office's pages: sign-in, dashboard, catalog, sales and purchases.

Each page parses its form or query, asks ``session.Page`` for its permission (the
role table of ``auth/roles.py``, through ``AdminContext.require``), and makes one
call into the same services as the back-office API; a refused write (the
services' ``ValidationFailed``) renders the form again with each message next to
its field."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Depends, Request
from fastapi.responses import RedirectResponse, Response
from pydantic import BaseModel, ValidationError
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.datastructures import FormData

from tillbook.api.admin.deps import path_id
from tillbook.api.body import errors_of
from tillbook.api.deps import DB, get_db
from tillbook.auth import admin, roles
from tillbook.auth.admin import AdminContext
from tillbook.catalog import prices as price_service
from tillbook.catalog import products as product_service
from tillbook.catalog import queries as catalog_queries
from tillbook.catalog import reference
from tillbook.catalog.reference_schemas import BrandIn, CategoryIn, TaxIn, UnitIn
from tillbook.catalog.schemas import ProductIn, ProductPatch
from tillbook.errors import NotFound, RateLimited, TillbookError, ValidationFailed, invalid
from tillbook.kit import numerals
from tillbook.kit.bounds import query_text
from tillbook.kit.pagination import Page as Paging
from tillbook.kit.pagination import parse_page
from tillbook.orders import queries as order_queries
from tillbook.reports import dashboard
from tillbook.tenancy import staff as staff_service
from tillbook.unit import UnitOfWork
from tillbook.web import session as web_session
from tillbook.web.charts import bar_chart
from tillbook.web.forms import submit, text, values
from tillbook.web.render import landing_for, render
from tillbook.web.session import Page, read_form
from tillbook.web.start import may_start

router = APIRouter(include_in_schema=False)

Staff = Annotated[AdminContext, Page()]


def see_other(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)


M = TypeVar("M", bound=BaseModel)


def parse_model(model: type[M], data: dict[str, Any]) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ValidationFailed(errors_of(exc)) from None


def decimal_field(form: FormData, name: str, errors: dict[str, list[str]]) -> Decimal | None:
    """A number typed in a form: thousands commas dropped, then ASCII digits only
    (``kit/numerals.py``: ``２`` or ``١`` is not read as 2 or 1)."""
    raw = text(form, name).replace(",", "")
    if raw == "":
        return None
    value = numerals.decimal(raw)
    if value is None:
        errors.setdefault(name, []).append(
            f"must be a number written with the digits 0-9, got {raw[:40]!r}"
        )
        return None
    return value


def id_field(form: FormData, name: str, errors: dict[str, list[str]]) -> int | None:
    raw = text(form, name)
    if raw == "":
        return None
    n = numerals.whole(raw, max_digits=18)
    if n is None:
        errors.setdefault(name, []).append("choose one from the list")
    return n


def query_id(
    raw: str | None, field: str = "warehouse_id", why: str = "choose a branch"
) -> int | None:
    """An id a page takes from its query string (``?warehouse_id=2``): None when
    absent; anything but ASCII digits is a 422 naming the parameter (``²`` was a
    500, ``２`` read as 2)."""
    if not raw:
        return None
    n = numerals.whole(raw, max_digits=18)
    if n is None:
        raise invalid(field, why)
    return n


async def branches(db: Any, ctx: AdminContext) -> list[tuple[int, str]]:
    """The branches this staff member works with (their own when scoped)."""
    return list(await db.read(lambda s: dashboard.warehouses(s, ctx.company_id, ctx.warehouse_id)))


# --- signing in ----------------------------------------------------------------------


def _safe_next(target: str | None) -> str:
    if not target or not target.startswith("/") or target.startswith("//"):
        return "/"
    return target


@router.get("/login")
async def login_page(request: Request, next: str | None = None) -> Response:
    if await may_start(request):  # nobody can sign in yet: start the first shop
        return see_other("/start")
    nonce = web_session.new_login_nonce()
    response = render(
        request, "login.html", csrf=nonce, next=_safe_next(next), values={}, errors={}
    )
    response.set_cookie(
        web_session.LOGIN_COOKIE,
        nonce,
        max_age=3600,
        httponly=True,
        samesite="lax",
        secure=web_session.secure(request),
        path="/login",
    )
    return response


@router.post("/login")
async def login(request: Request) -> Response:
    form = await read_form(request)
    web_session.check_csrf(form, request.cookies.get(web_session.LOGIN_COOKIE) or "\x00")
    email, password = text(form, "email"), form.get("password")
    target = _safe_next(text(form, "next"))
    address = request.client.host if request.client else "unknown"
    try:
        if not email or not isinstance(password, str) or not password:
            raise invalid("email", "enter your email and password")
        opened = await admin.login(
            get_db(request), request.app.state.ratelimiter, email, password, address
        )
    except TillbookError as exc:
        nonce = web_session.new_login_nonce()
        errors = exc.errors if isinstance(exc, ValidationFailed) else {"email": [exc.message]}
        response = render(
            request,
            "login.html",
            status=exc.status_code,
            csrf=nonce,
            next=target,
            values={"email": email},
            errors=errors,
        )
        response.set_cookie(
            web_session.LOGIN_COOKIE,
            nonce,
            max_age=3600,
            httponly=True,
            samesite="lax",
            secure=web_session.secure(request),
            path="/login",
        )
        for name, value in (exc.headers or {}).items():
            response.headers[name] = value
        return response
    moved = see_other(target)
    ttl = int(admin.SESSION_TTL.total_seconds())
    web_session.set_session_cookie(moved, request, opened.token, ttl)
    moved.delete_cookie(web_session.LOGIN_COOKIE, path="/login")
    return moved


@router.post("/logout")
async def logout(request: Request, ctx: Staff, db: DB) -> Response:
    await db.write(lambda s: admin.logout(s, ctx))
    response = see_other("/login")
    web_session.clear_session_cookie(response, request)
    return response


# --- dashboard -----------------------------------------------------------------------


def chart(days: list[tuple[dt.date, Decimal]]) -> dict[str, Any]:
    """Sales per day as a labelled bar chart (``web.charts``): a date every week."""
    return bar_chart(
        [(d.isoformat(), d.strftime("%d %b"), v) for d, v in days],
        title="Sales per day, last 30 days",
        x_label="Day",
        y_label="Sales",
        label_every=7,
    )


@router.get("/")
async def home(request: Request, ctx: Staff, db: DB) -> Response:
    if not ctx.can("books.read", ctx.warehouse_id):
        return see_other(landing_for(ctx))
    ctx.warehouse_for("books.read", None)
    today = dt.date.today()

    async def read(s: AsyncSession) -> dict[str, Any]:
        shops = await dashboard.warehouses(s, ctx.company_id, ctx.warehouse_id)
        ids = [i for i, _n in shops]
        low_count, low = await dashboard.low_stock(s, ctx.company_id, ids)
        return {
            "figures": await dashboard.branch_figures(s, ctx.company_id, shops, today),
            "days": chart(await dashboard.sales_per_day(s, ids, today)),
            "low_count": low_count,
            "low": low,
            "top": await dashboard.top_products(s, ids, today),
            "dues": await dashboard.dues(s, ids, today),
            "checklist": (
                await dashboard.setup_checklist(s, ctx.company_id)
                if ctx.can("settings.write")
                else None
            ),
            "failing": (
                await dashboard.failing_webhooks(s, ctx.company_id)
                if ctx.can("webhooks.manage")
                else None
            ),
        }

    return render(request, "dashboard.html", today=today, **await db.read(read))


@router.get("/account")
async def account(request: Request, ctx: Staff) -> Response:
    return render(request, "account.html")


@router.post("/account/password")
async def account_password(request: Request, ctx: Staff, db: DB) -> Response:
    """The signed-in staff member's new password, after their current one
    (throttled like a login): every session of theirs ends
    (``tenancy.staff.change_own_password``) and this browser gets the new one, so
    it stays signed in. Not a one-time form: the new session's token must not be
    kept in a replay record."""
    form = await read_form(request)
    current, new = form.get("current_password"), form.get("password")
    try:
        if not isinstance(current, str) or not current:
            raise invalid("current_password", "enter your current password")
        if not isinstance(new, str) or not new:
            raise invalid("password", "enter a new password")
        await admin.confirm_password(
            db, request.app.state.ratelimiter, ctx.user_id, current, "current_password"
        )
        opened = await db.write(
            lambda s: staff_service.change_own_password(s, ctx.company_id, ctx.user_id, new)
        )
    except ValidationFailed as exc:
        return render(request, "account.html", status=422, errors=exc.errors)
    except RateLimited as exc:
        page = render(
            request, "account.html", status=429, errors={"current_password": [exc.message]}
        )
        page.headers.update(exc.headers or {})
        return page
    moved = see_other("/account?saved=1")
    ttl = int(admin.SESSION_TTL.total_seconds())
    web_session.set_session_cookie(moved, request, opened.token, ttl)
    return moved


# --- catalog -------------------------------------------------------------------------


@router.get("/products")
async def product_list(
    request: Request,
    ctx: Annotated[AdminContext, Page("catalog.read")],
    db: DB,
    q: str | None = None,
    page: str | None = None,
    archived: str | None = None,
) -> Response:
    paging = parse_page(page, "25")
    search = query_text("q", q, 200)
    shops = await branches(db, ctx)
    data = await db.read(
        lambda s: catalog_queries.stock_page(
            s, ctx.company_id, paging, search=search, include_archived=archived == "1"
        )
    )
    return render(
        request, "products.html", data=data, q=search or "", branches=shops, archived=archived
    )


async def _reference_choices(db: Any, ctx: AdminContext) -> dict[str, list[dict[str, Any]]]:
    everything = Paging(page=1, limit=100)

    async def read(s: AsyncSession) -> dict[str, list[dict[str, Any]]]:
        out = {}
        for kind in ("unit", "category", "brand", "tax"):
            _total, rows = await reference.page_of(
                s, kind, ctx.company_id, everything, include_archived=False
            )
            out[kind] = rows
        return out

    choices: dict[str, list[dict[str, Any]]] = await db.read(read)
    return choices


async def tax_choices(db: Any, ctx: AdminContext) -> list[tuple[int, str]]:
    """The company's taxes a purchase line may name (not archived), labelled with
    their rate and whether the cost entered includes them: the select of a
    delivery's lines (blank: no tax)."""
    _total, rows = await db.read(
        lambda s: reference.page_of(
            s, "tax", ctx.company_id, Paging(page=1, limit=100), include_archived=False
        )
    )
    return [
        (t["id"], f"{t['name']} ({t['rate']}%, {'included' if t['inclusive'] else 'added'})")
        for t in rows
    ]


async def _product_form(
    request: Request,
    ctx: AdminContext,
    db: Any,
    *,
    status: int = 200,
    errors: dict[str, list[str]] | None = None,
    form_values: dict[str, str] | None = None,
) -> Response:
    shops = await branches(db, ctx)
    listable = [(i, n) for i, n in shops if ctx.can("catalog.write", i)]
    return render(
        request,
        "product_new.html",
        status=status,
        choices=await _reference_choices(db, ctx),
        branches=listable,
        stockable={i for i, _n in listable if ctx.can("stock.write", i)},
        errors=errors or {},
        values=form_values or {"units.0.unit_id": ""},
    )


@router.get("/products/new")
async def product_new(
    request: Request, ctx: Annotated[AdminContext, Page("catalog.write")], db: DB
) -> Response:
    return await _product_form(request, ctx, db)


def _product_body(
    form: FormData, shops: list[tuple[int, str]], errors: dict[str, list[str]]
) -> tuple[dict[str, Any], list[int]]:
    body: dict[str, Any] = {
        "name": text(form, "name"),
        "item_code": text(form, "item_code"),
        "barcodes": [
            b.strip() for b in text(form, "barcodes").replace(",", "\n").splitlines() if b.strip()
        ],
        "description": text(form, "description"),
        "additional_units": [],
        "listings": [],
    }
    for field in ("unit_id", "category_id", "brand_id", "tax_id"):
        body[field] = id_field(form, field, errors)
    for i in range(2):
        unit_id = id_field(form, f"units.{i}.unit_id", errors)
        if unit_id is None:
            continue
        body["additional_units"].append(
            {
                "unit_id": unit_id,
                "operator_value": decimal_field(form, f"units.{i}.operator_value", errors),
                "alternative_price": decimal_field(form, f"units.{i}.alternative_price", errors),
            }
        )
    order: list[int] = []
    for wid, _name in shops:
        prefix = f"list.{wid}."
        if form.get(prefix + "on") is None:
            continue
        listing: dict[str, Any] = {
            "warehouse_id": wid,
            "sales_price": decimal_field(form, prefix + "sales_price", errors),
            "purchase_price": decimal_field(form, prefix + "purchase_price", errors),
            "reorder_level": decimal_field(form, prefix + "reorder_level", errors) or Decimal(0),
        }
        quantity = decimal_field(form, prefix + "opening_stock.quantity", errors)
        if quantity is not None:
            listing["opening_stock"] = {
                "quantity": quantity,
                "unit_cost": decimal_field(form, prefix + "opening_stock.unit_cost", errors),
            }
        body["listings"].append(listing)
        order.append(wid)
    return body, order


def _form_errors(errors: dict[str, list[str]], order: list[int]) -> dict[str, list[str]]:
    """The service's field paths (``listings.0.sales_price``) as the form's names."""
    out: dict[str, list[str]] = {}
    for field, messages in errors.items():
        name = field
        if field.startswith("listings."):
            _l, index, *rest = field.split(".")
            i = numerals.whole(index)
            if i is not None and i < len(order):
                name = ".".join(["list", str(order[i]), *rest])
        elif field.startswith("additional_units."):
            name = "units." + field.removeprefix("additional_units.")
        out.setdefault(name, []).extend(messages)
    return out


@router.post("/products/new")
async def product_create(
    request: Request, ctx: Annotated[AdminContext, Page("catalog.write")], db: DB
) -> Response:
    form = await read_form(request)
    shops = await branches(db, ctx)
    errors: dict[str, list[str]] = {}
    body, order = _product_body(form, shops, errors)
    try:
        if errors:
            raise ValidationFailed(errors)
        parsed = parse_model(ProductIn, body)
        for listing in parsed.listings:
            ctx.may_list(listing.warehouse_id, opening_stock=listing.opening_stock is not None)

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            return await product_service.create(uow, ctx.company_id, parsed, actor_id=ctx.user_id)

        created, _replayed = await submit(request, ctx, work)
    except ValidationFailed as exc:
        return await _product_form(
            request,
            ctx,
            db,
            status=422,
            errors=_form_errors(exc.errors, order),
            form_values=values(form),
        )
    return see_other(f"/products/{created['id']}?created=1")


async def product_page(
    request: Request,
    ctx: AdminContext,
    db: Any,
    pid: int,
    *,
    status: int = 200,
    errors: dict[str, list[str]] | None = None,
    form_values: dict[str, str] | None = None,
    message: str | None = None,
    listing_errors: dict[str, dict[str, list[str]]] | None = None,
    listing_values: dict[str, dict[str, str]] | None = None,
) -> Response:
    shops = await branches(db, ctx)

    async def read(s: AsyncSession) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        product = await product_service.view(s, await product_service.get(s, ctx.company_id, pid))
        changes = await price_service.history(s, ctx.company_id, pid, [i for i, _n in shops])
        return product, changes

    product, changes = await db.read(read)
    names = dict(await db.read(lambda s: dashboard.warehouses(s, ctx.company_id)))
    listed = {li["warehouse_id"] for li in product["listings"]}
    shown = form_values or {
        "name": product["name"],
        "item_code": product["item_code"],
        "barcodes": "\n".join(product["barcodes"]),
    }
    return render(
        request,
        "product.html",
        status=status,
        product=product,
        warehouse_names=names,
        choices=await _reference_choices(db, ctx),
        can_edit=ctx.can("catalog.write"),
        errors=errors or {},
        values=shown,
        created=request.query_params.get("created") == "1",
        message=message,
        price_history=changes,
        may_edit={i for i, _n in shops if ctx.can("catalog.write", i)},
        may_price={i for i, _n in shops if ctx.can("prices.write", i)},
        may_stock={i for i, _n in shops if ctx.can("stock.write", i)},
        unlisted=[
            (i, n)
            for i, n in shops
            if i not in listed and ctx.can("catalog.write", i) and ctx.can("prices.write", i)
        ],
        listing_errors=listing_errors or {},
        listing_values=listing_values or {},
    )


@router.get("/products/{product_id}")
async def product_detail(
    request: Request,
    product_id: str,
    ctx: Annotated[AdminContext, Page("catalog.read")],
    db: DB,
) -> Response:
    return await product_page(request, ctx, db, path_id(product_id, "product"))


@router.post("/products/{product_id}/edit")
async def product_edit(
    request: Request,
    product_id: str,
    ctx: Annotated[AdminContext, Page("catalog.write")],
    db: DB,
) -> Response:
    pid = path_id(product_id, "product")
    form = await read_form(request)
    errors: dict[str, list[str]] = {}
    version = id_field(form, "version", errors)
    patch = {
        "name": text(form, "name"),
        "item_code": text(form, "item_code"),
        "barcodes": [
            b.strip() for b in text(form, "barcodes").replace(",", "\n").splitlines() if b.strip()
        ],
        "version": version,
    }
    try:
        if errors:
            raise ValidationFailed(errors)
        parsed = parse_model(ProductPatch, patch)

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            return await product_service.update(
                uow, ctx.company_id, pid, parsed, expected_version=None, actor_id=ctx.user_id
            )

        await submit(request, ctx, work)
    except ValidationFailed as exc:
        return await product_page(
            request, ctx, db, pid, status=422, errors=exc.errors, form_values=values(form)
        )
    return see_other(f"/products/{pid}")


@router.get("/products/{product_id}/archive")
async def product_archive_confirm(
    request: Request,
    product_id: str,
    ctx: Annotated[AdminContext, Page("catalog.write")],
    db: DB,
) -> Response:
    pid = path_id(product_id, "product")

    async def read(s: AsyncSession) -> dict[str, Any]:
        return await product_service.view(s, await product_service.get(s, ctx.company_id, pid))

    return render(request, "confirm_archive.html", product=await db.read(read))


@router.post("/products/{product_id}/archive")
async def product_archive(
    request: Request,
    product_id: str,
    ctx: Annotated[AdminContext, Page("catalog.write")],
) -> Response:
    pid = path_id(product_id, "product")

    async def work(uow: UnitOfWork) -> dict[str, Any]:
        return await product_service.archive(uow, ctx.company_id, pid, actor_id=ctx.user_id)

    await submit(request, ctx, work)
    return see_other(f"/products/{pid}")


# --- reference data ------------------------------------------------------------------

REFERENCE_FORMS: dict[str, tuple[type[BaseModel], str]] = {
    "unit": (UnitIn, "catalog.write"),
    "category": (CategoryIn, "catalog.write"),
    "brand": (BrandIn, "catalog.write"),
    "tax": (TaxIn, "settings.write"),
}


def category_tree(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Categories nested under their parents (``{"row": ..., "children": [...]}``),
    each level by name; one whose parent is not among ``rows`` (archived, or past
    the page read) stands at the top rather than disappearing."""
    ids = {r["id"] for r in rows}
    nodes: dict[int, dict[str, Any]] = {r["id"]: {"row": r, "children": []} for r in rows}
    top: list[dict[str, Any]] = []
    for r in sorted(rows, key=lambda r: str(r["name"]).lower()):
        parent = r.get("parent_id")
        if isinstance(parent, int) and parent in ids and parent != r["id"]:
            nodes[parent]["children"].append(nodes[r["id"]])
        else:
            top.append(nodes[r["id"]])
    return top


async def _reference_page(
    request: Request,
    ctx: AdminContext,
    db: Any,
    *,
    status: int = 200,
    errors: dict[str, dict[str, list[str]]] | None = None,
    form_values: dict[str, dict[str, str]] | None = None,
) -> Response:
    choices = await _reference_choices(db, ctx)
    return render(
        request,
        "reference.html",
        status=status,
        choices=choices,
        tree=category_tree(choices["category"]),
        may={kind: ctx.can(perm) for kind, (_m, perm) in REFERENCE_FORMS.items()},
        kind_errors=errors or {},
        kind_values=form_values or {},
    )


@router.get("/reference")
async def reference_list(
    request: Request, ctx: Annotated[AdminContext, Page("catalog.read")], db: DB
) -> Response:
    return await _reference_page(request, ctx, db)


@router.post("/reference/{kind}")
async def reference_create(
    request: Request, kind: str, ctx: Annotated[AdminContext, Page("catalog.read")], db: DB
) -> Response:
    if kind not in REFERENCE_FORMS:
        return render(request, "error.html", status=404, message="not found")
    model, permission = REFERENCE_FORMS[kind]
    ctx.require(permission)
    form = await read_form(request)
    errors: dict[str, list[str]] = {}
    data: dict[str, Any] = {"name": text(form, "name")}
    if kind == "unit":
        data["short_name"] = text(form, "short_name")
    if kind == "category":
        data["parent_id"] = id_field(form, "parent_id", errors)
    if kind == "tax":
        data["rate"] = decimal_field(form, "rate", errors)
        data["inclusive"] = form.get("inclusive") is not None
    try:
        if errors:
            raise ValidationFailed(errors)
        body: Any = parse_model(model, data)

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            s, cid, uid = uow.session, ctx.company_id, ctx.user_id
            if kind == "unit":
                added: Any = await reference.add_unit(
                    s, cid, uid, name=body.name, short_name=body.short_name
                )
            elif kind == "category":
                added = await reference.add_category(
                    s, cid, uid, name=body.name, slug=None, parent_id=body.parent_id, image=None
                )
            elif kind == "brand":
                added = await reference.add_brand(
                    s, cid, uid, name=body.name, slug=None, image=None
                )
            else:
                added = await reference.add_tax(
                    s, cid, uid, name=body.name, rate=body.rate, inclusive=body.inclusive
                )
            return {"id": added.id}

        await submit(request, ctx, work)
    except ValidationFailed as exc:
        return await _reference_page(
            request,
            ctx,
            db,
            status=422,
            errors={kind: exc.errors},
            form_values={kind: values(form)},
        )
    return see_other(f"/reference#{kind}")


# --- sales and purchases -------------------------------------------------------------

ORDER_TYPES = {
    "sales": ("sales", "Sales"),
    "purchases": ("purchases", "Purchases"),
    "sales-returns": ("sales-returns", "Sales returns"),
    "purchase-returns": ("purchase-returns", "Purchase returns"),
}


def _kind(request: Request) -> str:
    """Which list a path is: its first segment (``/sales/…``, ``/purchases/…``)."""
    return request.url.path.strip("/").split("/")[0]


def _day(raw: str | None, field: str) -> dt.date | None:
    if not raw:
        return None
    try:
        return dt.date.fromisoformat(raw)
    except ValueError:
        raise invalid(field, f"must be a date YYYY-MM-DD, got {raw[:20]!r}") from None


async def order_list(
    request: Request,
    kind: Annotated[str, Depends(_kind)],
    ctx: Staff,
    db: DB,
    date_from: str | None = None,
    date_to: str | None = None,
    invoice: str | None = None,
    page: str | None = None,
) -> Response:
    # A cashier reads the sales they made (``auth.roles.own_work_only``); the other
    # lists, and everyone's sales, need ``books.read``.
    own = kind == "sales" and ctx.own_work_only()
    if not own:
        ctx.warehouse_for("books.read", None)
    order_type, title = ORDER_TYPES[kind]
    paging = parse_page(page, "25")
    errors: dict[str, list[str]] = {}
    start = end = None
    try:
        start, end = _day(date_from, "date_from"), _day(date_to, "date_to")
    except ValidationFailed as exc:
        errors = exc.errors
    search = query_text("invoice", invoice, 100)
    shops = await branches(db, ctx)
    if own:
        shops = [(i, n) for i, n in shops if ctx.can("sales.own", i)]
    data = await db.read(
        lambda s: order_queries.back_office_page(
            s,
            [i for i, _n in shops],
            order_type,
            date_from=start,
            date_to=end,
            invoice=search,
            page=paging,
            staff_user_id=ctx.user_id if own else None,
        )
    )
    return render(
        request,
        "orders.html",
        status=422 if errors else 200,
        kind=kind,
        title=title,
        data=data,
        warehouse_names=dict(shops),
        own=own,
        errors=errors,
        values={"date_from": date_from or "", "date_to": date_to or "", "invoice": search or ""},
    )


async def order_detail(
    request: Request,
    kind: Annotated[str, Depends(_kind)],
    order_id: str,
    ctx: Staff,
    db: DB,
    print: str | None = None,
) -> Response:
    own = kind == "sales" and ctx.own_work_only()  # refused before any lookup
    if not own:
        roles.check(ctx.role, None, "books.read")
    order_type, title = ORDER_TYPES[kind]
    oid = path_id(order_id, order_queries.NOUNS[order_type])
    order, warehouse, company = await db.read(
        lambda s: order_queries.back_office_detail(s, ctx.company_id, order_type, oid)
    )
    if own:
        # Someone else's sale is not found, like a missing one.
        if order["staff_user_id"] != ctx.user_id or not ctx.can("sales.own", order["warehouse_id"]):
            raise NotFound(f"sale {oid} not found")
    else:
        ctx.require("books.read", order["warehouse_id"])
    returns = []
    if order_type == "sales":
        returns = await db.read(lambda s: order_queries.returns_of_sale(s, ctx.company_id, oid))
    template = {"invoice": "invoice.html", "receipt": "receipt.html"}.get(print or "", "order.html")
    return render(
        request,
        template,
        kind=kind,
        title=title,
        order=order,
        warehouse=warehouse,
        company=company,
        returns=returns,
    )


for _kind_name in ORDER_TYPES:
    router.add_api_route(f"/{_kind_name}", order_list, methods=["GET"])
    router.add_api_route(f"/{_kind_name}/{{order_id}}", order_detail, methods=["GET"])
