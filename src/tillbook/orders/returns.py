"""Sales returns and purchase returns.

A sales return gives back what the customer was charged for the returned units,
tax included, and never more (DESIGN.md §5 "Sales returns and tax"):

- Against the original invoice (``invoice_number``): the returned units of a
  product are drawn from that invoice's lines of the product, in line order, up
  to what each line has left (sold less already returned; more is a 422 on
  ``items.N.quantity``). Each part of a line takes that line's unit price,
  discount and tax as charged then: the rate stored on the line and the inclusive
  flag of its tax (taxes are never edited; a new rate is a new tax).
- A line refunds its figures pro rata, *cumulatively*: once R of its n units have
  come back, the line has refunded round(X × R / n) of each of its figures X (its
  net, its tax, what the customer paid for it, its cost).
  A return takes the difference between that after it and before it. So the last
  units back take exactly what is left of the line, and partial returns of a line
  add up to its total to the cent, never more (a 10.00 line of 3 units comes back
  as 3.33, 3.33 and 3.34).
- ``unit_price`` (per base unit, like ``quantity``) above the line's is a 422 on
  ``items.N.unit_price``: a customer gets back no more than they paid. Below it is
  a partial refund: the line's discount and tax rate applied to the lower price,
  never more than the full refund of those units would be.
- The sale's order-level discount (debited to 41300 by the sale) is spread over
  its lines and shipping in proportion to their gross. Each line's share comes
  back pro rata like its other figures and lowers the refund (the return's
  ``discount``, netted into 41200). So all returns of an invoice together refund
  at most what the customer was charged for its goods. The tax comes back in
  full: the sale charged tax on the lines, before the order discount, and 21200
  returns to where it was before the sale once every unit has come back.
- Without an invoice, the product's tax rule (its tax, inclusive or not) applies
  to the given price, and that price may not exceed the product's current sales
  price (``items.N.unit_price``): without the sale on record, the shelf price is
  the most a unit can have cost the customer. (A till key could otherwise give
  500.00 in cash for a 2.49 juice.)
- Refund tenders add up to at most the return's total and, against an invoice, to
  at most what was paid for it less what its earlier returns paid back (Σ refunded
  on a sale ≤ what was paid for it); the rest is a credit that first settles the
  original invoice's due balance (``credited_amount``), then stays on the
  customer's account.
- A voided sale (``order_status`` ``cancelled``) takes no return: the void already
  gave its goods and money back. The void refuses a sale with a return the same
  way (``orders/voids.py``), and both lock the sale's row first, so of a void and a
  return racing for one sale exactly one is recorded.

Stock comes back as a new batch at the original FIFO cost of the units (the
line's cost pro rata), or at purchase_price when the original sale is unknown.
How it is posted: ledger/rules.py, rule ``sales_return``.

A purchase return takes stock out by FIFO; the supplier's liability falls by the
agreed credit value and the difference to cost goes to 51200. Against a purchase
invoice, no more can go back than was received less what already went back, and
the units of a taxed line take their tax back out of 11800 Input Tax Recoverable
(``purchase_part``): the supplier owes back the credit with its tax.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Annotated, Any, NotRequired

from pydantic import Field
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession
from typing_extensions import TypedDict

from tillbook.audit.service import record
from tillbook.auth.context import AuthContext, acting_for
from tillbook.currency import documents, rates
from tillbook.errors import ValidationFailed, invalid
from tillbook.giftcards import service as giftcards
from tillbook.inventory import service as inventory
from tillbook.inventory.service import Listed
from tillbook.kit import bounds
from tillbook.kit.bounds import MONEY
from tillbook.kit.money import ZERO, line_amounts, money, money_str, price4
from tillbook.kit.problems import Problems
from tillbook.kit.refs import ref_to_id
from tillbook.kit.shapes import MoneyStr, answer
from tillbook.ledger.fx import Conversion
from tillbook.ledger.service import post
from tillbook.loyalty import points as loyalty
from tillbook.models import Order, OrderItem, User
from tillbook.orders import lookup, numbering, shifts
from tillbook.orders import repository as repo
from tillbook.orders.currency import conversion_of, order_currency, settle_base
from tillbook.orders.intake import announce
from tillbook.orders.schemas import ReturnIn, ReturnItem, Tender
from tillbook.orders.tenders import payment_status, record_order_tenders, settle_status
from tillbook.unit import UnitOfWork

ORIGINAL = {"sales-returns": "sales", "purchase-returns": "purchases"}

Errors = dict[str, list[str]]


@answer
class ReturnRecorded(TypedDict):
    """What ``POST /sales-returns`` and ``POST /purchase-returns`` answer (flat beside
    ``status``); a sales return adds what it did to its customer's points."""

    return_id: int
    invoice_number: str
    total: MoneyStr
    tax_amount: Annotated[MoneyStr, Field(description="the tax given back (included in the total)")]
    original_order_id: int | None
    points_taken_back: NotRequired[
        Annotated[
            int,
            Field(
                default=0,
                description="loyalty points of the sale taken back, by the share this "
                "return refunds (rounded down); the balance may go below zero",
            ),
        ]
    ]
    points_refunded: NotRequired[
        Annotated[
            int,
            Field(
                default=0,
                description="loyalty points given back by refund tenders in the loyalty mode",
            ),
        ]
    ]


