"""POST /sales: price the lines, take the stock, take the tenders, post the books.

Everything happens in the caller's one unit of work (``tillbook.unit``), in its
three parts: priced, checked and planned on unlocked reads, with the order, its
lines and payments inserted; then the invoice number and the journal entry; then
the last statement with the guarded stock changes, movements, events and the
order's number. All of it commits together or not at all.
"""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Annotated, Any, NotRequired, cast

from pydantic import Field
from typing_extensions import TypedDict

from tillbook.auth.context import AuthContext
from tillbook.currency import documents
from tillbook.errors import ValidationFailed, invalid
from tillbook.giftcards import service as giftcards
from tillbook.inventory import service as inventory
from tillbook.kit import bounds, xid
from tillbook.kit.bounds import MONEY
from tillbook.kit.money import ZERO, money_str, number, price_str
from tillbook.kit.problems import Problems
from tillbook.kit.shapes import MoneyStr, PriceStr, answer
from tillbook.ledger.fx import Conversion
from tillbook.ledger.parties import warehouse_balances
from tillbook.ledger.service import post
from tillbook.loyalty import points as loyalty
from tillbook.models import Order, OrderItem, User
from tillbook.models.base import value_of
from tillbook.orders import lookup, numbering, promotions, shifts
from tillbook.orders import repository as repo
from tillbook.orders.currency import ForeignFigures, base_total, currency_fields, order_currency
from tillbook.orders.intake import Intake, announce, existing_order, take_in
from tillbook.orders.schemas import SaleIn
from tillbook.orders.tenders import payment_status, record_order_tenders
from tillbook.orders.views import PaymentStatus
from tillbook.unit import UnitOfWork

TOLERANCE = Decimal("0.01")


@answer
class SaleRecorded(ForeignFigures):
    """What ``POST /sales`` answers (flat beside ``status``, the spec's shape): the
    sale recorded, or the earlier one its invoice number names."""

    order_id: int
    invoice_number: str
    total_amount: float
    unique_id: str
    payment_status: PaymentStatus
    paid_amount: MoneyStr
    due_amount: MoneyStr
    points_earned: NotRequired[
        Annotated[
            int,
            Field(
                default=0,
                description="loyalty points the sale earned its customer (DESIGN §18): floor "
                "of its base amount less what points paid, over the programme's earn_unit",
            ),
        ]
    ]
    points_redeemed: NotRequired[
        Annotated[
            int,
            Field(default=0, description="loyalty points its tenders in the loyalty mode redeemed"),
        ]
    ]


@answer
class PreviewLine(TypedDict):
    product_id: int
    xid: str
    name: str
    quantity: float
    unit_price: PriceStr
    discount_rate: float
    tax_rate: float
    net: MoneyStr
    tax: MoneyStr
    discount: Annotated[MoneyStr, Field(description="what the line's discount rate took off")]
    total: MoneyStr
    promotion_id: Annotated[int | None, Field(description="the promotion that priced the line")]
    promotion: Annotated[str | None, Field(description="its name, as the receipt prints it")]
    promotion_discount: Annotated[
        MoneyStr,
        Field(
            description="what the promotion took off the line, on the price as given (0.00: none)"
        ),
    ]


@answer
class SalePreview(ForeignFigures):
    # What ``POST /sales/preview`` answers: the figures the sale would record (a
    # comment, not a docstring: the document names it by the operation).

    items: list[PreviewLine]
    subtotal: MoneyStr
    tax_amount: MoneyStr
    discount: MoneyStr
    shipping: MoneyStr
    total: MoneyStr
    paid_amount: MoneyStr
    due_amount: MoneyStr
    points_earned: NotRequired[
        Annotated[
            int,
            Field(
                default=0,
                description="loyalty points the sale would earn its customer (DESIGN §18): "
                "floor of its base amount less what points paid, over the programme's "
                "earn_unit",
            ),
        ]
    ]
    points_redeemed: NotRequired[
        Annotated[
            int,
            Field(
                default=0,
                description="loyalty points its tenders in the loyalty mode would redeem",
            ),
        ]
    ]


