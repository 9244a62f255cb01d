"""Templates: one Jinja2 environment (autoescaped), the filters pages share, and the
navigation, built from the role table so that it shows only what the role may do."""

from __future__ import annotations

import datetime as dt
import secrets
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from fastapi import Request
from fastapi.responses import HTMLResponse
from jinja2 import Environment, FileSystemLoader, pass_context, select_autoescape
from jinja2.runtime import Context

from tillbook.auth.admin import AdminContext
from tillbook.inventory.reasons import movement_reason
from tillbook.models.tenancy import MONEY_FORMATS

HERE = Path(__file__).parent
env = Environment(
    loader=FileSystemLoader(HERE / "templates"),
    autoescape=select_autoescape(["html"]),
    trim_blocks=True,
    lstrip_blocks=True,
)


DEFAULT_MONEY_FORMAT = "1,234.56"


def money_text(value: Any, money_format: str = DEFAULT_MONEY_FORMAT) -> str:
    """Money with grouping and two places in one of ``MONEY_FORMATS`` (``1,234.50``,
    ``1.234,50``, ``1 234,50`` with a no-break space, so an amount never wraps)."""
    if value is None or value == "":
        return ""
    try:
        amount = Decimal(str(value))
    except InvalidOperation:
        return str(value)
    text = f"{amount:,.2f}"
    group, point = MONEY_FORMATS.get(money_format, MONEY_FORMATS[DEFAULT_MONEY_FORMAT])
    if (group, point) == (",", "."):
        return text
    return text.replace(",", "\0").replace(".", point).replace("\0", group)


@pass_context
def money(context: Context, value: Any) -> str:
    """``{{ amount|money }}``: in the signed-in company's format (``render`` passes
    ``money_format``; the session reads it with the staff member)."""
    return money_text(value, context.get("money_format") or DEFAULT_MONEY_FORMAT)


def _zone(name: str | None) -> dt.tzinfo:
    try:
        return ZoneInfo(name) if name else dt.UTC
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return dt.UTC  # a zone the tz database has since dropped: times stay readable


@pass_context
def when(context: Context, value: Any, branch: int | str | None = None) -> str:
    """``{{ moment|when(order.warehouse_id) }}``: a moment (a datetime, or ISO text
    as the views give it) on the clock of the branch it happened in (a warehouse id,
    looked up in the company's ``branch_zones``, or a zone name; none: UTC), with
    the zone's abbreviation. Business dates are not moments: pages show them as
    they are."""
    zone = branch if isinstance(branch, str) else None
    if isinstance(branch, int):
        zone = (context.get("branch_zones") or {}).get(branch)
    return moment_text(value, zone)


def moment_text(value: Any, zone: str | None = None, fmt: str = "%Y-%m-%d %H:%M") -> str:
    """A moment in ``zone``; a naive value is UTC (SQLite keeps no zone)."""
    if value is None or value == "":
        return ""
    if isinstance(value, str):
        try:
            value = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return str(value)
    if not isinstance(value, dt.datetime):
        return str(value)
    aware = value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value
    local = aware.astimezone(_zone(zone))
    return f"{local.strftime(fmt)} {local.tzname() or ''}".rstrip()


def qty(value: Any) -> str:
    if value is None or value == "":
        return ""
    try:
        amount = Decimal(str(value))
    except InvalidOperation:
        return str(value)
    text = f"{amount:,f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


env.filters["money"] = money
env.filters["qty"] = qty
env.filters["when"] = when
env.filters["reason"] = movement_reason  # ``{{ m.reason|reason }}``: "Customer return"