def return_response(order: Order) -> ReturnRecorded:
    return {
        "return_id": order.id,
        "invoice_number": order.invoice_number,
        "total": money_str(order.total),
        "tax_amount": money_str(order.tax_amount),
        "original_order_id": order.original_order_id,
    }


@dataclass
class Part:
    """One line of the return: a request item, or the part of it drawn from one
    line of the original invoice. Quantities are in base units."""

    index: int  # the request item
    product: Listed
    quantity: Decimal
    unit_price: Decimal
    net: Decimal
    tax_amount: Decimal = ZERO
    discount: Decimal = ZERO  # share of the original's order-level discount
    discount_rate: Decimal = ZERO
    tax_id: int | None = None
    tax_rate: Decimal = ZERO
    cost: Decimal | None = None  # original cost; None: at purchase_price (or by FIFO)
    line: OrderItem | None = None  # the original line
    returned_after: Decimal = ZERO  # the original line's returned quantity after this part

    @property
    def gross(self) -> Decimal:
        return self.net + self.tax_amount


# --- pure rules --------------------------------------------------------------------------


def pro_rata(amount: Decimal, done: Decimal, whole: Decimal) -> Decimal:
    """What ``done`` of ``whole`` units carry of ``amount``, to the cent. Taken
    cumulatively (after minus before), parts add up to ``amount`` exactly once
    ``done`` reaches ``whole``, whatever the rounding of each part."""
    if done >= whole:
        return amount
    return money(amount * done / whole)


def discount_shares(
    lines: Sequence[OrderItem], order_discount: Decimal, shipping: Decimal
) -> dict[int, Decimal]:
    """Each line's share of an order-level discount, in proportion to the line's
    gross among the order's gross (lines and shipping), rounded cumulatively so
    that the shares of lines and shipping add up to the discount exactly."""
    gross = sum((line.total for line in lines), ZERO) + shipping
    discount = min(order_discount, gross)
    shares: dict[int, Decimal] = {}
    running = before = ZERO
    for line in lines:
        running += line.total
        after = money(discount * running / gross) if gross else ZERO
        shares[line.id] = after - before
        before = after
    return shares


def line_unit_price(line: OrderItem) -> Decimal:
    """The price a line charged per base unit (a box of 12 at 10.00: 0.8333)."""
    return price4(line.unit_price * line.quantity / line.base_quantity)