def sale_response(order: Order, points: loyalty.SalePoints) -> SaleRecorded:
    return {
        "order_id": order.id,
        "invoice_number": order.invoice_number,
        "total_amount": number(order.total),
        "unique_id": order.unique_id,
        "payment_status": cast(PaymentStatus, order.payment_status),
        "paid_amount": money_str(order.paid_amount),
        "due_amount": money_str(order.due_amount),
        **currency_fields(order),
        **points,
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


async def check_credit_limit(
    uow: UnitOfWork, key: AuthContext, customer: User, due: Decimal
) -> None:
    """A sale that leaves ``due`` unpaid may not take what the customer owes in this
    warehouse (the balance a key reports, ``ledger/parties.py``) beyond the
    customer's credit limit; no limit set, no check.

    The balance is read without a lock, as everything before the closing step is:
    two credit sales for the same customer committed at the same moment can each
    pass on the balance before the other. The limit is a shop's guard against a
    slow-paying customer, not a ledger invariant, so it is not worth serialising
    every credit sale of a customer on a row lock."""
    limit = customer.credit_limit
    if due <= 0 or limit is None:
        return
    owed = (
        await warehouse_balances(
            uow.session, key.company_id, key.warehouse_id, {customer.id: "customer"}
        )
    )[customer.id]
    if owed + due > limit:
        raise invalid(
            "user_id",
            f"the customer's credit limit is {limit}: they owe {owed} here, and this sale "
            f"leaves {due} unpaid ({owed + due} in all); take a payment or raise the limit",
        )


def check_offline(key: AuthContext, body: SaleIn) -> None:
    """``offline`` takes a sale below zero stock whatever the branch says: the goods
    left the shop while a register could not ask. Only a register may say so."""
    if body.offline and key.register_id is None:
        raise invalid(
            "offline",
            "only a register's credential may send an offline sale; this key is no register's",
        )


@dataclass
class PricedSale:
    """A sale's figures as the books will hold them: what ``POST /sales`` records and
    ``POST /sales/preview`` answers, from the one computation below."""

    intake: Intake
    subtotal: Decimal
    tax_amount: Decimal
    total: Decimal
    paid: Decimal
    # The sale's currency and rate (DESIGN §16); None: the base currency.
    fx: Conversion | None = None
    # Tenders spending gift cards or store credit, checked (DESIGN §18).
    draws: list[giftcards.Draw] = field(default_factory=list)
    # Loyalty points the sale earns and redeems (DESIGN §18).
    loyalty: loyalty.SaleQuote = field(default_factory=loyalty.SaleQuote)

    def base(self, amount: Decimal) -> Decimal:
        """``amount`` of this sale in the base currency."""
        return amount if self.fx is None else self.fx.to_base(amount)


async def price_sale(
    uow: UnitOfWork, key: AuthContext, body: SaleIn, *, layers_on: dt.date | None = None
) -> PricedSale:
    """Price a sale body: its lines (units, taxes, discounts, rounding per line), its
    order discount and shipping, the client's totals and the tenders checked against
    them. Reads only: the preview runs it and writes nothing. ``layers_on``: the
    day the sale will plan its stock on, to read its FIFO layers with its products
    (``take_in``)."""
    check_offline(key, body)
    intake = await take_in(uow, key, body, party_type="customer", layers_on=layers_on)
    lines = intake.lines
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
    fx = await documents.conversion(
        uow.session, key.company_id, body.currency, body.exchange_rate, body.order_date.date
    )
    return PricedSale(
        intake,
        subtotal,
        tax_amount,
        total,
        paid,
        fx,
        await card_draws(uow, key, intake, fx),
        await points_quote(uow, key, intake, total, fx),
    )


async def card_draws(
    uow: UnitOfWork, key: AuthContext, intake: Intake, fx: Conversion | None
) -> list[giftcards.Draw]:
    """The sale's gift-card and store-credit tenders, each checked against what its
    card holds today (the preview refuses what the sale would)."""
    problems = Problems()
    draws = await giftcards.spends(
        uow.session,
        key.company_id,
        intake.party,
        [
            giftcards.Ask(i, tender.gift_card_code, tender.amount, mode.gift_cards)
            for i, (tender, mode) in enumerate(intake.tenders)
        ],
        today=dt.date.today(),
        foreign=fx is not None,
        problems=problems,
    )
    problems.raise_if_any()
    return draws


class LinePromotion(TypedDict):
    promotion_id: int | None
    promotion: str | None
    promotion_discount: str


def promotion_fields(applied: promotions.Applied | None) -> LinePromotion:
    """A priced line's promotion, as the preview and the order's detail show it."""
    if applied is None:
        return {"promotion_id": None, "promotion": None, "promotion_discount": "0.00"}
    return {
        "promotion_id": applied.promotion_id,
        "promotion": applied.name,
        "promotion_discount": money_str(applied.off),
    }


async def points_quote(
    uow: UnitOfWork, key: AuthContext, intake: Intake, total: Decimal, fx: Conversion | None
) -> loyalty.SaleQuote:
    """The points the sale earns and its tenders in the loyalty mode, checked against
    the customer's points today (the preview refuses what the sale would). The
    walk-in customer's sale with no such tender reads nothing."""
    asks = [(i, t.amount) for i, (t, mode) in enumerate(intake.tenders) if mode.loyalty]
    if intake.party.is_walk_in and not asks:
        return loyalty.SaleQuote()
    problems = Problems()
    quote = await loyalty.quote_at(
        intake.loyalty, uow.session, key.company_id, intake.party, asks, total, fx, problems
    )
    problems.raise_if_any()
    return quote


async def preview_sale(uow: UnitOfWork, key: AuthContext, body: SaleIn) -> SalePreview:
    """``POST /sales/preview``: the figures ``POST /sales`` would record for the same
    body, recording nothing; refused for what would refuse the sale (its shift, the
    customer's credit limit) as well as for its lines."""
    priced = await price_sale(uow, key, body)
    await lookup.cashier(uow, key, body.staff_member)
    await shifts.for_sale(uow, key, body.shift_id)
    await check_credit_limit(uow, key, priced.intake.party, priced.base(priced.total - priced.paid))
    foreign: ForeignFigures = (
        {}
        if priced.fx is None
        else {
            "currency": priced.fx.currency,
            "exchange_rate": str(priced.fx.rate),
            "base_total": money_str(
                base_total(
                    priced.fx,
                    priced.total - priced.paid,
                    [t.amount for t, _m in priced.intake.tenders],
                )
            ),
        }
    )
    return {
        "items": [
            {
                "product_id": line.product.id,
                "xid": xid.encode(line.product.id),
                "name": line.product.name,
                "quantity": number(line.quantity),
                "unit_price": price_str(line.unit_price),
                "discount_rate": number(line.discount_rate),
                "tax_rate": number(line.tax.rate if line.tax else ZERO),
                "net": money_str(line.net),
                "tax": money_str(line.tax_amount),
                "discount": money_str(line.discount),
                "total": money_str(line.gross),
                **promotion_fields(line.promotion),
            }
            for line in priced.intake.lines
        ],
        "subtotal": money_str(priced.subtotal),
        "tax_amount": money_str(priced.tax_amount),
        "discount": money_str(body.discount),
        "shipping": money_str(body.shipping),
        "total": money_str(priced.total),
        "paid_amount": money_str(priced.paid),
        "due_amount": money_str(priced.total - priced.paid),
        **priced.loyalty.answer(),
        **foreign,
    }


async def create_sale(uow: UnitOfWork, key: AuthContext, body: SaleIn) -> SaleRecorded:
    earlier = await existing_order(
        uow, key.company_id, key.warehouse_id, "sales", body.invoice_number
    )
    if earlier is not None:
        return sale_response(earlier, await loyalty.sale_answer(uow.session, earlier))

    # A first run plans on layers read with its products; a run again reads them
    # after taking its number (``numbering.take_before_plan``).
    today = dt.date.today()
    priced = await price_sale(uow, key, body, layers_on=today if uow.attempt == 0 else None)
    intake = priced.intake
    customer, products, lines = intake.party, intake.products, intake.lines
    subtotal, tax_amount, total, paid = (
        priced.subtotal,
        priced.tax_amount,
        priced.total,
        priced.paid,
    )
    staff = await lookup.cashier(uow, key, body.staff_member)
    shift_id = await shifts.for_sale(uow, key, body.shift_id)
    fx = priced.fx
    await check_credit_limit(uow, key, customer, priced.base(total - paid))
    taken = body.invoice_number or await numbering.take_before_plan(
        uow, key.company_id, key.warehouse_id, "sales"
    )
    # An offline sale (a register's, ``check_offline``) goes below zero like a sale
    # in a branch that allows negative stock: a deficit layer and a discrepancy.
    allow_negative = key.allow_negative_stock or body.offline
    allocations = await inventory.plan(
        uow,
        products,
        [(line.product.id, line.base_quantity, f"{line.field}.quantity") for line in lines],
        allow_negative=allow_negative,
        today=today,
    )

    # The order is written now, numbered in the closing step below. On PostgreSQL
    # its insert reserves the ids of its journal entry, lines and payments, which
    # then go with the last statement; on SQLite they are written as they come. The
    # ORM objects are transient values for the response, the detail view and events.
    values: dict[str, Any] = {
        "company_id": key.company_id,
        "warehouse_id": key.warehouse_id,
        "order_type": "sales",
        "unique_id": body.unique_id or uuid.uuid4().hex,
        "invoice_number": body.invoice_number,
        "order_date": body.order_date.date,
        "order_datetime": body.order_date.datetime,
        "user_id": customer.id,
        "staff_user_id": staff.id,
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
        "shift_id": shift_id,
        **order_currency(fx, total - paid, [t.amount for t, _mode in intake.tenders]),
    }
    order_id, reserved = await repo.insert_order_reserving(
        uow, values, items=len(lines), payments=len(intake.tenders)
    )
    order = value_of(Order, id=order_id, **values)
    for line, alloc in zip(lines, allocations, strict=True):
        bounds.check(f"{line.field}.quantity", alloc.cost, MONEY, "the cost of this line")
    item_rows = [
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
            "promotion_id": line.promotion.promotion_id if line.promotion else None,
            "promotion_discount": line.promotion.off if line.promotion else ZERO,
            "promotion_cost": line.promotion_cost,
        }
        for line, alloc in zip(lines, allocations, strict=True)
    ]
    item_ids = await repo.insert_items(uow, item_rows, reserved.item_ids)
    items = [
        (value_of(OrderItem, id=item_id, **row), line.product)
        for item_id, row, line in zip(item_ids, item_rows, lines, strict=True)
    ]
    payments, tender_postings = await record_order_tenders(
        uow,
        key,
        order,
        intake.tenders,
        payment_type="in",
        date=order.order_date,
        ids=reserved.payment_ids,
    )

    # The closing step: the number, the journal entry that names it, and the stock
    # changes, all queued for the last statement with everything else nothing reads
    # back; on PostgreSQL that statement takes the number (``numbering.take_late``),
    # so the counter row is locked from it to COMMIT.
    promoted = sum((line.promotion_cost for line in lines), ZERO)
    invoice_number = taken or await numbering.take_late(
        uow, key.company_id, key.warehouse_id, "sales"
    )
    order.invoice_number = invoice_number
    points = await loyalty.confirm(uow.session, key.company_id, customer, priced.loyalty)
    order.journal_entry_id = await post(
        uow,
        company_id=key.company_id,
        warehouse_id=key.warehouse_id,
        rule="sale",
        figures={
            "due": order.due_amount,
            "tenders": tender_postings,
            "discount": order.discount,
            "cost": sum((alloc.cost for alloc in allocations), ZERO),
            # Promotions are named discounts (DESIGN §18): the revenue before them,
            # and what they gave up on 41300.
            "promotions": promoted,
            "subtotal": subtotal + promoted,
            "tax": tax_amount,
            "shipping": order.shipping,
            "points": points.earned_value,
        },
        narration=f"Sale {invoice_number} to {customer.name}",
        field="product_items",
        source_type="sale",
        source_id=order.id,
        entry_date=order.order_date,
        date_field="order_date",
        party_id=customer.id,
        created_by=key.user_id,
        # A foreign sale: everything but the FIFO cost is in its currency; the
        # rounding of the conversion lands on the revenue line.
        fx=fx,
        base_figures=("cost", "points"),
        balance_on=("subtotal", "shipping", "tax"),
        entry_id=reserved.entry_id,
    )
    repo.number_order(uow, order, invoice_number, order.journal_entry_id)
    await giftcards.take(
        uow,
        priced.draws,
        company_id=key.company_id,
        warehouse_id=key.warehouse_id,
        order_id=order.id,
        entry_id=order.journal_entry_id,
        created_by=key.user_id,
    )
    await loyalty.record_sale(
        uow,
        points,
        loyalty.Where(
            key.company_id, key.warehouse_id, order.id, order.journal_entry_id, key.user_id
        ),
    )
    await inventory.take(
        uow,
        products,
        allocations,
        reason="sale",
        source_type="sale",
        source_id=order.id,
        allow_negative=allow_negative,
    )

    events = ["order.created", "sales.created"]
    if order.payment_status == "paid":
        events.append("order.paid")
    await announce(uow, key, order, customer, items, payments, events, staff=staff)
    for alloc in allocations:
        if alloc.shortfall:
            inventory.announce_shortfall(
                uow,
                products[alloc.product_id],
                alloc.shortfall,
                {"order_id": order.id, "invoice_number": invoice_number},
            )
    return sale_response(order, points.answer())
