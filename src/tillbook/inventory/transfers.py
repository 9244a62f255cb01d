"""Stock transfers between branches of one company.

The state machine (one transfer, one direction)::

    POST /stock-transfers            ──> dispatched
    dispatched ── receive (receiver) ──> received    (what did not arrive: written off)
    dispatched ── cancel (sender)    ──> cancelled   (the units back into the sender's stock)

A transfer is created dispatched: the sending branch's key creates it when the goods
leave, so there is no draft state to cancel "before dispatch". Cancelling is allowed
while nothing was received, and puts the units back where they came from, at the
cost they left with. ``received`` and ``cancelled`` are final; a transfer is received
once (in full or in part), never twice.

Postings (``ledger.rules``): the units leave the sender by FIFO at cost, Dr 11750
Goods in Transit / Cr 11700 in the sender's books; the receiver takes them in as
batches at the cost they left with, keeping each sender batch's number and expiry,
Dr 11700 / Cr 11750 in the receiver's books; a shortfall on receipt is Dr 51100 /
Cr 11750 with its reason in the narration. So each warehouse's 11700 equals the
value of its batches, and the company's 11750 the value of the transfers still on
the road.

A product the receiving branch does not list yet is listed there on receipt, at the
sender's prices (a branch that receives goods stocks them; the back office changes
the prices later). Quantities are in the product's base unit.

Two receipts (or a receipt and a cancel) of one transfer at once: each first moves
the transfer out of ``dispatched`` with a guarded update; the second waits for the
first's row lock, finds the status changed and is a 409, having written nothing.

Each step is recorded in the audit trail here (``stock_transfer.dispatched``,
``.received``, ``.cancelled``), by whoever acted, through the API or the back office.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from decimal import Decimal
from typing import Annotated, Any, Literal, cast, get_args, overload

from pydantic import Field
from sqlalchemy import func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm.attributes import set_committed_value
from typing_extensions import TypedDict

from tillbook.audit.service import record
from tillbook.auth.context import AuthContext
from tillbook.errors import Conflict, NotFound, Unprocessable, invalid
from tillbook.events.outbox import emit
from tillbook.inventory import service as inventory
from tillbook.inventory.repository import Listed
from tillbook.inventory.schemas import StockTransferIn, TransferCancelIn, TransferReceiptIn
from tillbook.kit import bounds, xid
from tillbook.kit.bounds import MONEY
from tillbook.kit.money import ZERO, draw_cost, money_str, number
from tillbook.kit.pagination import Paged, paged, parse_page
from tillbook.kit.problems import Problems
from tillbook.kit.refs import ref_to_id
from tillbook.kit.shapes import DateStr, DateTimeStr, MoneyStr, ProductRef, answer
from tillbook.ledger.rules import RuleName
from tillbook.ledger.service import post
from tillbook.models import (
    Listing,
    Product,
    StockBatch,
    StockTransfer,
    StockTransferLine,
    Warehouse,
)
from tillbook.unit import UnitOfWork

SOURCE = "stock_transfer"
# The states a transfer is in, and the ``status`` filter of the list (the API
# document's enum for it comes from here, ``api.docs.fields.CHOICES``).
TransferStatus = Literal["dispatched", "received", "cancelled"]
STATUSES: tuple[str, ...] = get_args(TransferStatus)


@answer
class TransferWarehouse(TypedDict):
    id: int
    xid: str
    name: str


@answer
class TransferBatch(TypedDict):
    batch_number: str | None
    expiry_date: DateStr | None
    unit_cost: float
    quantity: float
    quantity_received: float


@answer
class TransferItem(TypedDict):
    product_id: int
    product: ProductRef
    quantity: Annotated[float, Field(description="base units dispatched")]
    quantity_received: float
    value: Annotated[MoneyStr, Field(description="cost of the units dispatched")]
    value_received: MoneyStr
    batches: list[TransferBatch]


@answer
class Transfer(TypedDict):
    # A transfer as either branch reads it, and as its events announce it.
    id: int
    xid: str
    status: TransferStatus
    direction: Annotated[Literal["out", "in"], Field(description="relative to the key's warehouse")]
    from_warehouse: TransferWarehouse
    to_warehouse: TransferWarehouse
    notes: str
    reason: str | None
    value_sent: MoneyStr
    value_received: MoneyStr
    value_short: Annotated[MoneyStr, Field(description="written off to 51100 on receipt")]
    dispatched_at: DateTimeStr
    closed_at: DateTimeStr | None
    items: list[TransferItem]


@answer
class TransferStep(TypedDict):
    # A dispatch, receipt or cancel answered (flat beside ``status``): the transfer
    # after it.
    transfer_id: int
    transfer_status: TransferStatus
    data: Transfer


@overload
def _utc_iso(value: dt.datetime) -> str: ...
@overload
def _utc_iso(value: dt.datetime | None) -> str | None: ...
def _utc_iso(value: dt.datetime | None) -> str | None:
    if value is None:
        return None
    aware = value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)
    return aware.replace(microsecond=0).isoformat().replace("+00:00", "Z")


async def _post(
    uow: UnitOfWork,
    key: AuthContext,
    transfer: StockTransfer,
    rule: RuleName,
    figures: dict[str, Decimal],
    narration: str,
    day: dt.date,
) -> None:
    """A journal entry of ``transfer`` in the books of the key's warehouse: every
    posting of a transfer names it as its source, and its ``items`` as the field."""
    await post(
        uow,
        rule=rule,
        figures=figures,
        narration=narration,
        company_id=key.company_id,
        warehouse_id=key.warehouse_id,
        source_type=SOURCE,
        source_id=transfer.id,
        field="items",
        entry_date=day,
        created_by=key.user_id,
    )


# --- reading ----------------------------------------------------------------------------


def _visible(key: AuthContext) -> Any:
    """Only the two warehouses of a transfer see it; any other reads it as missing."""
    return (StockTransfer.company_id == key.company_id) & or_(
        StockTransfer.from_warehouse_id == key.warehouse_id,
        StockTransfer.to_warehouse_id == key.warehouse_id,
    )


async def _find(session: AsyncSession, key: AuthContext, ref: str | int | None) -> StockTransfer:
    transfer_id = ref_to_id(ref)
    found = None
    if transfer_id is not None:
        found = (
            await session.execute(
                select(StockTransfer).where(StockTransfer.id == transfer_id, _visible(key))
            )
        ).scalar_one_or_none()
    if found is None:
        raise NotFound("stock transfer not found")
    return found


async def _views(
    session: AsyncSession, key: AuthContext, transfers: list[StockTransfer]
) -> list[Transfer]:
    """The GET shape of each transfer: both warehouses, and per product what was
    sent and received, with the batches it travelled in."""
    if not transfers:
        return []
    ids = [t.id for t in transfers]
    # (one company's transfers: ``IN`` its one company keeps these router queries)
    companies = {t.company_id for t in transfers}
    wh_ids = {t.from_warehouse_id for t in transfers} | {t.to_warehouse_id for t in transfers}
    warehouses = {
        w.id: w
        for w in (
            await session.execute(
                select(Warehouse).where(
                    Warehouse.company_id.in_(companies), Warehouse.id.in_(wh_ids)
                )
            )
        )
        .scalars()
        .all()
    }
    rows = (
        await session.execute(
            select(StockTransferLine, Product)
            .join(
                Product,
                (Product.id == StockTransferLine.product_id)
                & (Product.company_id == StockTransferLine.company_id),
            )
            .where(
                StockTransferLine.company_id.in_(companies), StockTransferLine.transfer_id.in_(ids)
            )
            .order_by(StockTransferLine.id)
        )
    ).all()
    items: dict[int, dict[int, dict[str, Any]]] = defaultdict(dict)
    for line, product in rows:
        item = items[line.transfer_id].get(product.id)
        if item is None:
            item = items[line.transfer_id][product.id] = {
                "product_id": product.id,
                "product": {
                    "id": product.id,
                    "xid": xid.encode(product.id),
                    "name": product.name,
                    "item_code": product.item_code,
                },
                "quantity": ZERO,
                "quantity_received": ZERO,
                "value": ZERO,
                "value_received": ZERO,
                "batches": [],
            }
        item["quantity"] += line.quantity
        item["quantity_received"] += line.quantity_received
        item["value"] += line.value
        item["value_received"] += line.value_received
        item["batches"].append(
            {
                "batch_number": line.batch_number,
                "expiry_date": None if line.expiry_date is None else line.expiry_date.isoformat(),
                "unit_cost": number(line.unit_cost),
                "quantity": number(line.quantity),
                "quantity_received": number(line.quantity_received),
            }
        )

    def wh(w_id: int) -> TransferWarehouse:
        w = warehouses[w_id]
        return {"id": w.id, "xid": xid.encode(w.id), "name": w.name}

    out: list[Transfer] = []
    for t in transfers:
        shown: list[TransferItem] = [
            {
                "product_id": item["product_id"],
                "product": item["product"],
                "quantity": number(item["quantity"]),
                "quantity_received": number(item["quantity_received"]),
                "value": money_str(item["value"]),
                "value_received": money_str(item["value_received"]),
                "batches": item["batches"],
            }
            for item in items[t.id].values()
        ]
        out.append(
            {
                "id": t.id,
                "xid": xid.encode(t.id),
                "status": cast(TransferStatus, t.status),
                "direction": "out" if t.from_warehouse_id == key.warehouse_id else "in",
                "from_warehouse": wh(t.from_warehouse_id),
                "to_warehouse": wh(t.to_warehouse_id),
                "notes": t.notes,
                "reason": t.reason,
                "value_sent": money_str(t.value_sent),
                "value_received": money_str(t.value_received),
                "value_short": money_str(t.value_short),
                "dispatched_at": _utc_iso(t.dispatched_at),
                "closed_at": _utc_iso(t.closed_at),
                "items": shown,
            }
        )
    return out


async def transfer_detail(
    session: AsyncSession, key: AuthContext, ref: str | int | None
) -> Transfer:
    transfer = await _find(session, key, ref)
    return (await _views(session, key, [transfer]))[0]


async def transfer_page(
    session: AsyncSession,
    key: AuthContext,
    page: str | None,
    limit: str | None,
    status: str | None,
) -> Paged[Transfer]:
    """Transfers from and to the key's warehouse, newest first (``direction`` tells
    which); ``status`` filters on one state."""
    p = parse_page(page, limit)
    where = [_visible(key)]
    text = bounds.query_value("status", status)
    if text is not None:
        if text not in STATUSES:
            raise invalid("status", f"must be one of {', '.join(STATUSES)}")
        where.append(StockTransfer.status == text)
    total = (
        await session.execute(select(func.count()).select_from(StockTransfer).where(*where))
    ).scalar_one()
    rows: list[StockTransfer] = []
    if p.offset < total:
        rows = list(
            (
                await session.execute(
                    select(StockTransfer)
                    .where(*where)
                    .order_by(StockTransfer.id.desc())
                    .offset(p.offset)
                    .limit(p.limit)
                )
            ).scalars()
        )
    return paged(p, total, await _views(session, key, rows))


async def _audit(
    uow: UnitOfWork, key: AuthContext, step: str, transfer: StockTransfer, after: dict[str, Any]
) -> None:
    await record(
        uow.session,
        company_id=key.company_id,
        actor=key.actor,
        action=f"stock_transfer.{step}",
        entity_type="stock_transfer",
        entity_id=transfer.id,
        after=after,
    )


# --- dispatching ------------------------------------------------------------------------


async def create_transfer(uow: UnitOfWork, key: AuthContext, body: StockTransferIn) -> TransferStep:
    """The units leave the key's warehouse now, by FIFO at cost, into goods in
    transit; nothing is written when any item is refused."""
    session = uow.session
    problems = Problems()
    to_id = ref_to_id(body.to_warehouse_id)
    target = None
    if to_id is not None:
        target = (
            await session.execute(
                select(Warehouse).where(
                    Warehouse.id == to_id,
                    Warehouse.company_id == key.company_id,
                    Warehouse.archived_at.is_(None),
                )
            )
        ).scalar_one_or_none()
    if target is None:
        problems.add("to_warehouse_id", f"unknown warehouse {body.to_warehouse_id!r}")
    elif target.id == key.warehouse_id:
        problems.add("to_warehouse_id", "must be another warehouse than the sending one")
    ids: list[int] = []
    for i, item in enumerate(body.items):
        product_id = ref_to_id(item.product_id) or 0
        if product_id in ids:
            problems.add(f"items.{i}.product_id", "the product is named twice in items")
        ids.append(product_id)
    products = await inventory.products(
        uow, key.company_id, key.warehouse_id, [p for p in ids if p]
    )
    for i, (item, product_id) in enumerate(zip(body.items, ids, strict=True)):
        if product_id not in products:
            problems.add(f"items.{i}.product_id", f"unknown product {item.product_id!r}")
    problems.raise_if_any()
    assert target is not None
    # Stock that is not there cannot travel, whatever the warehouse allows for sales.
    allocations = await inventory.plan(
        uow,
        products,
        [
            (p, item.quantity, f"items.{i}.quantity")
            for i, (item, p) in enumerate(zip(body.items, ids, strict=True))
        ],
        allow_negative=False,
    )
    cost = sum((a.cost for a in allocations), ZERO)
    bounds.check("items", cost, MONEY, "the value of this transfer")
    layer_ids = [d.layer_id for a in allocations for d in a.draws if d.layer_id is not None]
    layers = {
        b.id: b
        for b in (
            await session.execute(
                select(StockBatch).where(
                    StockBatch.company_id == key.company_id, StockBatch.id.in_(layer_ids)
                )
            )
        ).scalars()
    }
    now = dt.datetime.now(dt.UTC)
    transfer = StockTransfer(
        company_id=key.company_id,
        from_warehouse_id=key.warehouse_id,
        to_warehouse_id=target.id,
        status="dispatched",
        notes=body.notes or "",
        value_sent=cost,
        value_received=ZERO,
        value_short=ZERO,
        created_by=key.user_id,
        dispatched_at=now,
    )
    session.add(transfer)
    await session.flush()
    for allocation in allocations:
        for draw in allocation.draws:
            assert draw.layer_id is not None  # no deficit draws: negative stock refused
            layer = layers[draw.layer_id]
            session.add(
                StockTransferLine(
                    company_id=key.company_id,
                    transfer_id=transfer.id,
                    product_id=allocation.product_id,
                    source_batch_id=layer.id,
                    batch_number=layer.batch_number,
                    expiry_date=layer.expiry_date,
                    unit_cost=layer.unit_cost,
                    quantity=draw.quantity,
                    value=draw.cost,
                    quantity_received=ZERO,
                    value_received=ZERO,
                )
            )
    await session.flush()
    await inventory.take(
        uow,
        products,
        allocations,
        reason="transfer_out",
        source_type=SOURCE,
        source_id=transfer.id,
        allow_negative=False,
    )
    await _post(
        uow,
        key,
        transfer,
        "transfer_dispatch",
        {"cost": cost},
        f"Stock transfer #{transfer.id} dispatched to {target.name}",
        now.date(),
    )
    data = (await _views(session, key, [transfer]))[0]
    emit(
        uow,
        company_id=key.company_id,
        warehouse_id=key.warehouse_id,
        types=["transfer.dispatched"],
        data=data,
    )
    await _audit(
        uow, key, "dispatched", transfer,
        {"from_warehouse_id": key.warehouse_id, "to_warehouse_id": target.id},
    )  # fmt: skip
    return {"transfer_id": transfer.id, "transfer_status": "dispatched", "data": data}


# --- receiving and cancelling -----------------------------------------------------------


async def _close(
    uow: UnitOfWork, key: AuthContext, transfer: StockTransfer, status: str, reason: str | None
) -> dt.datetime:
    """Move the transfer out of ``dispatched``, or 409: the guarded update waits for a
    concurrent receipt or cancel of the same transfer and then finds it closed."""
    now = dt.datetime.now(dt.UTC)
    result = await uow.session.execute(
        update(StockTransfer)
        .where(
            StockTransfer.company_id == transfer.company_id,
            StockTransfer.id == transfer.id,
            StockTransfer.status == "dispatched",
        )
        .values(status=status, closed_at=now, closed_by=key.user_id, reason=reason)
        .execution_options(synchronize_session=False)
    )
    if getattr(result, "rowcount", 1) != 1:
        raise Conflict(f"stock transfer {transfer.id} was received or cancelled meanwhile")
    # The loaded row as the update left it, without a second UPDATE of the same values.
    for name, value in (
        ("status", status),
        ("closed_at", now),
        ("closed_by", key.user_id),
        ("reason", reason),
    ):
        set_committed_value(transfer, name, value)
    return now


def _refuse_closed(transfer: StockTransfer) -> None:
    if transfer.status != "dispatched":
        raise Conflict(f"stock transfer {transfer.id} is already {transfer.status}")


async def _lines(session: AsyncSession, transfer: StockTransfer) -> list[StockTransferLine]:
    return list(
        (
            await session.execute(
                select(StockTransferLine)
                .where(
                    StockTransferLine.company_id == transfer.company_id,
                    StockTransferLine.transfer_id == transfer.id,
                )
                .order_by(StockTransferLine.id)
            )
        ).scalars()
    )


async def _listed_in(
    uow: UnitOfWork, transfer: StockTransfer, warehouse_id: int, product_ids: list[int]
) -> dict[int, Listed]:
    """The products as ``warehouse_id`` lists them; one it does not list yet is listed
    there now, at the sender's prices."""
    found = await inventory.products(uow, transfer.company_id, warehouse_id, product_ids)
    missing = [p for p in product_ids if p not in found]
    if missing:
        sender = await inventory.products(
            uow, transfer.company_id, transfer.from_warehouse_id, missing
        )
        for product_id in missing:
            source = sender.get(product_id)
            uow.session.add(
                Listing(
                    company_id=transfer.company_id,
                    warehouse_id=warehouse_id,
                    product_id=product_id,
                    sales_price=source.sales_price if source else ZERO,
                    purchase_price=source.purchase_price if source else ZERO,
                    mrp=source.mrp if source else None,
                    current_stock=ZERO,
                    reorder_level=ZERO,
                )
            )
        await uow.session.flush()
        found = await inventory.products(uow, transfer.company_id, warehouse_id, product_ids)
    return found


