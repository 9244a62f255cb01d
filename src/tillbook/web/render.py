"""Templates: one Jinja2 environment (autoescaped), the filters pages share, and the
navigation, built from the role table so that it shows only what the role may do."""

from __future__ import annotations

import secrets
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse
from jinja2 import Environment, FileSystemLoader, select_autoescape

from tillbook.auth.admin import AdminContext

HERE = Path(__file__).parent
env = Environment(
    loader=FileSystemLoader(HERE / "templates"),
    autoescape=select_autoescape(["html"]),
    trim_blocks=True,
    lstrip_blocks=True,
)


def money(value: Any) -> str:
    """Money with thousands separators and two places (``1,234.50``)."""
    if value is None or value == "":
        return ""
    try:
        amount = Decimal(str(value))
    except InvalidOperation:
        return str(value)
    return f"{amount:,.2f}"


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

# (label, path, permission a role needs to see the entry); the pages check the same.
NAV: tuple[tuple[str, str, str | None], ...] = (
    ("Dashboard", "/", "books.read"),
    ("Products", "/products", "catalog.read"),
    ("Reference", "/reference", "catalog.read"),
    ("Sales", "/sales", "books.read"),
    ("Purchases", "/purchases", "books.read"),
    ("Returns", "/sales-returns", "books.read"),
    ("Payments", "/payments", "books.read"),
    ("Expenses", "/expenses", "books.read"),
    ("Customers", "/customers", "parties.read"),
    ("Suppliers", "/suppliers", "parties.read"),
    ("Stock", "/stock", "catalog.read"),
    ("Transfers", "/transfers", "books.read"),
    ("Shifts", "/shifts", "books.read"),
    ("Reports", "/reports", "books.read"),
    ("Import", "/import", "catalog.write"),
    ("API keys", "/settings/keys", "keys.manage"),
    ("Staff", "/settings/staff", "staff.manage"),
    ("Webhooks", "/settings/webhooks", "webhooks.manage"),
    ("Branches", "/settings/branches", "settings.write"),
    ("Payment modes", "/settings/payment-modes", "settings.write"),
    ("Expense categories", "/settings/expense-categories", "settings.write"),
)


def nav_for(ctx: AdminContext | None) -> list[tuple[str, str]]:
    if ctx is None:
        return []
    return [
        (label, path)
        for label, path, perm in NAV
        if perm is None or ctx.can(perm) or ctx.can(perm, ctx.warehouse_id)
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
    html = env.get_template(template).render(
        request=request,
        staff=ctx,
        nav=nav_for(ctx),
        here=request.url.path,
        form_token=FreshToken(),
        **context,
    )
    return HTMLResponse(html, status_code=status, headers={"Cache-Control": "no-store"})