def part_of_line(
    index: int,
    product: Listed,
    line: OrderItem,
    returned_before: Decimal,
    quantity: Decimal,
    unit_price: Decimal,
    discount_share: Decimal,
    tax: lookup.TaxRate | None,
) -> Part:
    """``quantity`` more base units of ``line`` coming back at ``unit_price`` (at
    most the line's, checked by the caller).

    At the line's price: its net, its tax, what the customer paid for it (net + tax
    − its share of the order discount) and its cost, each pro rata and cumulative;
    the discount given back is what the net and tax exceed the refund by, so that
    all of them add up exactly once the line is back. At a lower price: the line's
    discount rate and tax rate on that price, the order-discount share scaled down
    with it, each capped by the full refund of those units."""
    after = returned_before + quantity
    whole = line.base_quantity

    def share(amount: Decimal) -> Decimal:
        return pro_rata(amount, after, whole) - pro_rata(amount, returned_before, whole)

    net, tax_amount = share(line.subtotal), share(line.tax_amount)
    if discount_share:
        refund = share(line.subtotal + line.tax_amount - discount_share)
    else:
        refund = net + tax_amount
    if unit_price < line_unit_price(line):
        inclusive = tax.inclusive if tax is not None else False
        low_net, low_tax, low_gross = line_amounts(
            quantity, unit_price, line.discount_rate, line.tax_rate, inclusive
        )
        full_discount = net + tax_amount - refund
        discount = ZERO
        if full_discount > 0:
            discount = min(full_discount, money(full_discount * low_gross / (net + tax_amount)))
        net, tax_amount = min(net, low_net), min(tax_amount, low_tax)
        refund = min(refund, max(net + tax_amount - discount, ZERO))
    return Part(
        index=index,
        product=product,
        quantity=quantity,
        unit_price=unit_price,
        net=net,
        tax_amount=tax_amount,
        discount=net + tax_amount - refund,
        discount_rate=line.discount_rate,
        tax_id=line.tax_id,
        tax_rate=line.tax_rate,
        cost=share(line.cost_amount),
        line=line,
        returned_after=after,
    )


def parts_from_invoice(
    original: Order,
    lines: Sequence[OrderItem],
    items: Sequence[ReturnItem],
    products: Sequence[Listed],
    taxes: dict[int, lookup.TaxRate],
    *,
    priced: bool,
) -> tuple[list[Part], Errors]:
    """The parts of a return against ``original`` and every problem with it at once.

    ``priced`` (sales returns): refunds follow the invoice's lines (price, discount,
    tax, order-discount share; a price above the line's is an error). Otherwise
    (purchase returns) the request's agreed price stands and only quantities are
    checked against the invoice."""
    by_product: dict[int, list[OrderItem]] = {}
    for line in lines:
        by_product.setdefault(line.product_id, []).append(line)
    shares = discount_shares(lines, original.discount, original.shipping) if priced else {}
    returned = {line.id: line.returned_quantity for line in lines}
    parts: list[Part] = []
    errors: Errors = {}
    invoice = original.invoice_number
    for i, (item, product) in enumerate(zip(items, products, strict=True)):
        candidates = by_product.get(product.id, [])
        if not candidates:
            errors[f"items.{i}.product_id"] = [f"{product.name!r} is not on {invoice}"]
            continue
        left = sum((ln.base_quantity - returned[ln.id] for ln in candidates), ZERO)
        if item.quantity > left:
            errors[f"items.{i}.quantity"] = [
                f"returning {item.quantity} of {product.name!r} but only {left} of "
                f"{invoice} remain returnable"
            ]
            continue
        need = item.quantity
        for line in candidates:
            take = min(need, line.base_quantity - returned[line.id])
            if take <= 0:
                continue
            if priced:
                paid = line_unit_price(line)
                if item.unit_price > paid:
                    errors[f"items.{i}.unit_price"] = [
                        f"refund price {item.unit_price} is above the {paid} per unit "
                        f"{product.name!r} was sold at on {invoice}"
                    ]
                    break
                tax = taxes.get(line.tax_id) if line.tax_id is not None else None
                part = part_of_line(
                    i, product, line, returned[line.id], take, item.unit_price, shares[line.id], tax
                )
            else:
                tax = taxes.get(line.tax_id) if line.tax_id is not None else None
                part = purchase_part(
                    i, product, line, returned[line.id], take, item.unit_price, tax
                )
            returned[line.id] += take
            parts.append(part)
            need -= take
    return parts, errors


