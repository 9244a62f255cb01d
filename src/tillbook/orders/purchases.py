"""POST /purchases: stock in as new batches at the unit cost, payable to the
supplier, outward tenders paid at once.

A line may name the tax the supplier charged (``tax_id``, one of the company's
taxes, priced like a sale's line: its rate, inclusive of ``unit_price`` or added to
it, rounded per line). The stock takes the cost net of that tax, the tax is
recoverable (11800 Input Tax Recoverable) and the supplier is owed the gross: the
purchase's ``total``. A line without a tax is exactly as before: net = gross."""

from __future__ import annotations

import uuid
from decimal import Decimal
from typing import Any, cast

from tillbook.audit.service import record
from tillbook.auth.context import AuthContext
from tillbook.currency import documents
from tillbook.errors import ValidationFailed
from tillbook.inventory import service as inventory
from tillbook.inventory.service import Listed
from tillbook.kit.money import ZERO, money_str, price4
from tillbook.kit.shapes import MoneyStr, answer
from tillbook.ledger.service import post
from tillbook.models import Order, OrderItem
from tillbook.orders import numbering
from tillbook.orders import repository as repo
from tillbook.orders.currency import ForeignFigures, currency_fields, order_currency
from tillbook.orders.intake import announce, existing_order, take_in
from tillbook.orders.schemas import PurchaseIn
from tillbook.orders.tenders import payment_status, record_order_tenders
from tillbook.orders.views import PaymentStatus
from tillbook.unit import UnitOfWork


@answer
class PurchaseRecorded(ForeignFigures):
    """What ``POST /purchases`` answers (flat beside ``status``): the purchase
    received, or the earlier one its invoice number names."""

    purchase_id: int
    invoice_number: str
    current_status: str
    order_status: str
    payment_status: PaymentStatus
    total: MoneyStr
    tax_amount: MoneyStr
    due_amount: MoneyStr


def purchase_response(order: Order) -> PurchaseRecorded:
    return {
        "purchase_id": order.id,
        "invoice_number": order.invoice_number,
        "current_status": f"purchase {order.invoice_number} received; "
        f"payment {order.payment_status.replace('_', ' ')}",
        "order_status": order.order_status,
        "payment_status": cast(PaymentStatus, order.payment_status),
        "total": money_str(order.total),
        "tax_amount": money_str(order.tax_amount),
        "due_amount": money_str(order.due_amount),
        **currency_fields(order),
    }


