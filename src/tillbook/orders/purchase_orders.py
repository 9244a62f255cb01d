"""Purchase orders: what a branch asks a supplier for, and the deliveries against it.

The life of an order::

    create ──> draft ── edit (the whole order) ──> draft
    draft ── order (sent to the supplier) ──> ordered
    ordered ── receive (some lines, some units) ──> partially_received ── receive ──> received
    draft | ordered | partially_received ── close ──> closed (cancelled: nothing had come)

**The books move only on receipt** (DESIGN.md §5). Creating, editing, ordering and
closing an order post nothing and move no stock. Each receipt is an ordinary
purchase made by ``orders.purchases.create_purchase`` — the same FIFO batches (with
the line's batch number and expiry, at the cost net of the line's tax, if it names
one), the same Dr 11700 (+ Dr 11800 the tax) / Cr 21100 and tender postings, the
same ``purchase.created`` event as ``POST /purchases`` — linked to the order
(``purchase_order_receipts``), and the order's received quantities and status
change in the same transaction.

**Receiving more than ordered is refused** (422 naming the line's quantity, with
what is still to come). A larger delivery is either a mistake at the door or a new
agreement with the supplier: the first is sent back, the second is a new order or a
delivery without one (``/purchases/new``). So an order can never be received twice
over: the order row is locked (``SELECT … FOR UPDATE`` on PostgreSQL; SQLite has a
single writer) before the remaining quantities are read, and two receipts racing
for the last units see each other's quantities: the second is refused.

A supplier's own invoice number that already names a purchase of the branch is
refused too (``POST /purchases`` would answer with that earlier purchase, and the
order would count its goods a second time).

Who may: ``purchases.write`` for the order's branch; paying at receipt also needs
``payments.make`` there (the route asks ``auth/roles.py``). Every change is audited
here.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.audit.service import record
from tillbook.auth.context import acting_for
from tillbook.errors import Conflict, NotFound, ValidationFailed
from tillbook.kit import bounds
from tillbook.kit.bounds import MONEY
from tillbook.kit.money import ZERO, line_cost, money_str
from tillbook.kit.pagination import Page, envelope
from tillbook.kit.problems import Problems
from tillbook.kit.refs import ref_to_id
from tillbook.models import (
    Company,
    Listing,
    Order,
    Product,
    PurchaseOrder,
    PurchaseOrderLine,
    PurchaseOrderReceipt,
    User,
    Warehouse,
)
from tillbook.orders import numbering
from tillbook.orders.intake import existing_order
from tillbook.orders.purchases import create_purchase
from tillbook.orders.schemas import (
    PO_STATUSES,
    PurchaseIn,
    PurchaseOrderCloseIn,
    PurchaseOrderIn,
    PurchaseOrderReceiptIn,
)
from tillbook.unit import UnitOfWork

OPEN = ("ordered", "partially_received")  # what a delivery may be received against
EDITABLE = ("draft",)
CLOSABLE = ("draft", "ordered", "partially_received")
COUNTER = "purchase-orders"


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _qty(value: Decimal) -> str:
    return format(value.quantize(Decimal("0.0001")), "f")


def _iso(value: dt.datetime | None) -> str | None:
    if value is None:
        return None
    aware = value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)
    return aware.replace(microsecond=0).isoformat().replace("+00:00", "Z")


async def warehouse_of(session: AsyncSession, company_id: int, po_id: int) -> int:
    """The branch an order belongs to (for the caller's permission check); another
    company's order is not found."""
    found = (
        await session.execute(
            select(PurchaseOrder.warehouse_id).where(
                PurchaseOrder.id == po_id, PurchaseOrder.company_id == company_id
            )
        )
    ).scalar_one_or_none()
    if found is None:
        raise NotFound(f"purchase order {po_id} not found")
    return int(found)


async def _locked(session: AsyncSession, company_id: int, po_id: int) -> PurchaseOrder:
    """The order, its row locked to the end of the unit: every change of an order
    (edit, order, receive, close) takes this lock first, so they run one at a time."""
    po = (
        await session.execute(
            select(PurchaseOrder)
            .where(PurchaseOrder.id == po_id, PurchaseOrder.company_id == company_id)
            .with_for_update()
            .execution_options(populate_existing=True)
        )
    ).scalar_one_or_none()
    if po is None:
        raise NotFound(f"purchase order {po_id} not found")
    return po


async def _lines(session: AsyncSession, po: PurchaseOrder) -> list[PurchaseOrderLine]:
    return list(
        (
            await session.execute(
                select(PurchaseOrderLine)
                .where(
                    PurchaseOrderLine.company_id == po.company_id,
                    PurchaseOrderLine.purchase_order_id == po.id,
                )
                .order_by(PurchaseOrderLine.position, PurchaseOrderLine.id)
                .execution_options(populate_existing=True)
            )
        ).scalars()
    )


async def _supplier(
    session: AsyncSession, company_id: int, ref: Any, problems: Problems
) -> User | None:
    sid = ref_to_id(ref)
    supplier = (
        None
        if sid is None
        else await session.scalar(select(User).where(User.company_id == company_id, User.id == sid))
    )
    if supplier is None or supplier.user_type != "supplier":
        problems.add("supplier_id", f"unknown supplier {ref!r}")
        return None
    if supplier.archived_at is not None:
        problems.add("supplier_id", f"supplier {supplier.name!r} is archived")
        return None
    return supplier


async def _checked_lines(
    session: AsyncSession,
    company_id: int,
    warehouse: Warehouse,
    body: PurchaseOrderIn,
    problems: Problems,
) -> list[tuple[int, Decimal, Decimal]]:
    """(product id, quantity, unit cost) of each line: a product listed and active
    in the branch, once per order; the order's total within what the books hold."""
    wanted = {i: ref_to_id(line.product_id) for i, line in enumerate(body.lines)}
    ids = [p for p in wanted.values() if p is not None]
    listed = {
        pid: (name, bool(active) and archived is None)
        for pid, name, active, archived in (
            await session.execute(
                select(Product.id, Product.name, Listing.active, Product.archived_at)
                .join(
                    Listing,
                    (Listing.product_id == Product.id) & (Listing.company_id == Product.company_id),
                )
                .where(
                    Product.company_id == company_id,
                    Listing.warehouse_id == warehouse.id,
                    Product.id.in_(ids),
                )
            )
        ).all()
    }
    out: list[tuple[int, Decimal, Decimal]] = []
    seen: set[int] = set()
    running = ZERO
    for i, line in enumerate(body.lines):
        pid = wanted[i]
        field = f"lines.{i}.product_id"
        if pid is None or pid not in listed:
            problems.add(field, f"product {line.product_id!r} is not listed in {warehouse.name}")
            continue
        name, active = listed[pid]
        if not active:
            problems.add(field, f"product {name!r} is archived or not active in {warehouse.name}")
        elif pid in seen:
            problems.add(field, f"product {name!r} is on the order twice; give one line")
        seen.add(pid)
        running += line_cost(line.quantity, line.unit_cost)
        problem = bounds.exceeds(running, MONEY, "the order's total up to this line")
        if problem is not None:
            problems.add(f"lines.{i}.quantity", problem)
        out.append((pid, line.quantity, line.unit_cost))
    return out


def _write_lines(
    session: AsyncSession,
    company_id: int,
    po: PurchaseOrder,
    lines: list[tuple[int, Decimal, Decimal]],
) -> None:
    session.add_all(
        PurchaseOrderLine(
            company_id=company_id,
            purchase_order_id=po.id,
            product_id=pid,
            position=i,
            quantity=quantity,
            unit_cost=cost,
            received=ZERO,
        )
        for i, (pid, quantity, cost) in enumerate(lines)
    )
    po.total = sum((line_cost(q, c) for _p, q, c in lines), ZERO)


async def create_order(
    uow: UnitOfWork, company_id: int, actor_id: int, body: PurchaseOrderIn
) -> dict[str, Any]:
    """A new draft. The caller has checked ``purchases.write`` for the branch."""
    session = uow.session
    problems = Problems()
    wid = ref_to_id(body.warehouse_id) if body.warehouse_id is not None else None
    warehouse = (
        None
        if wid is None
        else await session.scalar(
            select(Warehouse).where(Warehouse.company_id == company_id, Warehouse.id == wid)
        )
    )
    if warehouse is None:
        raise ValidationFailed({"warehouse_id": [f"unknown branch {body.warehouse_id!r}"]})
    supplier = await _supplier(session, company_id, body.supplier_id, problems)
    lines = await _checked_lines(session, company_id, warehouse, body, problems)
    problems.raise_if_any()
    assert supplier is not None
    po = PurchaseOrder(
        company_id=company_id,
        warehouse_id=warehouse.id,
        supplier_id=supplier.id,
        number=await numbering.take(uow, warehouse.company_id, warehouse.id, COUNTER),
        status="draft",
        order_date=body.order_date or dt.date.today(),
        expected_date=body.expected_date,
        notes=body.notes or "",
        total=ZERO,
        created_by=actor_id,
        created_at=_now(),
        close_reason="",
    )
    session.add(po)
    await session.flush()
    _write_lines(session, company_id, po, lines)
    await session.flush()
    await record(
        session,
        company_id=company_id,
        actor_id=actor_id,
        action="purchase_order.created",
        entity_type="purchase_order",
        entity_id=po.id,
        after={"number": po.number, "warehouse_id": po.warehouse_id, "total": money_str(po.total)},
    )
    return {"status": "success", "data": await detail(session, company_id, po.id)}


async def edit_order(
    uow: UnitOfWork, company_id: int, po_id: int, actor_id: int, body: PurchaseOrderIn
) -> dict[str, Any]:
    """The whole of a draft again (supplier, dates, notes, lines); an order that has
    left ``draft`` is a 409: the supplier has it."""
    session = uow.session
    po = await _locked(session, company_id, po_id)
    if po.status not in EDITABLE:
        raise Conflict(f"purchase order {po.number} is {po.status}: only a draft can be edited")
    warehouse = await session.scalar(
        select(Warehouse).where(
            Warehouse.company_id == po.company_id, Warehouse.id == po.warehouse_id
        )
    )
    assert warehouse is not None
    problems = Problems()
    supplier = await _supplier(session, company_id, body.supplier_id, problems)
    lines = await _checked_lines(session, company_id, warehouse, body, problems)
    problems.raise_if_any()
    assert supplier is not None
    before = {"supplier_id": po.supplier_id, "total": money_str(po.total)}
    for old in await _lines(session, po):
        await session.delete(old)
    await session.flush()
    po.supplier_id = supplier.id
    if body.order_date is not None:
        po.order_date = body.order_date
    po.expected_date = body.expected_date
    po.notes = body.notes or ""
    _write_lines(session, company_id, po, lines)
    await session.flush()
    await record(
        session,
        company_id=company_id,
        actor_id=actor_id,
        action="purchase_order.edited",
        entity_type="purchase_order",
        entity_id=po.id,
        before=before,
        after={"supplier_id": po.supplier_id, "total": money_str(po.total)},
    )
    return {"status": "success", "data": await detail(session, company_id, po.id)}


async def mark_ordered(
    uow: UnitOfWork, company_id: int, po_id: int, actor_id: int
) -> dict[str, Any]:
    """draft -> ordered: sent to the supplier; no longer editable. Nothing posted."""
    session = uow.session
    po = await _locked(session, company_id, po_id)
    if po.status != "draft":
        raise Conflict(f"purchase order {po.number} is {po.status}: only a draft can be ordered")
    po.status = "ordered"
    po.ordered_at = _now()
    await session.flush()
    await record(
        session,
        company_id=company_id,
        actor_id=actor_id,
        action="purchase_order.ordered",
        entity_type="purchase_order",
        entity_id=po.id,
        after={"number": po.number, "status": po.status},
    )
    return {"status": "success", "data": await detail(session, company_id, po.id)}


async def close_order(
    uow: UnitOfWork, company_id: int, po_id: int, actor_id: int, body: PurchaseOrderCloseIn
) -> dict[str, Any]:
    """The rest is not coming: ``closed`` (or ``cancelled`` when nothing had come).
    What was received stays received; nothing is posted."""
    session = uow.session
    po = await _locked(session, company_id, po_id)
    if po.status not in CLOSABLE:
        raise Conflict(f"purchase order {po.number} is {po.status}: it cannot be closed")
    received = any(line.received > 0 for line in await _lines(session, po))
    before = po.status
    po.status = "closed" if received else "cancelled"
    po.closed_at = _now()
    po.closed_by = actor_id
    po.close_reason = body.reason or ""
    await session.flush()
    await record(
        session,
        company_id=company_id,
        actor_id=actor_id,
        action="purchase_order.closed",
        entity_type="purchase_order",
        entity_id=po.id,
        before={"status": before},
        after={"status": po.status, "reason": po.close_reason},
    )
    return {"status": "success", "data": await detail(session, company_id, po.id)}


def _renamed(errors: dict[str, list[str]]) -> dict[str, list[str]]:
    """The purchase's ``product_items.{i}.…`` errors under this request's ``lines``."""
    out: dict[str, list[str]] = {}
    for name, messages in errors.items():
        if name.startswith("product_items"):
            name = "lines" + name[len("product_items") :]
            name = name.replace(".unit_price", ".unit_cost").replace(".xid", ".product_id")
        out.setdefault(name, []).extend(messages)
    return out


async def receive(
    uow: UnitOfWork, company_id: int, po_id: int, actor_id: int, body: PurchaseOrderReceiptIn
) -> dict[str, Any]:
    """A delivery against the order: one purchase of the lines received, the order's
    received quantities and status updated, all in this unit. The caller has checked
    ``purchases.write`` (and ``payments.make`` when paying now) for the branch."""
    session = uow.session
    po = await _locked(session, company_id, po_id)
    if po.status not in OPEN:
        raise Conflict(
            f"purchase order {po.number} is {po.status}: only an ordered one can be received"
        )
    lines = {line.product_id: line for line in await _lines(session, po)}
    problems = Problems()
    items: list[dict[str, Any]] = []
    taken: list[tuple[PurchaseOrderLine, Decimal]] = []
    seen: set[int] = set()
    for i, got in enumerate(body.lines):
        pid = ref_to_id(got.product_id)
        line = lines.get(pid or 0)
        if line is None:
            problems.add(f"lines.{i}.product_id", f"product {got.product_id!r} is not on the order")
            continue
        if line.product_id in seen:
            problems.add(f"lines.{i}.product_id", "the product is received twice; give one line")
            continue
        seen.add(line.product_id)
        left = line.quantity - line.received
        if got.quantity > left:
            problems.add(
                f"lines.{i}.quantity",
                f"{_qty(got.quantity)} is more than is still to come ({_qty(left)} of "
                f"{_qty(line.quantity)} ordered); receiving more than ordered is refused",
            )
            continue
        taken.append((line, got.quantity))
        items.append(
            {
                "xid": line.product_id,
                "quantity": got.quantity,
                "unit_price": line.unit_cost if got.unit_cost is None else got.unit_cost,
                "batch_number": got.batch_number,
                "expiry_date": got.expiry_date,
                "tax_id": got.tax_id,
            }
        )
    problems.raise_if_any()
    if body.invoice_number is not None and (
        await existing_order(uow, po.company_id, po.warehouse_id, "purchases", body.invoice_number)
    ):
        raise ValidationFailed(
            {"invoice_number": [f"purchase {body.invoice_number!r} is already recorded here"]}
        )
    try:
        purchase = PurchaseIn.model_validate(
            {
                "user_id": po.supplier_id,
                "order_date": body.order_date.datetime.isoformat()
                if body.order_date.datetime is not None
                else body.order_date.date.isoformat(),
                "product_items": items,
                "invoice_number": body.invoice_number,
                "all_payments": [t.model_dump() for t in body.all_payments],
                "unique_id": body.unique_id,
                "notes": body.notes or f"Received against {po.number}",
            }
        )
        key = await acting_for(session, company_id, po.warehouse_id, actor_id)
        done = await create_purchase(uow, key, purchase)
    except ValidationFailed as exc:
        raise ValidationFailed(_renamed(exc.errors)) from None
    for line, quantity in taken:
        line.received = line.received + quantity
    everything = all(line.received >= line.quantity for line in lines.values())
    po.status = "received" if everything else "partially_received"
    session.add(
        PurchaseOrderReceipt(
            company_id=company_id,
            purchase_order_id=po.id,
            order_id=done["purchase_id"],
            created_at=_now(),
        )
    )
    await session.flush()
    await record(
        session,
        company_id=company_id,
        actor_id=actor_id,
        action="purchase_order.received",
        entity_type="purchase_order",
        entity_id=po.id,
        after={
            "purchase_id": done["purchase_id"],
            "invoice_number": done["invoice_number"],
            "total": done["total"],
            "status": po.status,
            "lines": {str(line.product_id): _qty(q) for line, q in taken},
        },
    )
    return {
        "status": "success",
        # The purchase as ``POST /purchases`` answers it, ``status`` included, as
        # this answer always has.
        "purchase": {"status": "success", **done},
        "data": await detail(session, company_id, po.id),
    }


# --- reads ----------------------------------------------------------------------------


async def detail(session: AsyncSession, company_id: int, po_id: int) -> dict[str, Any]:
    """The order, its lines (ordered, received, still to come) and its receipts."""
    row = (
        await session.execute(
            select(PurchaseOrder, User.name, Warehouse.name, Company.name)
            .join(
                User,
                (User.id == PurchaseOrder.supplier_id)
                & (User.company_id == PurchaseOrder.company_id),
            )
            .join(
                Warehouse,
                (Warehouse.id == PurchaseOrder.warehouse_id)
                & (Warehouse.company_id == PurchaseOrder.company_id),
            )
            .join(Company, Company.id == PurchaseOrder.company_id)
            .where(PurchaseOrder.id == po_id, PurchaseOrder.company_id == company_id)
        )
    ).one_or_none()
    if row is None:
        raise NotFound(f"purchase order {po_id} not found")
    po, supplier_name, warehouse_name, company_name = row
    line_rows = (
        await session.execute(
            select(PurchaseOrderLine, Product.name, Product.item_code)
            .join(
                Product,
                (Product.id == PurchaseOrderLine.product_id)
                & (Product.company_id == PurchaseOrderLine.company_id),
            )
            .where(
                PurchaseOrderLine.company_id == po.company_id,
                PurchaseOrderLine.purchase_order_id == po.id,
            )
            .order_by(PurchaseOrderLine.position, PurchaseOrderLine.id)
        )
    ).all()
    receipts = (
        await session.execute(
            select(Order.id, Order.invoice_number, Order.order_date, Order.total)
            .join(
                PurchaseOrderReceipt,
                (PurchaseOrderReceipt.order_id == Order.id)
                & (PurchaseOrderReceipt.company_id == Order.company_id),
            )
            .where(
                PurchaseOrderReceipt.company_id == po.company_id,
                PurchaseOrderReceipt.purchase_order_id == po.id,
            )
            .order_by(Order.id)
        )
    ).all()
    return {
        "id": po.id,
        "number": po.number,
        "status": po.status,
        "warehouse_id": po.warehouse_id,
        "warehouse_name": warehouse_name,
        "company_name": company_name,
        "supplier": {"id": po.supplier_id, "name": supplier_name},
        "order_date": po.order_date.isoformat(),
        "expected_date": None if po.expected_date is None else po.expected_date.isoformat(),
        "notes": po.notes,
        "total": money_str(po.total),
        "created_at": _iso(po.created_at),
        "ordered_at": _iso(po.ordered_at),
        "closed_at": _iso(po.closed_at),
        "close_reason": po.close_reason,
        "lines": [
            {
                "product_id": line.product_id,
                "name": name,
                "item_code": item_code,
                "quantity": _qty(line.quantity),
                "received": _qty(line.received),
                "remaining": _qty(max(line.quantity - line.received, ZERO)),
                "unit_cost": format(line.unit_cost, "f"),
                "total": money_str(line_cost(line.quantity, line.unit_cost)),
            }
            for line, name, item_code in line_rows
        ],
        "receipts": [
            {
                "purchase_id": oid,
                "invoice_number": number,
                "order_date": day.isoformat(),
                "total": money_str(total),
            }
            for oid, number, day, total in receipts
        ],
    }


async def orders_page(
    session: AsyncSession,
    company_id: int,
    warehouse_ids: list[int],
    page: Page,
    status: str | None = None,
    supplier_id: int | None = None,
) -> dict[str, Any]:
    """The branches' purchase orders, newest first; ``status`` one of
    ``PO_STATUSES`` or ``open`` (ordered or partially received)."""
    where = [
        PurchaseOrder.company_id == company_id,
        PurchaseOrder.warehouse_id.in_(warehouse_ids),
    ]
    if status == "open":
        where.append(PurchaseOrder.status.in_(OPEN))
    elif status in PO_STATUSES:
        where.append(PurchaseOrder.status == status)
    if supplier_id is not None:
        where.append(PurchaseOrder.supplier_id == supplier_id)
    total = (
        await session.execute(select(func.count()).select_from(PurchaseOrder).where(*where))
    ).scalar_one()
    rows: list[dict[str, Any]] = []
    if page.offset < total:
        result = await session.execute(
            select(PurchaseOrder, User.name)
            .join(
                User,
                (User.id == PurchaseOrder.supplier_id)
                & (User.company_id == PurchaseOrder.company_id),
            )
            .where(*where)
            .order_by(PurchaseOrder.id.desc())
            .offset(page.offset)
            .limit(page.limit)
        )
        rows = [
            {
                "id": po.id,
                "number": po.number,
                "status": po.status,
                "warehouse_id": po.warehouse_id,
                "supplier": {"id": po.supplier_id, "name": name},
                "order_date": po.order_date.isoformat(),
                "expected_date": None if po.expected_date is None else po.expected_date.isoformat(),
                "total": money_str(po.total),
            }
            for po, name in result.all()
        ]
    return envelope(page, total, rows)


async def still_to_come(
    session: AsyncSession, company_id: int, supplier_id: int, warehouse_ids: list[int]
) -> list[dict[str, Any]]:
    """What is ordered from a supplier and not yet received, per order line (open
    orders of the given branches), oldest order first: for the supplier's page."""
    rows = (
        await session.execute(
            select(
                PurchaseOrder.id,
                PurchaseOrder.number,
                PurchaseOrder.status,
                PurchaseOrder.expected_date,
                Product.name,
                PurchaseOrderLine.quantity,
                PurchaseOrderLine.received,
                PurchaseOrderLine.unit_cost,
            )
            .join(
                PurchaseOrderLine,
                (PurchaseOrderLine.purchase_order_id == PurchaseOrder.id)
                & (PurchaseOrderLine.company_id == PurchaseOrder.company_id),
            )
            .join(
                Product,
                (Product.id == PurchaseOrderLine.product_id)
                & (Product.company_id == PurchaseOrderLine.company_id),
            )
            .where(
                PurchaseOrder.company_id == company_id,
                PurchaseOrder.supplier_id == supplier_id,
                PurchaseOrder.warehouse_id.in_(warehouse_ids),
                PurchaseOrder.status.in_(OPEN),
                PurchaseOrderLine.received < PurchaseOrderLine.quantity,
            )
            .order_by(PurchaseOrder.id, PurchaseOrderLine.position, PurchaseOrderLine.id)
        )
    ).all()
    return [
        {
            "purchase_order_id": po_id,
            "number": number,
            "status": status,
            "expected_date": None if expected is None else expected.isoformat(),
            "product": name,
            "ordered": _qty(quantity),
            "received": _qty(received),
            "remaining": _qty(quantity - received),
            "value": money_str(line_cost(quantity - received, cost)),
        }
        for po_id, number, status, expected, name, quantity, received, cost in rows
    ]