def purchase_part(
    index: int,
    product: Listed,
    line: OrderItem,
    returned_before: Decimal,
    quantity: Decimal,
    unit_price: Decimal,
    tax: lookup.TaxRate | None,
) -> Part:
    """``quantity`` more base units of purchase ``line`` going back to the supplier at
    the agreed ``unit_price`` (per base unit, given as the purchase gave its price:
    tax included when the line's tax is inclusive).

    An untaxed line: the credit is quantity × price, as it always was. A taxed line
    gives back the tax those units carried: at the line's price or above, the line's
    tax pro rata and cumulatively (so once every unit is back, 11800 holds none of
    the line's tax, to the cent); below it, the line's rate on the lower price, never
    more than that share. The supplier credits the gross (net + tax)."""
    after = returned_before + quantity
    if line.tax_amount == 0:
        return Part(
            index,
            product,
            quantity,
            unit_price,
            money(quantity * unit_price),
            line=line,
            returned_after=after,
        )
    whole = line.base_quantity
    share = pro_rata(line.tax_amount, after, whole) - pro_rata(
        line.tax_amount, returned_before, whole
    )
    inclusive = tax.inclusive if tax is not None else False
    net, tax_amount, gross = line_amounts(quantity, unit_price, ZERO, line.tax_rate, inclusive)
    if unit_price >= line_unit_price(line) or tax_amount > share:
        tax_amount = share
        net = gross - share if inclusive else net
    return Part(
        index=index,
        product=product,
        quantity=quantity,
        unit_price=unit_price,
        net=net,
        tax_amount=tax_amount,
        tax_id=line.tax_id,
        tax_rate=line.tax_rate,
        line=line,
        returned_after=after,
    )


def parts_at_product_tax(
    items: Sequence[ReturnItem],
    products: Sequence[Listed],
    taxes: dict[int, lookup.TaxRate],
) -> tuple[list[Part], Errors]:
    """A sales return without its sale on record: the product's tax rule on the
    given price, which may not exceed the product's sales price."""
    parts: list[Part] = []
    errors: Errors = {}
    for i, (item, product) in enumerate(zip(items, products, strict=True)):
        if item.unit_price > product.sales_price:
            errors[f"items.{i}.unit_price"] = [
                f"refund price {item.unit_price} is above the sales price "
                f"{product.sales_price} of {product.name!r}; name the original sale in "
                "invoice_number to refund the price it charged"
            ]
            continue
        tax = taxes.get(product.tax_id) if product.tax_id is not None else None
        net, tax_amount, _gross = line_amounts(
            item.quantity,
            item.unit_price,
            ZERO,
            tax.rate if tax else ZERO,
            tax.inclusive if tax else False,
        )
        parts.append(
            Part(
                index=i,
                product=product,
                quantity=item.quantity,
                unit_price=item.unit_price,
                net=net,
                tax_amount=tax_amount,
                tax_id=tax.id if tax else None,
                tax_rate=tax.rate if tax else ZERO,
            )
        )
    return parts, errors


def parts_at_agreed_price(items: Sequence[ReturnItem], products: Sequence[Listed]) -> list[Part]:
    """A purchase return without its invoice: the agreed credit price, no tax."""
    return [
        Part(i, product, item.quantity, item.unit_price, money(item.quantity * item.unit_price))
        for i, (item, product) in enumerate(zip(items, products, strict=True))
    ]


# --- the operation -----------------------------------------------------------------------


async def _original(
    uow: UnitOfWork,
    key: AuthContext,
    kind: str,
    body: ReturnIn,
    party: User,
    problems: Problems,
) -> Order | None:
    if body.invoice_number is None:
        return None
    # Named by its invoice number, or by id or xid; locked, so that two returns
    # against it cannot both pass the quantity check.
    id_ = await lookup.order_id(
        uow.session,
        key.company_id,
        key.warehouse_id,
        [ORIGINAL[kind]],
        body.invoice_number,
        prefer="invoice_number",
    )
    original = None
    if id_ is not None:
        original = (
            await uow.session.execute(
                select(Order)
                .where(Order.company_id == key.company_id, Order.id == id_)
                .with_for_update()
            )
        ).scalar_one()
    if original is None or original.user_id != party.id:
        problems.add(
            "invoice_number", f"no {ORIGINAL[kind][:-1]} {body.invoice_number!r} of this party here"
        )
        return None
    if original.order_status == "cancelled":
        # A void already put the goods back on the shelf and gave every tender back:
        # a return against it would give both a second time. The row is locked, so a
        # void racing this return has either committed (seen here) or waits for it
        # (and then finds the return and refuses itself).
        problems.add(
            "invoice_number",
            f"{ORIGINAL[kind][:-1]} {original.invoice_number} was voided: its goods and "
            "money were already given back, nothing is left to return",
        )
        return None
    return original


