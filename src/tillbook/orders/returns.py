"""Sales returns and purchase returns.

A sales return puts stock back as a new batch at the original FIFO cost of the
units when ``invoice_number`` names the original sale (else at purchase_price),
posts contra-revenue 41200 and credits the customer (or the refund tenders). A
credit first settles the original invoice's due balance (``credited_amount``).

A purchase return takes stock out by FIFO; the supplier's liability falls by the
agreed credit value and the difference to cost goes to 51200.
"""

from __future__ import annotations

import uuid
from decimal import Decimal
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.auth.context import AuthContext
from tillbook.errors import ValidationFailed
from tillbook.inventory.service import check_shortages, draw, lock_products, receive
from tillbook.kit.money import ZERO, money, money_str, price4
from tillbook.kit.refs import ref_to_id
from tillbook.ledger.service import post
from tillbook.models import Order, OrderItem, Product, User
from tillbook.orders import lookup, numbering
from tillbook.orders.intake import announce, existing_order
from tillbook.orders.schemas import ReturnIn
from tillbook.payments.tenders import payment_status, record_order_tenders, settle_status

ORIGINAL = {"sales-returns": "sales", "purchase-returns": "purchases"}


def return_response(order: Order) -> dict[str, Any]:
    return {
        "status": "success",
        "return_id": order.id,
        "invoice_number": order.invoice_number,
        "total": money_str(order.total),
        "original_order_id": order.original_order_id,
    }


async def _original(
    session: AsyncSession,
    key: AuthContext,
    kind: str,
    body: ReturnIn,
    party: User,
    problems: lookup.Problems,
) -> Order | None:
    if body.invoice_number is None:
        return None
    original = await existing_order(session, key.warehouse_id, ORIGINAL[kind], body.invoice_number)
    if original is None or original.user_id != party.id:
        problems.add(
            "invoice_number", f"no {ORIGINAL[kind][:-1]} {body.invoice_number!r} of this party here"
        )
        return None
    # Lock the original so two returns against it cannot both pass the quantity check.
    await session.execute(select(Order.id).where(Order.id == original.id).with_for_update())
    return original