async def _take_in(
    uow: UnitOfWork,
    transfer: StockTransfer,
    lines: list[StockTransferLine],
    arrived: dict[int, Decimal],
    warehouse_id: int,
    reason: str,
    *,
    received: bool,
) -> tuple[Decimal, Decimal]:
    """Put ``arrived`` (product -> base units) into ``warehouse_id`` as batches at the
    cost the units left with, line by line in the order they were drawn: one batch a
    sender batch, with its number and expiry; ``received``: the lines record it as
    received (a receipt, not the sender taking them back). Returns the value taken in and the
    deficit variance (stock below zero there filled at a different cost)."""
    products = await _listed_in(
        uow, transfer, warehouse_id, sorted({ln.product_id for ln in lines})
    )
    left = dict(arrived)
    filled: dict[int, dict[int, tuple[Decimal, Decimal]]] = defaultdict(dict)
    value_in = variance = ZERO
    for line in lines:
        take = min(left.get(line.product_id, ZERO), line.quantity)
        if take <= 0:
            continue
        left[line.product_id] -= take
        value = draw_cost(take, line.quantity, line.unit_cost, line.value)
        receipt = await inventory.receive(
            uow,
            products[line.product_id],
            take,
            unit_cost=line.unit_cost,
            value=value,
            reason=reason,
            source_type=SOURCE,
            source_id=transfer.id,
            field="items",
            batch_number=line.batch_number,
            expiry_date=line.expiry_date,
            filled=filled[line.product_id],
        )
        if received:
            line.quantity_received = take
            line.value_received = value
        value_in += value
        variance += receipt.deficit_variance
    return value_in, variance