async def _refundable(session: AsyncSession, original: Order) -> Decimal:
    """What may still be paid back in tenders against ``original``: what was paid for
    it, less what its earlier returns already paid back (the row is locked, so those
    are all of them). A refund beyond it would hand over money the customer never
    paid; the rest of a return's value is credited to what they owe instead."""
    earlier = await session.scalar(
        select(func.coalesce(func.sum(Order.paid_amount), 0)).where(
            Order.original_order_id == original.id, Order.company_id == original.company_id
        )
    )
    return original.paid_amount - Decimal(earlier or 0)


async def _taxes(
    session: AsyncSession, company_id: int, tax_ids: set[int | None]
) -> dict[int, lookup.TaxRate]:
    """The company's taxes by id, archived ones too (a refund follows the sale's tax;
    the rate itself comes from the sale's line)."""
    refs: list[tuple[str, lookup.RefValue]] = [(str(t), t) for t in tax_ids if t is not None]
    found = await lookup.taxes(session, company_id, refs, Problems(), archived_ok=True)
    return {tax.id: tax for tax in found.values()}


async def _lines_of(session: AsyncSession, original: Order) -> list[OrderItem]:
    return list(
        (
            await session.execute(
                select(OrderItem)
                .where(
                    OrderItem.company_id == original.company_id,
                    OrderItem.order_id == original.id,
                )
                .order_by(OrderItem.id)
            )
        )
        .scalars()
        .all()
    )


async def _plan(
    session: AsyncSession,
    key: AuthContext,
    kind: str,
    body: ReturnIn,
    products: list[Listed],
    original: Order | None,
) -> list[Part]:
    """Every part of the return, or one 422 naming every bad field."""
    if original is not None:
        lines = await _lines_of(session, original)
        sales = kind == "sales-returns"
        taxes = await _taxes(session, key.company_id, {ln.tax_id for ln in lines})
        parts, errors = parts_from_invoice(
            original, lines, body.items, products, taxes, priced=sales
        )
    elif kind == "sales-returns":
        taxes = await _taxes(session, key.company_id, {p.tax_id for p in products})
        parts, errors = parts_at_product_tax(body.items, products, taxes)
    else:
        parts, errors = parts_at_agreed_price(body.items, products), {}
    if errors:
        raise ValidationFailed(errors)
    return parts


def _check_bounds(parts: Sequence[Part]) -> None:
    """Each line with its tax, and the return's total, must be amounts the books hold
    (``kit/bounds.py``): the product's tax can take a line past what the request's
    quantity × unit price was checked for."""
    running = ZERO
    for part in parts:
        running += part.gross
        field = f"items.{part.index}.quantity"
        bounds.check(field, part.gross, MONEY, "the line total with its tax")
        bounds.check(field, running, MONEY, "the return's total up to this line")


async def _card_refunds(
    uow: UnitOfWork,
    key: AuthContext,
    party: User,
    body: ReturnIn,
    modes: dict[str, lookup.Mode],
    fx: Conversion | None,
) -> list[giftcards.Draw]:
    """Refund tenders in the gift-card mode: onto a card (``gift_card_code``) or the
    customer's store credit, checked before anything is written (DESIGN §18)."""
    problems = Problems()
    draws = await giftcards.refunds(
        uow.session,
        key.company_id,
        party,
        [
            giftcards.Ask(
                i,
                t.gift_card_code,
                t.amount,
                modes[f"all_payments.{i}.payment_mode_id"].gift_cards,
            )
            for i, t in enumerate(body.all_payments)
        ],
        today=dt.date.today(),
        foreign=fx is not None,
        problems=problems,
    )
    problems.raise_if_any()
    return draws


async def _points(
    uow: UnitOfWork,
    key: AuthContext,
    party: User,
    body: ReturnIn,
    modes: dict[str, lookup.Mode],
    fx: Conversion | None,
    original: Order | None,
    total: Decimal,
) -> loyalty.ReturnQuote:
    """Refund tenders in the loyalty mode give points back; the points the sale
    earned come back pro rata by what this return refunds (DESIGN §18)."""
    problems = Problems()
    quote = await loyalty.quote_return(
        uow.session,
        key.company_id,
        party,
        [
            (i, t.amount)
            for i, t in enumerate(body.all_payments)
            if modes[f"all_payments.{i}.payment_mode_id"].loyalty
        ],
        original=original,
        total=total,
        foreign=fx is not None,
        problems=problems,
    )
    problems.raise_if_any()
    return quote


