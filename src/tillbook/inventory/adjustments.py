"""Stock adjustments: counted stock in or out, outside any order.

``add`` receives a new batch at the product's purchase_price and books the
gain (Dr 11700 / Cr 51100); ``subtract`` draws FIFO and books the loss at the
cost of the units removed (Dr 51100 / Cr 11700). Everything happens in the
caller's one unit of work: planned on unlocked reads, the adjustment record and
its journal entry written, the stock change guarded in the unit's last statement
with the outbox events.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any, Literal, cast

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession
from typing_extensions import TypedDict

from tillbook.audit.service import record
from tillbook.auth.context import AuthContext, acting_for
from tillbook.events.outbox import emit
from tillbook.inventory import repository as inventory_repo
from tillbook.inventory import service as inventory
from tillbook.inventory.repository import Listed
from tillbook.inventory.schemas import StockAdjustmentIn
from tillbook.kit import bounds, xid
from tillbook.kit.bounds import MONEY
from tillbook.kit.money import ZERO, line_cost, money_str, number, price4
from tillbook.kit.pagination import Paged, paged, parse_page
from tillbook.kit.problems import Problems
from tillbook.kit.refs import ref_to_id
from tillbook.kit.shapes import (
    DateStr,
    DateTimeStr,
    MoneyStr,
    Named,
    ProductRef,
    QuantityStr,
    answer,
)
from tillbook.ledger.rules import RuleName
from tillbook.ledger.service import post
from tillbook.models import Product, User
from tillbook.models import StockAdjustment as AdjustmentRow
from tillbook.unit import UnitOfWork


def utc_iso(value: dt.datetime) -> str:
    """ISO 8601 in UTC with a ``Z``; SQLite hands back naive UTC timestamps."""
    aware = value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)
    return aware.replace(microsecond=0).isoformat().replace("+00:00", "Z")


def quantity_str(value: Decimal) -> str:
    """A quantity on the wire as a decimal string with the 4 places it is stored with."""
    return format(price4(value), "f")


@answer
class StockAdjustment(TypedDict):
    # An adjustment as a till lists it and as ``stock.adjusted`` announces it.
    id: int
    product_id: int
    quantity: QuantityStr
    adjustment_type: Literal["add", "subtract"]
    notes: str
    batch_number: str | None
    expiry_date: DateStr | None
    cost_amount: MoneyStr
    created_at: DateTimeStr
    product: ProductRef
    creator: Named | None


@answer
class AdjustmentRecorded(TypedDict):
    # ``POST /stock-adjustments``' answer (flat beside ``status``).
    adjustment_id: int
    new_stock_level: float


def list_item(
    adj: AdjustmentRow, product: Product | Listed, creator: User | None
) -> StockAdjustment:
    return {
        "id": adj.id,
        "product_id": adj.product_id,
        "quantity": quantity_str(adj.quantity),
        "adjustment_type": cast(Literal["add", "subtract"], adj.adjustment_type),
        "notes": adj.notes,
        "batch_number": adj.batch_number,
        "expiry_date": None if adj.expiry_date is None else adj.expiry_date.isoformat(),
        "cost_amount": money_str(adj.cost_amount),
        "created_at": utc_iso(adj.created_at),
        "product": {
            "id": product.id,
            "xid": xid.encode(product.id),
            "name": product.name,
            "item_code": product.item_code,
        },
        "creator": None if creator is None else {"id": creator.id, "name": creator.name},
    }


async def create_adjustment(
    uow: UnitOfWork, key: AuthContext, body: StockAdjustmentIn
) -> AdjustmentRecorded:
    session = uow.session
    problems = Problems()
    product_id = ref_to_id(body.product_id)
    products = await inventory.products(
        uow, key.company_id, key.warehouse_id, [product_id] if product_id else []
    )
    product = products.get(product_id or 0)
    if product is None:
        problems.add("product_id", f"unknown product {body.product_id!r}")
    problems.raise_if_any()
    assert product is not None
    allocations = []
    if body.adjustment_type == "subtract":
        allocations = await inventory.plan(
            uow,
            products,
            [(product.id, body.quantity, "quantity")],
            allow_negative=key.allow_negative_stock,
        )
        cost = allocations[0].cost
    else:
        cost = line_cost(body.quantity, product.purchase_price)
    # The adjustment records its cost: a value the books must hold (kit/bounds.py),
    # checked before anything is written.
    bounds.check("quantity", cost, MONEY, f"the cost of {body.quantity} x {product.name!r}")

    now = dt.datetime.now(dt.UTC)
    adj = AdjustmentRow(
        company_id=key.company_id,
        warehouse_id=key.warehouse_id,
        product_id=product.id,
        quantity=body.quantity,
        adjustment_type=body.adjustment_type,
        notes=body.notes or "",
        batch_number=body.batch_number,
        expiry_date=body.expiry_date,
        cost_amount=cost,
        created_by=key.user_id,
        created_at=now,
    )
    session.add(adj)
    await session.flush()

    common: dict[str, Any] = dict(
        company_id=key.company_id,
        warehouse_id=key.warehouse_id,
        source_type="stock_adjustment",
        source_id=adj.id,
        field="quantity",
        entry_date=now.date(),
        created_by=key.user_id,
    )
    what = f"{body.quantity.normalize():f} x {product.name} ({product.item_code})"
    reason = f": {body.notes}" if body.notes else ""
    shortfall = ZERO
    variance = ZERO
    rule: RuleName
    if body.adjustment_type == "add":
        receipt = await inventory.receive(
            uow,
            product,
            body.quantity,
            unit_cost=product.purchase_price,
            value=cost,
            reason="adjustment",
            source_type="stock_adjustment",
            source_id=adj.id,
            field="quantity",
            batch_number=body.batch_number,
            expiry_date=body.expiry_date,
        )
        variance = receipt.deficit_variance
        rule, narration = "stock_add", f"Stock adjustment #{adj.id}: add {what}{reason}"
    else:
        await inventory.take(
            uow,
            products,
            allocations,
            reason="adjustment",
            source_type="stock_adjustment",
            source_id=adj.id,
            allow_negative=key.allow_negative_stock,
        )
        shortfall = allocations[0].shortfall
        rule, narration = "stock_subtract", f"Stock adjustment #{adj.id}: subtract {what}{reason}"
    # The ledger refuses an entry without lines: a zero-cost change moves no money.
    if cost != 0:
        entry_id = await post(uow, rule=rule, figures={"cost": cost}, narration=narration, **common)
        inventory_repo.link_adjustment_entry(uow, adj.company_id, adj.id, entry_id)
    if variance:
        await post(
            uow,
            rule="deficit_settlement",
            figures={"variance": variance},
            narration=f"Stock deficit settled at cost by stock adjustment #{adj.id}",
            **common,
        )

    creator = await session.scalar(
        select(User).where(User.company_id == key.company_id, User.id == key.user_id)
    )
    emit(
        uow,
        company_id=key.company_id,
        warehouse_id=key.warehouse_id,
        types=["stock.adjusted"],
        data=list_item(adj, product, creator),
    )
    if shortfall:
        inventory.announce_shortfall(uow, product, shortfall, {"adjustment_id": adj.id})
    # Audited here, so an adjustment a till makes is in the trail as one from the back
    # office is (docs/audit.md).
    await record(
        session,
        company_id=key.company_id,
        actor=key.actor,
        action="stock.adjusted",
        entity_type="stock_adjustment",
        entity_id=adj.id,
        after={
            "warehouse_id": key.warehouse_id,
            "product_id": adj.product_id,
            "adjustment_type": adj.adjustment_type,
            "quantity": quantity_str(adj.quantity),
            "cost_amount": money_str(adj.cost_amount),
            "notes": adj.notes,
            "batch_number": adj.batch_number,
            "expiry_date": None if adj.expiry_date is None else adj.expiry_date.isoformat(),
        },
    )
    return {"adjustment_id": adj.id, "new_stock_level": number(product.current_stock)}


async def adjust_as_staff(
    uow: UnitOfWork,
    company_id: int,
    warehouse_id: int,
    actor_id: int,
    body: StockAdjustmentIn,
) -> AdjustmentRecorded:
    """A stock adjustment recorded by a staff member in the back office: the same
    rule as a till's (``create_adjustment``, which audits it), acting for the
    warehouse as a key of it would (its ``allow_negative_stock``, the staff member as
    creator). The caller has checked that the staff member may write stock there
    (``stock.write``)."""
    acting = await acting_for(uow.session, company_id, warehouse_id, actor_id)
    return await create_adjustment(uow, acting, body)


async def adjustment_page(
    session: AsyncSession, key: AuthContext, page: str | None, limit: str | None
) -> Paged[StockAdjustment]:
    """The key's warehouse's adjustments, newest first."""
    p = parse_page(page, limit)
    where = (
        AdjustmentRow.company_id == key.company_id,
        AdjustmentRow.warehouse_id == key.warehouse_id,
    )
    total = (
        await session.execute(select(func.count()).select_from(AdjustmentRow).where(*where))
    ).scalar_one()
    rows: list[StockAdjustment] = []
    if p.offset < total:
        result = await session.execute(
            select(AdjustmentRow, Product, User)
            .join(
                Product,
                (Product.id == AdjustmentRow.product_id)
                & (Product.company_id == AdjustmentRow.company_id),
            )
            .outerjoin(
                User,
                (User.id == AdjustmentRow.created_by)
                & (User.company_id == AdjustmentRow.company_id),
            )
            .where(*where)
            .order_by(AdjustmentRow.id.desc())
            .offset(p.offset)
            .limit(p.limit)
        )
        rows = [list_item(a, prod, u) for a, prod, u in result]
    return paged(p, total, rows)
