"""Receipts of sales and sales returns: HTML (80 mm roll or A4) and plain text at
42 or 48 columns for ESC/POS printers.

A receipt is read from what the books hold, never recomputed: the order's lines,
their tax as charged, the tenders allocated to it (a return's refunds), the
company and the branch with its receipt header and footer. The QR code carries
the invoice reference (company, branch, number, date and total) so that a scan
finds the invoice; the HTML embeds it as inline SVG (``segno``), the text prints
the reference line (number and date) instead of the raw payload.

``tendered``: the cash the customer handed over, as the till tells it when it
prints (the books keep the amount applied, not the cash handed over): the change
given is what it exceeds the cash tenders by.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal
from importlib import resources
from typing import Literal, get_args

import segno
from jinja2 import Environment, select_autoescape
from markupsafe import Markup
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.auth.context import AuthContext
from tillbook.errors import NotFound, invalid
from tillbook.kit import xid
from tillbook.kit.bounds import MONEY, exceeds, query_value
from tillbook.kit.money import ZERO, money_str, number
from tillbook.loyalty import points as loyalty
from tillbook.models import (
    Company,
    Order,
    OrderItem,
    Payment,
    PaymentAllocation,
    PaymentMode,
    Product,
    Promotion,
    Warehouse,
)
from tillbook.orders import lookup, views

TITLES = {"sales": "Sale receipt", "sales-returns": "Return receipt"}
# What the query accepts (``format``, ``size``, ``width``); the API document's
# enums come from these (``api.docs.fields.CHOICES``).
ReceiptFormat = Literal["html", "text"]
ReceiptSize = Literal["80mm", "a4"]
ReceiptWidth = Literal["42", "48"]
FORMATS: tuple[str, ...] = get_args(ReceiptFormat)
SIZES: tuple[str, ...] = get_args(ReceiptSize)
WIDTHS = tuple(int(w) for w in get_args(ReceiptWidth))


@dataclass
class Receipt:
    title: str
    company: str
    branch: str
    address: str | None
    phone: str | None
    header: str | None
    footer: str | None
    invoice_number: str
    date: str
    customer: str
    cashier: str | None
    original: str | None
    status: str
    lines: list[dict[str, str]] = field(default_factory=list)
    taxes: list[dict[str, str]] = field(default_factory=list)
    tenders: list[dict[str, str]] = field(default_factory=list)
    subtotal: str = "0.00"
    discount: str = "0.00"
    shipping: str = "0.00"
    tax_amount: str = "0.00"
    total: str = "0.00"
    paid: str = "0.00"
    due: str = "0.00"
    tendered: str | None = None
    change: str = "0.00"
    reference: str = ""
    # Loyalty points the document moved (DESIGN §18): (what, how many), none zero.
    points: list[tuple[str, int]] = field(default_factory=list)


_AMOUNT = re.compile(r"[0-9]{1,20}(\.[0-9]{1,2})?", re.ASCII)


def parse_options(
    fmt: str | None, size: str | None, width: str | None, tendered: str | None
) -> tuple[str, str, int, Decimal | None]:
    """The query parameters, each refused by name (DESIGN.md §12)."""
    fmt = (query_value("format", fmt) or "html").lower()
    if fmt not in FORMATS:
        raise invalid("format", "must be html or text")
    size = (query_value("size", size) or "80mm").lower()
    if size not in SIZES:
        raise invalid("size", "must be 80mm or a4")
    raw_width = query_value("width", width) or "42"
    if raw_width not in {str(w) for w in WIDTHS}:
        raise invalid("width", "must be 42 or 48 (characters per line)")
    cash: Decimal | None = None
    raw = query_value("tendered", tendered)
    if raw is not None:
        # plain digits only: Decimal() would also take 1_000, other scripts' digits,
        # exponents and NaN
        if not _AMOUNT.fullmatch(raw):
            raise invalid("tendered", "must be an amount such as 20.00 (at most 2 decimals)")
        cash = Decimal(raw)
        problem = exceeds(cash, MONEY, "the cash tendered")
        if problem:
            raise invalid("tendered", problem)
    return fmt, size, int(raw_width), cash


async def load(
    session: AsyncSession,
    key: AuthContext,
    order_type: str,
    ref: str,
    tendered: Decimal | None,
) -> Receipt:
    id_ = await lookup.order_id(session, key.company_id, key.warehouse_id, [order_type], ref)
    order = None if id_ is None else await views.order_of(session, key.company_id, id_)
    if order is None or order.warehouse_id != key.warehouse_id:
        raise NotFound("sale not found" if order_type == "sales" else "return not found")
    company = await session.get(Company, order.company_id)
    branch = await session.scalar(
        select(Warehouse).where(
            Warehouse.company_id == order.company_id, Warehouse.id == order.warehouse_id
        )
    )
    party = await views.user_of(session, order.company_id, order.user_id)
    staff = await views.user_of(session, order.company_id, order.staff_user_id)
    original = (
        await views.order_of(session, order.company_id, order.original_order_id)
        if order.original_order_id
        else None
    )
    assert company is not None and branch is not None and party is not None
    items = (
        await session.execute(
            select(OrderItem, views.line_product(Product.name), Promotion.name)
            # The promotion that priced a line (DESIGN §18), printed under it.
            .outerjoin(
                Promotion,
                (Promotion.id == OrderItem.promotion_id)
                & (Promotion.company_id == OrderItem.company_id),
            )
            .where(OrderItem.company_id == order.company_id, OrderItem.order_id == order.id)
            .order_by(OrderItem.id)
        )
    ).all()
    if order_type == "sales":
        tenders = (
            await session.execute(
                select(PaymentMode.name, PaymentMode.code, PaymentAllocation.amount)
                .join(
                    Payment,
                    (Payment.id == PaymentAllocation.payment_id)
                    & (Payment.company_id == PaymentAllocation.company_id),
                )
                .join(
                    PaymentMode,
                    (PaymentMode.id == Payment.payment_mode_id)
                    & (PaymentMode.company_id == Payment.company_id),
                )
                .where(
                    PaymentAllocation.company_id == order.company_id,
                    PaymentAllocation.order_id == order.id,
                    Payment.payment_type == "in",
                )
                .order_by(Payment.id)
            )
        ).all()
    else:
        tenders = (
            await session.execute(
                select(PaymentMode.name, PaymentMode.code, Payment.amount)
                .join(
                    PaymentMode,
                    (PaymentMode.id == Payment.payment_mode_id)
                    & (PaymentMode.company_id == Payment.company_id),
                )
                .where(
                    Payment.company_id == order.company_id,
                    Payment.order_id == order.id,
                    Payment.payment_type == "out",
                )
                .order_by(Payment.id)
            )
        ).all()
    by_rate: dict[Decimal, list[Decimal]] = defaultdict(lambda: [ZERO, ZERO])
    for item, _name, _promotion in items:
        if item.tax_rate:
            by_rate[item.tax_rate][0] += item.subtotal
            by_rate[item.tax_rate][1] += item.tax_amount
    cash_paid = sum((amount for _n, code, amount in tenders if code.lower() == "cash"), ZERO)
    change = ZERO
    if tendered is not None:
        if tendered < cash_paid:
            raise invalid("tendered", f"is less than the {cash_paid} paid in cash")
        change = tendered - cash_paid
    when = (
        order.order_datetime.isoformat() if order.order_datetime else order.order_date.isoformat()
    )
    return Receipt(
        title=TITLES[order_type] + (" (VOID)" if order.order_status == "cancelled" else ""),
        company=company.name,
        branch=branch.name,
        address=branch.address,
        phone=branch.phone,
        header=branch.receipt_header,
        footer=branch.receipt_footer,
        invoice_number=order.invoice_number,
        date=when,
        customer=party.name,
        cashier=staff.name if staff else None,
        original=original.invoice_number if original else None,
        status=order.order_status,
        lines=[
            {
                "name": name,
                "quantity": _plain(item.quantity),
                "unit_price": _price(item.unit_price),
                "discount_rate": _plain(item.discount_rate),
                "tax_rate": _plain(item.tax_rate),
                "total": money_str(item.total),
                "promotion": promotion,
                "promotion_discount": money_str(item.promotion_discount),
            }
            for item, name, promotion in items
        ],
        taxes=[
            {"rate": _plain(rate), "net": money_str(v[0]), "tax": money_str(v[1])}
            for rate, v in sorted(by_rate.items())
        ],
        tenders=[{"mode": name, "amount": money_str(amount)} for name, _c, amount in tenders],
        subtotal=money_str(order.subtotal),
        discount=money_str(order.discount),
        shipping=money_str(order.shipping),
        tax_amount=money_str(order.tax_amount),
        total=money_str(order.total),
        paid=money_str(order.paid_amount),
        due=money_str(order.due_amount),
        tendered=money_str(tendered) if tendered is not None else None,
        change=money_str(change),
        points=await _points(session, order),
        reference=(
            f"INV:{order.invoice_number};ID:{xid.encode(order.id)};"
            f"CO:{company.name};BR:{branch.name};DATE:{order.order_date.isoformat()};"
            f"TOTAL:{money_str(order.total)}"
        ),
    )


POINT_LABELS = {
    "points_earned": "Points earned",
    "points_redeemed": "Points redeemed",
    "points_taken_back": "Points taken back",
    "points_refunded": "Points refunded",
}


async def _points(session: AsyncSession, order: Order) -> list[tuple[str, int]]:
    moved = loyalty.detail_fields(order.order_type, await loyalty.order_points(session, order))
    return [(POINT_LABELS[k], n) for k, n in moved.items() if isinstance(n, int) and n]


def _plain(value: Decimal) -> str:
    return format(Decimal(str(number(value))).normalize(), "f")


def _price(value: Decimal) -> str:
    text = format(value.quantize(Decimal("0.0001")), "f")
    return text[:-2] if text.endswith("00") else text


# --- plain text (ESC/POS) -----------------------------------------------------------------


def _fit(left: str, right: str, width: int) -> str:
    """``left`` and ``right`` on one line of ``width`` columns; a long left side wraps
    onto lines of its own above the right side."""
    room = width - len(right) - 1
    if room < 1:
        return f"{left[:width]}\n{right[-width:]:>{width}}"
    if len(left) <= room:
        return left + " " * (width - len(left) - len(right)) + right
    out = []
    while len(left) > room:
        out.append(left[:width])
        left = left[width:]
    out.append(left + " " * (width - len(left) - len(right)) + right)
    return "\n".join(out)


def _centre(text: str, width: int) -> list[str]:
    out: list[str] = []
    for raw in text.splitlines() or [""]:
        line = raw.replace("\t", " ").rstrip()
        while len(line) > width:
            out.append(line[:width])
            line = line[width:]
        out.append(line.center(width).rstrip())
    return out


def text(receipt: Receipt, width: int) -> str:
    rule = "-" * width
    out: list[str] = []
    out += _centre(receipt.company, width)
    out += _centre(receipt.branch, width)
    for extra in (receipt.address, receipt.phone, receipt.header):
        if extra:
            out += _centre(extra, width)
    out += [rule, *_centre(receipt.title, width), rule]
    out.append(_fit("Invoice", receipt.invoice_number, width))
    out.append(_fit("Date", receipt.date, width))
    if receipt.original:
        out.append(_fit("Against", receipt.original, width))
    out.append(_fit("Customer", receipt.customer, width))
    if receipt.cashier:
        out.append(_fit("Cashier", receipt.cashier, width))
    out.append(rule)
    for line in receipt.lines:
        out.append(_fit(line["name"], line["total"], width))
        detail = f"  {line['quantity']} x {line['unit_price']}"
        if line["discount_rate"] != "0":
            detail += f" -{line['discount_rate']}%"
        if line["tax_rate"] != "0":
            detail += f" tax {line['tax_rate']}%"
        out.append(detail[:width])
        if line["promotion"]:
            out.append(_fit(f"  {line['promotion']}", "-" + line["promotion_discount"], width))
    out.append(rule)
    out.append(_fit("Subtotal", receipt.subtotal, width))
    if receipt.discount != "0.00":
        out.append(_fit("Discount", "-" + receipt.discount, width))
    if receipt.shipping != "0.00":
        out.append(_fit("Shipping", receipt.shipping, width))
    out.append(_fit("Tax", receipt.tax_amount, width))
    out.append(_fit("TOTAL", receipt.total, width))
    out.append(rule)
    for tax in receipt.taxes:
        out.append(_fit(f"Tax {tax['rate']}% on {tax['net']}", tax["tax"], width))
    for tender in receipt.tenders:
        out.append(_fit(tender["mode"], tender["amount"], width))
    if receipt.tendered is not None:
        out.append(_fit("Tendered", receipt.tendered, width))
    out.append(_fit("Change", receipt.change, width))
    if receipt.due != "0.00":
        out.append(_fit("Due", receipt.due, width))
    for what, count in receipt.points:
        out.append(_fit(what, str(count), width))
    out.append(rule)
    # The QR code's payload is for a scanner, not a reader: a text receipt names
    # the invoice it points to instead.
    out.append(_fit("Ref", f"{receipt.invoice_number} {receipt.date}", width))
    if receipt.footer:
        out += [rule, *_centre(receipt.footer, width)]
    return "\n".join(out) + "\n"


# --- HTML ---------------------------------------------------------------------------------

_ENV = Environment(autoescape=select_autoescape(default=True), trim_blocks=True, lstrip_blocks=True)
# The page, shipped with the package (``templates/receipt.html``), autoescaped.
_PAGE = _ENV.from_string(
    resources.files("tillbook.orders").joinpath("templates/receipt.html").read_text("utf-8")
)


def _style(size: str) -> str:
    roll = size == "80mm"
    return (
        f"@page {{ size: {'80mm auto' if roll else 'A4'}; margin: {'3mm' if roll else '15mm'}; }}\n"
        f"body {{ font-family: {'monospace' if roll else 'sans-serif'}; "
        f"font-size: {'11px' if roll else '13px'}; width: {'74mm' if roll else 'auto'}; "
        "margin: 0 auto; color: #000; }\n"
        "h1 { font-size: 1.3em; margin: 0; text-align: center; }\n"
        ".c { text-align: center; } .r { text-align: right; } .pre { white-space: pre-line; }\n"
        "table { width: 100%; border-collapse: collapse; } "
        "td, th { padding: 2px 0; vertical-align: top; }\n"
        "th { text-align: left; border-bottom: 1px solid #000; }\n"
        ".total td { font-weight: bold; border-top: 1px solid #000; }\n"
        ".qr { text-align: center; margin-top: 8px; }\n"
        ".ref { font-size: 0.8em; word-break: break-all; }"
    )


# The receipt is one self-contained document (a till prints it, saves it or shows it
# wherever it likes, without fetching anything from us), so its style is inline: one
# fixed text per paper size, allowed by its hash in the service's
# Content-Security-Policy (``api/security.py``), which allows no other inline style.
STYLES = {size: _style(size) for size in ("80mm", "a4")}
STYLE_HASHES = tuple(
    "sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()
    for text in STYLES.values()
)


def html(receipt: Receipt, size: str) -> str:
    qr = segno.make(receipt.reference, error="m").svg_inline(scale=3 if size == "80mm" else 4)
    style = Markup(STYLES["80mm" if size == "80mm" else "a4"])  # our text, never the user's
    return _PAGE.render(r=receipt, size=size, qr=Markup(qr), style=style)


async def render(
    session: AsyncSession,
    key: AuthContext,
    order_type: str,
    ref: str,
    options: tuple[str, str, int, Decimal | None],
) -> tuple[str, str]:
    """(media type, document)."""
    fmt, size, width, tendered = options
    receipt = await load(session, key, order_type, ref, tendered)
    if fmt == "text":
        return "text/plain", text(receipt, width)
    return "text/html", html(receipt, size)