async def create_return(
    uow: UnitOfWork,
    key: AuthContext,
    body: ReturnIn,
    kind: str,
    *,
    refund_mode: lookup.RefValue | None = None,
) -> ReturnRecorded:
    """Checked and planned on unlocked reads (the original invoice excepted: it is
    locked, as its figures decide what may come back); the number and the entries
    in the closing step; stock changes with the unit's last statement.

    ``refund_mode`` (a sales return without ``all_payments``): the whole return is
    refunded by that payment mode, whatever its total comes to (the back office's
    return form chooses where the money goes before the total is known); the
    error for an unknown or archived mode names ``refund_mode``."""
    assert kind in ORIGINAL
    session = uow.session
    sales = kind == "sales-returns"
    problems = Problems()
    party_type = "customer" if sales else "supplier"
    party = await lookup.party(uow, key.company_id, body.user_id, party_type, "user_id", problems)
    staff = await lookup.cashier(uow, key, body.staff_member)
    if not sales and body.all_payments:
        problems.add("all_payments", "refund tenders apply to sales returns only")
    if refund_mode is not None and (body.all_payments or not sales):
        problems.add("refund_mode", "refunds in full a sales return without other tenders")
    modes = await lookup.payment_modes(
        session,
        key.company_id,
        [
            (f"all_payments.{i}.payment_mode_id", t.payment_mode_id)
            for i, t in enumerate(body.all_payments)
        ]
        + ([("refund_mode", refund_mode)] if refund_mode is not None else []),
        problems,
        version=key.reference_version,
        gift_cards=sales,
    )
    ids = [i for i in (ref_to_id(item.product_id) for item in body.items) if i is not None]
    products = await inventory.products(uow, key.company_id, key.warehouse_id, ids)
    resolved: list[Listed] = []
    for i, item in enumerate(body.items):
        product = products.get(ref_to_id(item.product_id) or 0)
        if product is None:
            problems.add(f"items.{i}.product_id", f"unknown product {item.product_id!r}")
        else:
            resolved.append(product)
    problems.raise_if_any()
    assert party is not None
    original = await _original(uow, key, kind, body, party, problems)
    problems.raise_if_any()
    fx = await _conversion(uow, key, body, original)

    parts = await _plan(session, key, kind, body, resolved, original)
    _check_bounds(parts)
    subtotal = sum((p.net for p in parts), ZERO)
    tax_amount = sum((p.tax_amount for p in parts), ZERO)
    discount = sum((p.discount for p in parts), ZERO)
    total = subtotal + tax_amount - discount
    if refund_mode is not None and total > 0:
        body = body.model_copy(
            update={"all_payments": [Tender(amount=total, payment_mode_id=str(refund_mode))]}
        )
        modes["all_payments.0.payment_mode_id"] = modes["refund_mode"]
    refunds = sum((t.amount for t in body.all_payments), ZERO)
    if refunds > total:
        raise ValidationFailed(
            {"all_payments": [f"refunds add up to {refunds}, more than the return's {total}"]}
        )
    if sales and original is not None and refunds > 0:
        refundable = await _refundable(session, original)
        if refunds > refundable:
            raise ValidationFailed(
                {
                    "all_payments": [
                        f"refunds add up to {refunds}, more than the {money_str(refundable)} "
                        f"paid for {original.invoice_number} and not yet refunded"
                    ]
                }
            )
    card_refunds = await _card_refunds(uow, key, party, body, modes, fx)
    points = (
        await _points(uow, key, party, body, modes, fx, original, total)
        if sales
        else loyalty.ReturnQuote()
    )
    allocations = []
    taken: str | None = None
    if not sales:  # a purchase return takes stock out by FIFO
        taken = await numbering.take_before_plan(uow, key.company_id, key.warehouse_id, kind)
        allocations = await inventory.plan(
            uow,
            products,
            [(p.product.id, p.quantity, f"items.{p.index}.quantity") for p in parts],
            allow_negative=False,
        )

    # Everything is checked: from here on the return is written, numbered in the
    # closing step below.
    values: dict[str, Any] = {
        "company_id": key.company_id,
        "warehouse_id": key.warehouse_id,
        "order_type": kind,
        "unique_id": body.unique_id or uuid.uuid4().hex,
        "invoice_number": None,
        "order_date": body.order_date.date,
        "order_datetime": body.order_date.datetime,
        "user_id": party.id,
        "staff_user_id": staff.id,
        "original_order_id": original.id if original else None,
        "subtotal": subtotal,
        "tax_amount": tax_amount,
        "discount": discount,
        "shipping": ZERO,
        "total": total,
        "paid_amount": refunds,
        "due_amount": total - refunds,
        "credited_amount": ZERO,
        "order_status": "returned",
        "payment_status": payment_status(total, refunds),
        "notes": body.notes or "",
        "journal_entry_id": None,
        "shift_id": await shifts.current(uow, key) if sales else None,
        **order_currency(fx, total - refunds, [t.amount for t in body.all_payments]),
    }
    order = Order(id=await repo.insert_order(uow, values), **values)

    cost = ZERO
    variance = ZERO
    item_rows: list[dict[str, Any]] = []
    filled: dict[int, tuple[Decimal, Decimal]] = {}  # deficit fills across lines
    for n, part in enumerate(parts):
        product = part.product
        if sales:
            value = (
                part.cost
                if part.cost is not None
                else money(part.quantity * product.purchase_price)
            )
            receipt = await inventory.receive(
                uow,
                product,
                part.quantity,
                unit_cost=price4(value / part.quantity),
                value=value,
                reason="sales_return",
                source_type="sales_return",
                source_id=order.id,
                filled=filled,
                field=f"items.{part.index}.quantity",
            )
            variance += receipt.deficit_variance
            line_cost = value
        else:
            line_cost = allocations[n].cost
        cost += line_cost
        if part.line is not None:
            part.line.returned_quantity = part.returned_after
        item_rows.append(
            {
                "order_id": order.id,
                "company_id": key.company_id,
                "product_id": product.id,
                "unit_id": product.unit_id,
                "quantity": part.quantity,
                "base_quantity": part.quantity,
                "unit_price": part.unit_price,
                "discount_rate": part.discount_rate,
                "tax_id": part.tax_id,
                "tax_rate": part.tax_rate,
                "tax_amount": part.tax_amount,
                "subtotal": part.net,
                "total": part.gross,
                "cost_amount": line_cost,
                "returned_quantity": ZERO,
            }
        )
    item_ids = await repo.insert_items(uow, item_rows)
    items: list[tuple[OrderItem, Listed]] = [
        (OrderItem(id=item_id, **row), part.product)
        for item_id, row, part in zip(item_ids, item_rows, parts, strict=True)
    ]
    if allocations:
        await inventory.take(
            uow,
            products,
            allocations,
            reason="purchase_return",
            source_type="purchase_return",
            source_id=order.id,
            allow_negative=False,
        )

    payments, refund_postings = await record_order_tenders(
        uow,
        key,
        order,
        [(t, modes[f"all_payments.{i}.payment_mode_id"]) for i, t in enumerate(body.all_payments)],
        payment_type="out",
        date=order.order_date,
    )
    credit = total - refunds
    # What the credit takes off the party's account in the base: against the
    # invoice, its share of what the invoice was booked at; the rest at its rate.
    credit_base = ZERO if fx is None else fx.to_base(credit)
    if original is not None and credit > 0 and original.due_amount > 0:
        applied = min(credit, original.due_amount)
        if fx is not None:
            credit_base = settle_base(original, applied) + fx.to_base(credit - applied)
        original.credited_amount += applied
        original.due_amount -= applied
        original.payment_status = settle_status(original)
    # The original's changes go out with a flush now, before the closing step.
    await session.flush()

    number = taken or await numbering.take(uow, key.company_id, key.warehouse_id, kind)
    order.invoice_number = number
    common: dict[str, Any] = dict(
        company_id=key.company_id,
        warehouse_id=key.warehouse_id,
        entry_date=order.order_date,
        date_field="order_date",
        source_id=order.id,
        field="items",
        party_id=party.id,
        created_by=key.user_id,
    )
    if sales:
        order.journal_entry_id = await post(
            uow,
            rule="sales_return",
            source_type="sales_return",
            figures={
                "value": subtotal - discount,
                "tax": tax_amount,
                "credit_due": credit,
                "tenders": refund_postings,
                "cost": cost,
                "points": points.back_value,
            },
            narration=f"Sales return {number} from {party.name}",
            **common,
            fx=fx,
            base_figures=("cost", "points"),
            fixed=None if fx is None else {"credit_due": credit_base},
            balance_on=("value", "tax"),
        )
        await giftcards.give(
            uow,
            card_refunds,
            company_id=key.company_id,
            warehouse_id=key.warehouse_id,
            order_id=order.id,
            entry_id=order.journal_entry_id,
            created_by=key.user_id,
        )
        await loyalty.record_return(
            uow,
            points,
            loyalty.Where(
                key.company_id, key.warehouse_id, order.id, order.journal_entry_id, key.user_id
            ),
        )
    else:
        # 51200 takes the difference in the base: the payable given up (at the
        # purchase's rate) less the FIFO cost of the units that left.
        total_base = total if fx is None else credit_base
        tax_base = tax_amount if fx is None else fx.to_base(tax_amount)
        order.journal_entry_id = await post(
            uow,
            rule="purchase_return",
            source_type="purchase_return",
            figures={
                "total": total,
                "cost": cost,
                "tax": tax_amount,
                "difference": total_base - tax_base - cost,
            },
            narration=f"Purchase return {number} to {party.name}",
            **common,
            fx=fx,
            base_figures=("cost", "difference"),
            fixed=None if fx is None else {"total": total_base},
            balance_on=("difference",),
        )
    if variance:
        await post(
            uow,
            rule="deficit_settlement",
            source_type="sales_return",
            figures={"variance": variance},
            narration=f"Stock deficit settled at cost by return {number}",
            **common,
        )
    repo.number_order(uow, order, number, order.journal_entry_id)
    await announce(uow, key, order, party, items, payments, ["return.created"], staff=staff)
    answered = return_response(order)
    if sales:
        answered = {**answered, **points.answer()}
    # Audited here, so a return through the public API is in the trail as one from
    # the back office is (docs/audit.md).
    await record(
        uow.session,
        company_id=key.company_id,
        actor=key.actor,
        action="sale.returned" if sales else "purchase.returned",
        entity_type="order",
        entity_id=answered["return_id"],
        after={
            "warehouse_id": key.warehouse_id,
            "original_order_id": answered["original_order_id"],
            "total": answered["total"],
            "refunded_by": None if refund_mode is None else str(refund_mode),
        },
    )
    return answered


