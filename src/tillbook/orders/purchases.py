"""POST /purchases: stock in as new batches at the unit cost, payable to the
supplier, outward tenders paid at once."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.auth.context import AuthContext
from tillbook.errors import ValidationFailed
from tillbook.inventory.service import receive
from tillbook.kit.money import ZERO, money_str, price4
from tillbook.ledger.service import post
from tillbook.models import Order, OrderItem, Product
from tillbook.orders import numbering
from tillbook.orders.intake import announce, existing_order, take_in
from tillbook.orders.schemas import PurchaseIn
from tillbook.payments.tenders import payment_status, record_order_tenders


def purchase_response(order: Order) -> dict[str, Any]:
    return {
        "status": "success",
        "purchase_id": order.id,
        "invoice_number": order.invoice_number,
        "current_status": f"purchase {order.invoice_number} received; "
        f"payment {order.payment_status.replace('_', ' ')}",
        "order_status": order.order_status,
        "payment_status": order.payment_status,
        "total": money_str(order.total),
        "due_amount": money_str(order.due_amount),
    }


async def create_purchase(
    session: AsyncSession, key: AuthContext, body: PurchaseIn
) -> dict[str, Any]:
    earlier = await existing_order(session, key.warehouse_id, "purchases", body.invoice_number)
    if earlier is not None:
        return purchase_response(earlier)
    intake = await take_in(session, key, body, party_type="supplier", with_tax=False)
    supplier, lines = intake.party, intake.lines
    total = sum((line.net for line in lines), ZERO)
    paid = sum((t.amount for t in body.all_payments), ZERO)
    if paid > total:
        raise ValidationFailed(
            {"all_payments": [f"payments add up to {paid}, more than the total {total}"]}
        )
    invoice_number = body.invoice_number or await numbering.issue(
        session, key.warehouse_id, "purchases"
    )
    order = Order(
        company_id=key.company_id,
        warehouse_id=key.warehouse_id,
        order_type="purchases",
        unique_id=body.unique_id or uuid.uuid4().hex,
        invoice_number=invoice_number,
        order_date=body.order_date.date,
        order_datetime=body.order_date.datetime,
        user_id=supplier.id,
        staff_user_id=key.user_id,
        subtotal=total,
        tax_amount=ZERO,
        discount=ZERO,
        shipping=ZERO,
        total=total,
        paid_amount=paid,
        due_amount=total - paid,
        order_status="received",
        payment_status=payment_status(total, paid),
        notes=body.notes or "",
    )
    session.add(order)
    await session.flush()
    items: list[tuple[OrderItem, Product]] = []
    variance = ZERO
    for line in lines:
        unit_cost = price4(line.net / line.base_quantity)
        receipt = await receive(
            session,
            line.product,
            line.base_quantity,
            unit_cost=unit_cost,
            value=line.net,
            reason="purchase",
            source_type="purchase",
            source_id=order.id,
            field=f"{line.field}.quantity",
        )
        variance += receipt.deficit_variance
        item = OrderItem(
            order_id=order.id,
            company_id=key.company_id,
            product_id=line.product.id,
            unit_id=line.unit_id,
            quantity=line.quantity,
            base_quantity=line.base_quantity,
            unit_price=line.unit_price,
            discount_rate=ZERO,
            tax_id=None,
            tax_rate=ZERO,
            tax_amount=ZERO,
            subtotal=line.net,
            total=line.net,
            cost_amount=line.net,
            returned_quantity=ZERO,
        )
        session.add(item)
        items.append((item, line.product))
    payments, tender_postings = await record_order_tenders(
        session,
        key,
        order,
        intake.tenders,
        payment_type="out",
        date=order.order_date,
    )
    common: dict[str, Any] = dict(
        company_id=key.company_id,
        warehouse_id=key.warehouse_id,
        source_type="purchase",
        source_id=order.id,
        field="product_items",
        entry_date=order.order_date,
        party_id=supplier.id,
        created_by=key.user_id,
    )
    order.journal_entry_id = await post(
        session,
        rule="purchase",
        figures={"total": total, "paid": paid, "tenders": tender_postings},
        narration=f"Purchase {invoice_number} from {supplier.name}",
        **common,
    )
    if variance:
        await post(
            session,
            rule="deficit_settlement",
            figures={"variance": variance},
            narration=f"Stock deficit settled at cost by purchase {invoice_number}",
            **common,
        )
    await session.flush()
    await announce(session, key, order, supplier, items, payments, ["purchase.created"])
    return purchase_response(order)
