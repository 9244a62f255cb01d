"""Taking in an order request: the steps sales, purchases and returns share.

Resolve the party, lock the products (in id order), resolve payment modes, price
every line (units, taxes, discounts) — collecting every bad reference into one
422 — and, once the order is written, announce it on the outbox.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.auth.context import AuthContext
from tillbook.events.outbox import emit
from tillbook.inventory import service as inventory
from tillbook.inventory.service import Listed
from tillbook.kit import bounds
from tillbook.kit.bounds import MONEY, QTY
from tillbook.kit.money import ZERO, line_amounts, line_base, money
from tillbook.kit.problems import Problems
from tillbook.kit.refs import ref_to_id
from tillbook.loyalty.programme import Terms
from tillbook.models import Order, OrderItem, Payment, User
from tillbook.orders import lookup, promotions, views
from tillbook.orders import repository as repo
from tillbook.orders.schemas import PurchaseIn, SaleIn, Tender
from tillbook.unit import UnitOfWork


@dataclass
class PricedLine:
    field: str
    product: Listed
    unit_id: int | None
    factor: Decimal
    quantity: Decimal
    base_quantity: Decimal
    unit_price: Decimal
    discount_rate: Decimal
    tax: lookup.TaxRate | None
    net: Decimal
    tax_amount: Decimal
    gross: Decimal
    # What the line's discount rate took off quantity × unit price (on the price as
    # given: tax included when the tax is inclusive).
    discount: Decimal = ZERO
    # The promotion that priced the line, if any (``orders/promotions.py``): what it
    # took off on the price as given, and the revenue that cost net of tax.
    promotion: promotions.Applied | None = None
    promotion_cost: Decimal = ZERO


@dataclass
class Intake:
    party: User
    products: dict[int, Listed]
    lines: list[PricedLine]
    tenders: list[tuple[Tender, lookup.Mode]]
    # A customer's: the company's loyalty terms, read with the customer (unlocked,
    # for the quote; ``loyalty.confirm`` locks them); None without a programme.
    loyalty: Terms | None = None


async def take_in(
    uow: UnitOfWork,
    key: AuthContext,
    body: SaleIn | PurchaseIn,
    *,
    party_type: str,
    layers_on: dt.date | None = None,
) -> Intake:
    """Party, products (read without a lock: stock changes are guarded updates at
    the unit's end), payment modes and priced lines. A sale's line takes tax when it
    names one, and so does a purchase's (the input tax the supplier charged).

    The products go with the party's read, one round trip, and so do their FIFO
    layers as of ``layers_on`` when the caller will plan on them
    (``inventory.read_ahead``)."""
    session = uow.session
    problems = Problems()
    terms = None
    wanted = [i for i in (ref_to_id(item.xid) for item in body.product_items) if i is not None]
    inventory.read_ahead(uow, key.company_id, key.warehouse_id, wanted, layers_on=layers_on)
    if party_type == "customer":
        party, terms = await lookup.customer(uow, key.company_id, body.user_id, "user_id", problems)
    else:
        party = await lookup.party(
            uow, key.company_id, body.user_id, party_type, "user_id", problems
        )
    products = await inventory.products(uow, key.company_id, key.warehouse_id, wanted)
    fields = [f"all_payments.{i}.payment_mode_id" for i in range(len(body.all_payments))]
    modes = await lookup.payment_modes(
        session,
        key.company_id,
        [(f, t.payment_mode_id) for f, t in zip(fields, body.all_payments, strict=True)],
        problems,
        version=key.reference_version,
        gift_cards=party_type == "customer",
    )
    if party_type != "customer":
        for i, t in enumerate(body.all_payments):
            if t.gift_card_code is not None:
                problems.add(f"all_payments.{i}.gift_card_code", "gift cards pay for sales only")
    rules: list[promotions.Rule] = []
    if isinstance(body, SaleIn) and body.apply_promotions:
        rules = await promotions.in_force_for(
            session,
            key.company_id,
            key.warehouse_id,
            key.reference_version,
            body.order_date.date,
            body.order_date.datetime,
        )
    lines = await price_lines(
        session,
        key,
        body.product_items,
        products,
        problems,
        rules=rules,
        list_name="product_items",
        # a sale is dated when it was rung up (DESIGN §6); a purchase of an archived
        # product is refused whenever it is dated
        sold_at=(body.order_date.date, body.order_date.datetime)
        if party_type == "customer"
        else None,
    )
    assert party is not None
    tenders = [(t, modes[f]) for f, t in zip(fields, body.all_payments, strict=True)]
    return Intake(party=party, products=products, lines=lines, tenders=tenders, loyalty=terms)


def rung_up_before_archiving(
    product: Listed, sold_at: tuple[dt.date, dt.datetime | None] | None
) -> bool:
    """A sale of a product archived after it was rung up is taken: an offline till
    sold it while it was still on sale, the goods and the money changed hands, and
    the books must show that sale (refusing it would leave the cash drawer over and
    the stock wrong). Only archiving has a time; a listing deactivated in this
    warehouse refuses every sale. ``sold_at``: the order's date and, when sent, its
    time. Only a date-time before the archiving instant shows the sale came first: a
    plain date cannot, so it is refused like any sale of an archived product."""
    if sold_at is None or product.archived_at is None or not product.listing_active:
        return False
    _day, at = sold_at
    if at is None:
        return False
    archived = product.archived_at
    if archived.tzinfo is None:
        archived = archived.replace(tzinfo=dt.UTC)
    return at < archived


async def announce(
    uow: UnitOfWork,
    key: AuthContext,
    order: Order,
    party: User,
    items: Sequence[tuple[OrderItem, Listed]],
    payments: Sequence[Payment],
    types: list[str],
    *,
    staff: User | None = None,
) -> None:
    """Outbox events carrying the order's detail shape (``staff``: the key's user,
    when the caller has it already)."""
    if staff is None:
        staff = await views.user_of(uow.session, key.company_id, key.user_id)
    data = views.detail(order, party, staff, items, [(p, p.amount) for p in payments], {})
    emit(uow, company_id=key.company_id, warehouse_id=key.warehouse_id, types=types, data=data)


async def existing_order(
    uow: UnitOfWork, company_id: int, warehouse_id: int, order_type: str, invoice_number: str | None
) -> Order | None:
    """The earlier order a client invoice number names (spec: same number, same order)."""
    if invoice_number is None:
        return None
    return await repo.client_numbered(uow, company_id, warehouse_id, order_type, invoice_number)


async def price_lines(
    session: AsyncSession,
    key: AuthContext,
    items: list[Any],
    products: dict[int, Listed],
    problems: Problems,
    *,
    list_name: str,
    sold_at: tuple[dt.date, dt.datetime | None] | None = None,
    rules: Sequence[promotions.Rule] = (),
) -> list[PricedLine]:
    """Resolve products, units and taxes of each line and compute its amounts,
    after what the promotions in force (``rules``) take off them.

    What the lines produce must be values the books hold (``kit/bounds.py``): the
    base quantity (a unit factor multiplies it), each line's net, tax and gross
    (the catalog's tax rate adds to it), and the gross of the lines so far — a
    problem is reported on the quantity of the line that caused it."""
    tax_refs = []
    unit_refs = []
    resolved: list[Listed | None] = []
    for i, item in enumerate(items):
        product = products.get(ref_to_id(item.xid) or 0)
        if product is None:
            problems.add(f"{list_name}.{i}.xid", f"unknown product {item.xid!r}")
        elif not product.available and not rung_up_before_archiving(product, sold_at):
            # Archived, or no longer sold in this warehouse: its history stays, new
            # sales and purchases of it are refused (returns of it are not).
            problems.add(
                f"{list_name}.{i}.xid",
                f"product {product.name!r} ({product.item_code}) is archived "
                "or not active in this warehouse",
            )
        resolved.append(product)
        if item.tax_id is not None:
            tax_refs.append((f"{list_name}.{i}.tax_id", item.tax_id))
        if item.selected_unit_id is not None and product is not None:
            unit_refs.append(
                (
                    f"{list_name}.{i}.selected_unit_id",
                    product.id,
                    product.unit_id,
                    item.selected_unit_id,
                )
            )
    taxes = await lookup.taxes(
        session, key.company_id, tax_refs, problems, version=key.reference_version
    )
    units = await lookup.unit_factors(session, key.company_id, unit_refs, problems)
    problems.raise_if_any()
    paths = (
        await promotions.category_paths(session, key.company_id, key.reference_version)
        if any(r.applies_to == "categories" for r in rules)
        else {}
    )
    applied = (
        promotions.apply(
            rules,
            [
                promotions.Item(
                    i,
                    product.id,
                    paths.get(product.category_id, ()) if product.category_id else (),
                    product.brand_id,
                    item.quantity,
                    line_base(item.quantity, item.unit_price, getattr(item, "discount_rate", ZERO)),
                )
                for i, (item, product) in enumerate(zip(items, resolved, strict=True))
                if product is not None
            ],
        )
        if rules
        else {}
    )
    lines = []
    running = ZERO
    for i, (item, product) in enumerate(zip(items, resolved, strict=True)):
        assert product is not None
        field = f"{list_name}.{i}"
        unit_id, factor = units.get(f"{field}.selected_unit_id", (product.unit_id, Decimal(1)))
        tax = taxes.get(f"{field}.tax_id")
        discount_rate = getattr(item, "discount_rate", ZERO)
        promotion = applied.get(i)
        rate, inclusive = (tax.rate, tax.inclusive) if tax else (ZERO, False)
        net, tax_amount, gross = line_amounts(
            item.quantity,
            item.unit_price,
            discount_rate,
            rate,
            inclusive,
            promotion.off if promotion else ZERO,
        )
        promotion_cost = ZERO
        if promotion is not None:
            # The revenue the promotion gave up: the line's net without it less with it.
            promotion_cost = (
                line_amounts(item.quantity, item.unit_price, discount_rate, rate, inclusive)[0]
                - net
            )
        listed = money(item.quantity * item.unit_price)
        discount = listed - (gross if tax is not None and tax.inclusive else net)
        if promotion is not None:
            discount -= promotion.off
        base_quantity = item.quantity * factor
        running += gross
        problem = (
            bounds.exceeds(base_quantity, QTY, f"{item.quantity} × {factor} base units")
            or bounds.exceeds(gross, MONEY, "the line total")
            or bounds.exceeds(running, MONEY, f"the total of {list_name} up to this line")
        )
        if problem is not None:
            problems.add(f"{field}.quantity", problem)
        elif base_quantity != base_quantity.quantize(QTY.step):
            problems.add(
                f"{field}.quantity",
                f"{item.quantity} × {factor} base units has more than 4 decimal places",
            )
        lines.append(
            PricedLine(
                field,
                product,
                unit_id,
                factor,
                item.quantity,
                base_quantity,
                item.unit_price,
                discount_rate,
                tax,
                net,
                tax_amount,
                gross,
                discount,
                promotion,
                promotion_cost,
            )
        )
    problems.raise_if_any()
    return lines