async def _settle_deficits(
    uow: UnitOfWork, key: AuthContext, transfer: StockTransfer, variance: Decimal, day: dt.date
) -> None:
    if variance:
        await _post(
            uow,
            key,
            transfer,
            "deficit_settlement",
            {"variance": variance},
            f"Stock deficit settled at cost by stock transfer #{transfer.id}",
            day,
        )


async def receive_transfer(
    uow: UnitOfWork, key: AuthContext, ref: str, body: TransferReceiptIn
) -> TransferStep:
    """The receiving warehouse takes in what arrived (everything, without ``items``);
    what did not arrive is written off to 51100 with ``reason``."""
    session = uow.session
    transfer = await _find(session, key, ref)
    if transfer.to_warehouse_id != key.warehouse_id:
        raise Unprocessable(
            f"stock transfer {transfer.id} is received by the warehouse it was sent to"
        )
    _refuse_closed(transfer)
    lines = await _lines(session, transfer)
    sent: dict[int, Decimal] = defaultdict(lambda: ZERO)
    for line in lines:
        sent[line.product_id] += line.quantity
    if body.items is None:
        arrived = dict(sent)
    else:
        problems = Problems()
        arrived = {}
        for i, item in enumerate(body.items):
            product_id = ref_to_id(item.product_id) or 0
            if product_id not in sent:
                problems.add(
                    f"items.{i}.product_id", f"product {item.product_id!r} is not in this transfer"
                )
            elif product_id in arrived:
                problems.add(f"items.{i}.product_id", "the product is named twice in items")
            elif item.quantity > sent[product_id]:
                problems.add(
                    f"items.{i}.quantity",
                    f"more than was dispatched: {format(item.quantity.normalize(), 'f')} "
                    f"of {format(sent[product_id].normalize(), 'f')}",
                )
            else:
                arrived[product_id] = item.quantity
        problems.raise_if_any()
    short_units = any(arrived.get(p, ZERO) < q for p, q in sent.items())
    reason = body.reason or ("short on receipt" if short_units else None)
    now = await _close(uow, key, transfer, "received", reason)
    value_in, variance = await _take_in(
        uow, transfer, lines, arrived, key.warehouse_id, "transfer_in", received=True
    )
    short = transfer.value_sent - value_in
    why = f": {reason}" if short_units and reason else ""
    await _post(
        uow,
        key,
        transfer,
        "transfer_receive",
        {"received": value_in, "short": short},
        f"Stock transfer #{transfer.id} received"
        + (f", shortfall {money_str(short)} written off{why}" if short_units else ""),
        now.date(),
    )
    await _settle_deficits(uow, key, transfer, variance, now.date())
    transfer.value_received, transfer.value_short = value_in, short
    await session.flush()
    data = (await _views(session, key, [transfer]))[0]
    emit(
        uow,
        company_id=key.company_id,
        warehouse_id=key.warehouse_id,
        types=["transfer.received"],
        data=data,
    )
    await _audit(uow, key, "received", transfer, {"value_received": data["value_received"]})
    return {"transfer_id": transfer.id, "transfer_status": "received", "data": data}


