"""POST /sales: price the lines, take the stock, take the tenders, post the books.

Everything happens in the caller's one transaction: stock rows locked in id order,
FIFO draws, the invoice number, the order and its lines, payments, the journal
entry and the outbox events commit together or not at all.
"""

from __future__ import annotations

import uuid
from decimal import Decimal
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.auth.context import AuthContext
from tillbook.db import insert_returning_ids
from tillbook.deferred import DeferredUpdate, defer
from tillbook.errors import ValidationFailed
from tillbook.events.outbox import emit
from tillbook.inventory.service import check_shortages, draw_many
from tillbook.kit import bounds
from tillbook.kit.bounds import MONEY
from tillbook.kit.money import ZERO, money, money_str, number
from tillbook.ledger.service import post
from tillbook.models import Order, OrderItem, Product, User
from tillbook.models.base import table_of
from tillbook.orders import numbering
from tillbook.orders.intake import announce, existing_order, take_in
from tillbook.orders.schemas import SaleIn
from tillbook.payments.tenders import payment_status, record_order_tenders

TOLERANCE = Decimal("0.01")
_orders = table_of(Order)
_items = table_of(OrderItem)
_NUMBER_ORDER = DeferredUpdate(
    _orders, ["id"], ["invoice_number", "journal_entry_id"], late=["invoice_number"]
)


def sale_response(order: Order) -> dict[str, Any]:
    return {
        "status": "success",
        "order_id": order.id,
        "invoice_number": order.invoice_number,
        "total_amount": number(order.total),
        "unique_id": order.unique_id,
        "payment_status": order.payment_status,
        "paid_amount": money_str(order.paid_amount),
        "due_amount": money_str(order.due_amount),
    }


def check_client_totals(body: SaleIn, subtotal: Decimal, tax: Decimal, total: Decimal) -> None:
    """A receipt must never disagree with the books (DESIGN.md §3)."""
    errors: dict[str, list[str]] = {}
    for name, client, server in (
        ("subtotal", body.subtotal, subtotal),
        ("tax_amount", body.tax_amount, tax),
        ("total", body.total, total),
    ):
        if client is not None and abs(client - server) > TOLERANCE:
            errors[name] = [f"client sent {client}, the server computes {server}"]
    if errors:
        raise ValidationFailed(errors)