async def _conversion(
    uow: UnitOfWork, key: AuthContext, body: ReturnIn, original: Order | None
) -> Conversion | None:
    """A return against an invoice is in the invoice's currency, at its rate (what
    the customer paid, or the shop owes, is given back at the value it was booked
    at); without one, in the currency and rate the body names."""
    if original is None:
        return await documents.conversion(
            uow.session, key.company_id, body.currency, body.exchange_rate, body.order_date.date
        )
    base = (await rates.company(uow.session, key.company_id)).base_currency
    own = original.currency or base
    if body.currency is not None and rates.check_code("currency", body.currency) != own:
        raise invalid("currency", f"invoice {original.invoice_number} is in {own}")
    fx = conversion_of(original)
    if body.exchange_rate is not None and (fx is None or body.exchange_rate != fx.rate):
        raise invalid(
            "exchange_rate",
            f"a return against {original.invoice_number} uses its rate "
            f"({fx.rate if fx else 1}): leave exchange_rate out",
        )
    return fx


async def return_as_staff(
    uow: UnitOfWork,
    company_id: int,
    warehouse_id: int,
    actor_id: int,
    body: ReturnIn,
    *,
    refund_mode: lookup.RefValue | None = None,
) -> ReturnRecorded:
    """A sales return taken by a staff member in the back office: ``create_return``
    (which audits it) acting for the sale's branch as a key of it would. The caller
    has checked ``sales.return`` for that branch."""
    key = await acting_for(uow.session, company_id, warehouse_id, actor_id)
    return await create_return(uow, key, body, "sales-returns", refund_mode=refund_mode)