async def create_return(
    session: AsyncSession, key: AuthContext, body: ReturnIn, kind: str
) -> dict[str, Any]:
    assert kind in ORIGINAL
    problems = lookup.Problems()
    party_type = "customer" if kind == "sales-returns" else "supplier"
    party = await lookup.party(
        session, key.company_id, body.user_id, party_type, "user_id", problems
    )
    if kind == "purchase-returns" and body.all_payments:
        problems.add("all_payments", "refund tenders apply to sales returns only")
    modes = await lookup.payment_modes(
        session,
        key.company_id,
        [
            (f"all_payments.{i}.payment_mode_id", t.payment_mode_id)
            for i, t in enumerate(body.all_payments)
        ],
        problems,
    )
    ids = [i for i in (ref_to_id(item.product_id) for item in body.items) if i is not None]
    products = await lock_products(session, key.warehouse_id, ids)
    resolved: list[Product] = []
    for i, item in enumerate(body.items):
        product = products.get(ref_to_id(item.product_id) or 0)
        if product is None:
            problems.add(f"items.{i}.product_id", f"unknown product {item.product_id!r}")
        else:
            resolved.append(product)
    problems.raise_if_any()
    assert party is not None
    original = await _original(session, key, kind, body, party, problems)
    problems.raise_if_any()

    unit_costs = await _returnable(session, original, body, resolved) if original else {}
    total = sum((money(item.quantity * item.unit_price) for item in body.items), ZERO)
    refunds = sum((t.amount for t in body.all_payments), ZERO)
    if refunds > total:
        raise ValidationFailed(
            {"all_payments": [f"refunds add up to {refunds}, more than the return {total}"]}
        )
    if kind == "purchase-returns":
        needed: dict[int, Decimal] = {}
        field_of: dict[int, str] = {}
        for i, (item, product) in enumerate(zip(body.items, resolved, strict=True)):
            needed[product.id] = needed.get(product.id, ZERO) + item.quantity
            field_of.setdefault(product.id, f"items.{i}.quantity")
        check_shortages(products, needed, allow_negative=False, field_of=field_of)

    number = await numbering.issue(session, key.warehouse_id, kind)
    order = Order(
        company_id=key.company_id,
        warehouse_id=key.warehouse_id,
        order_type=kind,
        unique_id=body.unique_id or uuid.uuid4().hex,
        invoice_number=number,
        order_date=body.order_date.date,
        order_datetime=body.order_date.datetime,
        user_id=party.id,
        staff_user_id=key.user_id,
        original_order_id=original.id if original else None,
        subtotal=total,
        tax_amount=ZERO,
        discount=ZERO,
        shipping=ZERO,
        total=total,
        paid_amount=refunds,
        due_amount=total - refunds,
        order_status="returned",
        payment_status=payment_status(total, refunds),
        notes=body.notes or "",
    )
    session.add(order)
    await session.flush()

    cost = ZERO
    variance = ZERO
    items: list[tuple[OrderItem, Product]] = []
    for i, (item, product) in enumerate(zip(body.items, resolved, strict=True)):
        line_total = money(item.quantity * item.unit_price)
        if kind == "sales-returns":
            unit_cost = unit_costs.get(product.id, product.purchase_price)
            value = money(item.quantity * unit_cost)
            receipt = await receive(
                session,
                product,
                item.quantity,
                unit_cost=price4(unit_cost),
                value=value,
                reason="sales_return",
                source_type="sales_return",
                source_id=order.id,
                field=f"items.{i}.quantity",
            )
            variance += receipt.deficit_variance
            line_cost = value
        else:
            alloc = await draw(
                session,
                product,
                item.quantity,
                reason="purchase_return",
                source_type="purchase_return",
                source_id=order.id,
                allow_negative=False,
            )
            line_cost = alloc.cost
        cost += line_cost
        row = OrderItem(
            order_id=order.id,
            company_id=key.company_id,
            product_id=product.id,
            unit_id=product.unit_id,
            quantity=item.quantity,
            base_quantity=item.quantity,
            unit_price=item.unit_price,
            discount_rate=ZERO,
            tax_id=None,
            tax_rate=ZERO,
            tax_amount=ZERO,
            subtotal=line_total,
            total=line_total,
            cost_amount=line_cost,
            returned_quantity=ZERO,
        )
        session.add(row)
        items.append((row, product))

    payments, refund_postings = await record_order_tenders(
        session,
        key,
        order,
        [(t, modes[f"all_payments.{i}.payment_mode_id"]) for i, t in enumerate(body.all_payments)],
        payment_type="out",
        date=order.order_date,
    )
    credit = total - refunds
    if original is not None and credit > 0 and original.due_amount > 0:
        applied = min(credit, original.due_amount)
        original.credited_amount += applied
        original.due_amount -= applied
        original.payment_status = settle_status(original)
    common: dict[str, Any] = dict(
        company_id=key.company_id,
        warehouse_id=key.warehouse_id,
        entry_date=order.order_date,
        source_id=order.id,
        field="items",
        party_id=party.id,
        created_by=key.user_id,
    )
    if kind == "sales-returns":
        order.journal_entry_id = await post(
            session,
            rule="sales_return",
            source_type="sales_return",
            figures={
                "total": total,
                "credit_due": credit,
                "tenders": refund_postings,
                "cost": cost,
            },
            narration=f"Sales return {number} from {party.name}",
            **common,
        )
    else:
        order.journal_entry_id = await post(
            session,
            rule="purchase_return",
            source_type="purchase_return",
            figures={"total": total, "cost": cost, "difference": total - cost},
            narration=f"Purchase return {number} to {party.name}",
            **common,
        )
    if variance:
        await post(
            session,
            rule="deficit_settlement",
            source_type="sales_return",
            figures={"variance": variance},
            narration=f"Stock deficit settled at cost by return {number}",
            **common,
        )
    await session.flush()
    await announce(session, key, order, party, items, payments, ["return.created"])
    return return_response(order)


async def _returnable(
    session: AsyncSession, original: Order, body: ReturnIn, products: list[Product]
) -> dict[int, Decimal]:
    """Check quantities against what the original order still has to return, mark
    them returned, and give each product's original cost per base unit."""
    lines = (
        (
            await session.execute(
                select(OrderItem).where(OrderItem.order_id == original.id).order_by(OrderItem.id)
            )
        )
        .scalars()
        .all()
    )
    by_product: dict[int, list[OrderItem]] = {}
    for line in lines:
        by_product.setdefault(line.product_id, []).append(line)
    errors: dict[str, list[str]] = {}
    costs: dict[int, Decimal] = {}
    for i, (item, product) in enumerate(zip(body.items, products, strict=True)):
        candidates = by_product.get(product.id, [])
        left = sum((ln.base_quantity - ln.returned_quantity for ln in candidates), ZERO)
        if not candidates:
            errors[f"items.{i}.product_id"] = [
                f"{product.name!r} is not on {original.invoice_number}"
            ]
            continue
        if item.quantity > left:
            errors[f"items.{i}.quantity"] = [
                f"returning {item.quantity} of {product.name!r} but only {left} of "
                f"{original.invoice_number} remain returnable"
            ]
            continue
        sold = sum((ln.base_quantity for ln in candidates), ZERO)
        sold_cost = sum((ln.cost_amount for ln in candidates), ZERO)
        costs[product.id] = sold_cost / sold if sold else product.purchase_price
        need = item.quantity
        for ln in candidates:
            take = min(need, ln.base_quantity - ln.returned_quantity)
            ln.returned_quantity += take
            need -= take
    if errors:
        raise ValidationFailed(errors)
    return costs