async def create_sale(session: AsyncSession, key: AuthContext, body: SaleIn) -> dict[str, Any]:
    earlier = await existing_order(session, key.warehouse_id, "sales", body.invoice_number)
    if earlier is not None:
        return sale_response(earlier)

    intake = await take_in(
        session, key, body, party_type="customer", with_tax=True, attach_products=False
    )
    customer, products, lines = intake.party, intake.products, intake.lines

    subtotal = sum((line.net for line in lines), ZERO)
    tax_amount = sum((line.tax_amount for line in lines), ZERO)
    gross = subtotal + tax_amount + body.shipping
    bounds.check("shipping", gross, MONEY, "the order total with shipping")
    if body.discount > gross:
        raise ValidationFailed(
            {"discount": [f"discount {body.discount} exceeds the order value {gross}"]}
        )
    total = gross - body.discount
    check_client_totals(body, subtotal, tax_amount, total)
    paid = sum((t.amount for t in body.all_payments), ZERO)
    if paid > total:
        raise ValidationFailed(
            {
                "all_payments": [
                    f"tenders add up to {paid}, more than the total {total}; "
                    "record the amount applied, not the cash handed over"
                ]
            }
        )

    needed: dict[int, Decimal] = {}
    field_of: dict[int, str] = {}
    for line in lines:
        needed[line.product.id] = needed.get(line.product.id, ZERO) + line.base_quantity
        field_of.setdefault(line.product.id, f"{line.field}.quantity")
    check_shortages(products, needed, allow_negative=key.allow_negative_stock, field_of=field_of)

    # The invoice counter row stays locked until commit, so every sale of the
    # warehouse queues behind it: the number is taken by the unit's last statement
    # (``numbering.issue_at_commit``), and the order holds a placeholder, unique and
    # never committed, until then.
    #
    # The order, its lines and tenders are written on the tables with statements
    # built once (no unit of work: a sale is the hot path); the ORM objects below are
    # detached values for the response, the detail view and the events.
    values: dict[str, Any] = {
        "company_id": key.company_id,
        "warehouse_id": key.warehouse_id,
        "order_type": "sales",
        "unique_id": body.unique_id or uuid.uuid4().hex,
        "invoice_number": body.invoice_number or f"pending-{uuid.uuid4().hex}",
        "order_date": body.order_date.date,
        "order_datetime": body.order_date.datetime,
        "user_id": customer.id,
        "staff_user_id": key.user_id,
        "original_order_id": None,
        "subtotal": subtotal,
        "tax_amount": tax_amount,
        "discount": body.discount,
        "shipping": body.shipping,
        "total": total,
        "paid_amount": paid,
        "due_amount": total - paid,
        "credited_amount": ZERO,
        "order_status": "delivered",
        "payment_status": payment_status(total, paid),
        "notes": body.notes or "",
        "journal_entry_id": None,
    }
    (order_id,) = await insert_returning_ids(session, _orders, [values])
    order = Order(id=order_id, **values)

    cost = ZERO
    item_rows: list[dict[str, Any]] = []
    shortages: list[tuple[Product, Decimal]] = []
    allocations = await draw_many(
        session,
        [(line.product, line.base_quantity) for line in lines],
        reason="sale",
        source_type="sale",
        source_id=order.id,
        allow_negative=key.allow_negative_stock,
    )
    for line, alloc in zip(lines, allocations, strict=True):
        bounds.check(f"{line.field}.quantity", alloc.cost, MONEY, "the cost of this line")
        cost += alloc.cost
        if alloc.shortfall:
            shortages.append((line.product, alloc.shortfall))
        item_rows.append(
            {
                "order_id": order.id,
                "company_id": key.company_id,
                "product_id": line.product.id,
                "unit_id": line.unit_id,
                "quantity": line.quantity,
                "base_quantity": line.base_quantity,
                "unit_price": line.unit_price,
                "discount_rate": line.discount_rate,
                "tax_id": line.tax.id if line.tax else None,
                "tax_rate": line.tax.rate if line.tax else ZERO,
                "tax_amount": line.tax_amount,
                "subtotal": line.net,
                "total": line.gross,
                "cost_amount": alloc.cost,
                "returned_quantity": ZERO,
            }
        )
    item_ids = await insert_returning_ids(session, _items, item_rows)
    items = [
        (OrderItem(id=item_id, **row), line.product)
        for item_id, row, line in zip(item_ids, item_rows, lines, strict=True)
    ]

    payments, tender_postings = await record_order_tenders(
        session,
        key,
        order,
        intake.tenders,
        payment_type="in",
        date=order.order_date,
    )
    # On PostgreSQL a placeholder until the last statement takes the number: the
    # narration, the events and the response carry it, and get the number in SQL
    # (late columns) or after COMMIT (``Database.write``).
    invoice_number = body.invoice_number or await numbering.issue_at_commit(
        session, key.warehouse_id, "sales"
    )
    order.invoice_number = invoice_number
    order.journal_entry_id = await post(
        session,
        company_id=key.company_id,
        warehouse_id=key.warehouse_id,
        rule="sale",
        figures={
            "due": order.due_amount,
            "tenders": tender_postings,
            "discount": order.discount,
            "cost": money(cost),
            "subtotal": subtotal,
            "tax": tax_amount,
            "shipping": order.shipping,
        },
        narration=f"Sale {invoice_number} to {customer.name}",
        field="product_items",
        source_type="sale",
        source_id=order.id,
        entry_date=order.order_date,
        party_id=customer.id,
        created_by=key.user_id,
    )
    defer(
        session,
        _NUMBER_ORDER,
        [
            {
                "id": order.id,
                "invoice_number": invoice_number,
                "journal_entry_id": order.journal_entry_id,
            }
        ],
    )

    events = ["order.created", "sales.created"]
    if order.payment_status == "paid":
        events.append("order.paid")
    staff = User(id=key.user_id, name=key.user_name)  # the key's user, as the events name it
    await announce(session, key, order, customer, items, payments, events, staff=staff)
    for product, short in shortages:
        await emit(
            session,
            company_id=key.company_id,
            warehouse_id=key.warehouse_id,
            types=["stock.discrepancy"],
            data={
                "product_id": product.id,
                "name": product.name,
                "item_code": product.item_code,
                "quantity_short": number(short),
                "current_stock": number(product.current_stock),
                "order_id": order.id,
                "invoice_number": invoice_number,
            },
        )
    return sale_response(order)