async def create_purchase(uow: UnitOfWork, key: AuthContext, body: PurchaseIn) -> PurchaseRecorded:
    """Unlocked: the supplier, products and prices, the order and its lines, the new
    layers (plain inserts). Closing step: the number, the entries; the stock levels
    go up with the last statement."""
    earlier = await existing_order(
        uow, key.company_id, key.warehouse_id, "purchases", body.invoice_number
    )
    if earlier is not None:
        return purchase_response(earlier)
    intake = await take_in(uow, key, body, party_type="supplier")
    supplier, lines = intake.party, intake.lines
    net = sum((line.net for line in lines), ZERO)
    tax = sum((line.tax_amount for line in lines), ZERO)
    total = net + tax
    paid = sum((t.amount for t in body.all_payments), ZERO)
    if paid > total:
        raise ValidationFailed(
            {"all_payments": [f"payments add up to {paid}, more than the total {total}"]}
        )
    fx = await documents.conversion(
        uow.session, key.company_id, body.currency, body.exchange_rate, body.order_date.date
    )
    # A foreign delivery's stock is valued line by line in the base (each layer at
    # round(net × rate, 2)); the payable is booked at the same sum, so 11700 and the
    # layers agree to the cent.
    line_values = [line.net if fx is None else fx.to_base(line.net) for line in lines]
    stock_value = sum(line_values, ZERO)
    tax_value = tax if fx is None else fx.to_base(tax)
    tender_amounts = [t.amount for t, _mode in intake.tenders]
    values: dict[str, Any] = {
        "company_id": key.company_id,
        "warehouse_id": key.warehouse_id,
        "order_type": "purchases",
        "unique_id": body.unique_id or uuid.uuid4().hex,
        "invoice_number": body.invoice_number,
        "order_date": body.order_date.date,
        "order_datetime": body.order_date.datetime,
        "user_id": supplier.id,
        "staff_user_id": key.user_id,
        "original_order_id": None,
        "subtotal": net,
        "tax_amount": tax,
        "discount": ZERO,
        "shipping": ZERO,
        "total": total,
        "paid_amount": paid,
        "due_amount": total - paid,
        "credited_amount": ZERO,
        "order_status": "received",
        "payment_status": payment_status(total, paid),
        "notes": body.notes or "",
        "journal_entry_id": None,
        **order_currency(fx, total - paid, tender_amounts, total_in_base=stock_value + tax_value),
    }
    order = Order(id=await repo.insert_order(uow, values), **values)
    variance = ZERO
    item_rows: list[dict[str, Any]] = []
    filled: dict[int, tuple[Decimal, Decimal]] = {}  # deficit fills across lines
    for line, item, value in zip(lines, body.product_items, line_values, strict=True):
        receipt = await inventory.receive(
            uow,
            line.product,
            line.base_quantity,
            unit_cost=price4(value / line.base_quantity),
            value=value,
            reason="purchase",
            source_type="purchase",
            source_id=order.id,
            filled=filled,
            field=f"{line.field}.quantity",
            batch_number=item.batch_number,
            expiry_date=item.expiry_date,
        )
        variance += receipt.deficit_variance
        item_rows.append(
            {
                "order_id": order.id,
                "company_id": key.company_id,
                "product_id": line.product.id,
                "unit_id": line.unit_id,
                "quantity": line.quantity,
                "base_quantity": line.base_quantity,
                "unit_price": line.unit_price,
                "discount_rate": ZERO,
                "tax_id": line.tax.id if line.tax else None,
                "tax_rate": line.tax.rate if line.tax else ZERO,
                "tax_amount": line.tax_amount,
                "subtotal": line.net,
                "total": line.gross,
                "cost_amount": value,
                "returned_quantity": ZERO,
            }
        )
    item_ids = await repo.insert_items(uow, item_rows)
    items: list[tuple[OrderItem, Listed]] = [
        (OrderItem(id=item_id, **row), line.product)
        for item_id, row, line in zip(item_ids, item_rows, lines, strict=True)
    ]
    payments, tender_postings = await record_order_tenders(
        uow, key, order, intake.tenders, payment_type="out", date=order.order_date
    )
    invoice_number = body.invoice_number or await numbering.take(
        uow, key.company_id, key.warehouse_id, "purchases"
    )
    order.invoice_number = invoice_number
    common: dict[str, Any] = dict(
        company_id=key.company_id,
        warehouse_id=key.warehouse_id,
        source_type="purchase",
        source_id=order.id,
        field="product_items",
        entry_date=order.order_date,
        date_field="order_date",
        party_id=supplier.id,
        created_by=key.user_id,
    )
    order.journal_entry_id = await post(
        uow,
        rule="purchase",
        figures={"net": net, "tax": tax, "total": total, "paid": paid, "tenders": tender_postings},
        narration=f"Purchase {invoice_number} from {supplier.name}",
        **common,
        fx=fx,
        fixed=None
        if fx is None
        else {
            "net": stock_value,
            "tax": tax_value,
            "total": stock_value + tax_value,
            "paid": sum((fx.to_base(t) for t in tender_amounts), ZERO),
        },
        balance_on="tenders",
    )
    if variance:
        await post(
            uow,
            rule="deficit_settlement",
            figures={"variance": variance},
            narration=f"Stock deficit settled at cost by purchase {invoice_number}",
            **common,
        )
    repo.number_order(uow, order, invoice_number, order.journal_entry_id)
    await announce(uow, key, order, supplier, items, payments, ["purchase.created"])
    answer = purchase_response(order)
    # Audited here, whichever door the delivery came in by (the API, the back office).
    await record(
        uow.session,
        company_id=key.company_id,
        actor=key.actor,
        action="purchase.received",
        entity_type="order",
        entity_id=order.id,
        after={
            "warehouse_id": key.warehouse_id,
            "supplier_id": supplier.id,
            "invoice_number": invoice_number,
            "total": answer["total"],
            "tax_amount": answer["tax_amount"],
            "due_amount": answer["due_amount"],
        },
    )
    return answer