async def cancel_transfer(
    uow: UnitOfWork, key: AuthContext, ref: str, body: TransferCancelIn
) -> TransferStep:
    """The sender calls the goods back before the receiver took them in: every unit
    returns to the sender's stock, in its batch, at the cost it left with."""
    session = uow.session
    transfer = await _find(session, key, ref)
    if transfer.from_warehouse_id != key.warehouse_id:
        raise Unprocessable(
            f"stock transfer {transfer.id} is cancelled by the warehouse that sent it"
        )
    _refuse_closed(transfer)
    lines = await _lines(session, transfer)
    everything: dict[int, Decimal] = defaultdict(lambda: ZERO)
    for line in lines:
        everything[line.product_id] += line.quantity
    now = await _close(uow, key, transfer, "cancelled", body.reason)
    value_back, variance = await _take_in(
        uow, transfer, lines, everything, key.warehouse_id, "transfer_back", received=False
    )
    why = f": {body.reason}" if body.reason else ""
    await _post(
        uow,
        key,
        transfer,
        "transfer_cancel",
        {"cost": value_back},
        f"Stock transfer #{transfer.id} cancelled, stock back at cost{why}",
        now.date(),
    )
    await _settle_deficits(uow, key, transfer, variance, now.date())
    await session.flush()
    data = (await _views(session, key, [transfer]))[0]
    await _audit(uow, key, "cancelled", transfer, {"reason": body.reason})
    return {"transfer_id": transfer.id, "transfer_status": "cancelled", "data": data}