# The menu, grouped by the task at hand (a cashier sells, a manager buys and counts,
# an owner reads the money and the reports, and sets the shop up): (group, label,
# path, permission a role needs to see the entry, or a tuple of them, any one
# enough); the pages check the same.
NAV: tuple[tuple[str, str, str, str | tuple[str, ...] | None], ...] = (
    ("", "Dashboard", "/", "books.read"),
    ("Sell", "Sales", "/sales", ("books.read", "sales.own")),
    ("Sell", "Returns", "/sales-returns", "books.read"),
    ("Sell", "Customers", "/customers", "parties.read"),
    ("Sell", "Shifts", "/shifts", ("books.read", "sales.own")),
    ("Sell", "Promotions", "/promotions", "catalog.read"),
    ("Buy", "Purchase orders", "/purchase-orders", "books.read"),
    ("Buy", "Purchases", "/purchases", "books.read"),
    ("Buy", "Suppliers", "/suppliers", "parties.read"),
    ("Stock", "Products", "/products", "catalog.read"),
    ("Stock", "Stock", "/stock", "catalog.read"),
    ("Stock", "Transfers", "/transfers", "books.read"),
    ("Stock", "Price changes", "/prices", "prices.write"),
    ("Stock", "Categories, brands, taxes", "/reference", "catalog.read"),
    ("Stock", "Import", "/import", "catalog.write"),
    ("Money", "Payments", "/payments", "books.read"),
    ("Money", "Expenses", "/expenses", "books.read"),
    ("Money", "Cash and bank", "/money-moves", "money.move"),
    ("Reports", "Reports", "/reports", "books.read"),
    ("Reports", "Ledgers", "/reports/ledger", "books.read"),
    ("Reports", "Closing the books", "/reports/periods", "books.read"),
    ("Settings", "Company", "/settings/company", "settings.write"),
    ("Settings", "Branches", "/settings/branches", "settings.write"),
    ("Settings", "Staff", "/settings/staff", "staff.manage"),
    ("Settings", "Payment modes", "/settings/payment-modes", "settings.write"),
    ("Settings", "Expense categories", "/settings/expense-categories", "settings.write"),
    ("Settings", "Currencies", "/settings/currencies", "books.read"),
    ("Settings", "Loyalty", "/settings/loyalty", "settings.write"),
    ("Settings", "API keys", "/settings/keys", "keys.manage"),
    ("Settings", "Registers", "/settings/registers", "registers.manage"),
    ("Settings", "Webhooks", "/settings/webhooks", "webhooks.manage"),
)
GROUPS = ("", "Sell", "Buy", "Stock", "Money", "Reports", "Settings")


def nav_for(ctx: AdminContext | None) -> list[tuple[str, str]]:
    """The entries this staff member may open, in menu order: (label, path)."""
    return [(label, path) for _group, label, path in _visible(ctx)]


def landing_for(ctx: AdminContext | None) -> str:
    """Where a staff member who may not read the dashboard starts: the products
    (a cashier's lookup) when they may see them, else their first menu entry."""
    paths = [path for _label, path in nav_for(ctx)]
    for preferred in ("/", "/products"):
        if preferred in paths:
            return preferred
    return paths[0] if paths else "/account"


def nav_groups_for(ctx: AdminContext | None) -> list[tuple[str, list[tuple[str, str]]]]:
    """The same entries under their task's heading; a group with none is left out."""
    visible = _visible(ctx)
    groups = [
        (group, [(label, path) for g, label, path in visible if g == group]) for group in GROUPS
    ]
    return [(group, entries) for group, entries in groups if entries]


def _visible(ctx: AdminContext | None) -> list[tuple[str, str, str]]:
    if ctx is None:
        return []

    def sees(perm: str) -> bool:
        return ctx.can(perm) or ctx.can(perm, ctx.warehouse_id)

    return [
        (group, label, path)
        for group, label, path, perm in NAV
        if perm is None or any(sees(p) for p in ((perm,) if isinstance(perm, str) else perm))
    ]


def form_token() -> str:
    """A one-time token for one rendering of a form: sent twice, it does its work once."""
    return "form-" + secrets.token_urlsafe(18)


class FreshToken:
    """``{{ form_token }}``: a new one-time token each time it is written, so that
    every form of a page (a product's listings, the reference lists) has its own."""

    def __str__(self) -> str:
        return form_token()

    def __html__(self) -> str:
        return form_token()


def render(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    ctx: AdminContext | None = getattr(request.state, "admin", None)
    context.setdefault("errors", {})
    context.setdefault("values", {})
    context.setdefault("csrf", getattr(request.state, "csrf", ""))
    context.setdefault("money_format", getattr(request.state, "money_format", DEFAULT_MONEY_FORMAT))
    context.setdefault("branch_zones", getattr(request.state, "branch_zones", {}))
    # Costs, stock values and margins are shown to a holder of ``costs.read`` only.
    context.setdefault("see_costs", ctx is not None and ctx.shows_costs())
    html = env.get_template(template).render(
        request=request,
        staff=ctx,
        nav=nav_for(ctx),
        nav_groups=nav_groups_for(ctx),
        here=request.url.path,
        form_token=FreshToken(),
        **context,
    )
    return HTMLResponse(html, status_code=status, headers={"Cache-Control": "no-store"})
