"""Stocktakes: a count sheet per branch, counted quantities, differences posted as
stock adjustments.

The life of a count::

    start (a sheet: every listed product, a category, or a chosen list) ──> draft
    draft ── enter counts (typed, or scanned: +1 on the product's line) ──> draft
    draft ── post ──> posted      (each difference is one stock adjustment)
    draft ── cancel ──> cancelled (nothing moved)

A draft is stored (``stock_counts``, ``stock_count_lines``), so a count in progress
survives a reload, a second device and a restart.

**What a difference is measured against.** Counting a shop takes hours and the
till keeps selling. Each line keeps ``expected``: the branch's book stock at the
moment its counted quantity was entered (taken again whenever it is changed). The
difference posted is ``counted - expected``, added to (or taken from) the stock
*at posting*. So a unit sold after its shelf was counted is neither counted as a
loss nor found again: the sale took it from the books, the adjustment corrects
only what the count found wrong. (Measured at posting instead, every sale between
counting and posting would show as a gain.) What cannot be told apart is a sale
between counting a shelf and typing its figure in; a shop that counts on paper
types the figures in promptly, or pauses the till for that shelf. A line left
blank was not counted and changes nothing; to record that nothing is there, count
0.

**Posting** is one unit of work: the count leaves ``draft`` with a guarded update
(a second post, or an entry racing it, finds it gone: 409), then each difference
goes through ``inventory.adjustments`` exactly as ``POST /stock-adjustments``
would (a gain is an ``add`` at the listing's purchase price, Dr 11700 / Cr 51100;
a loss a ``subtract`` at FIFO cost, Dr 51100 / Cr 11700; movements and events as
the API's), each audited, and the count audited once. A line that cannot be
adjusted (stock short when negative stock is not allowed, the product no longer
listed) refuses the whole count with every such line named, and nothing is
written.

The preview costs each difference as posting would: a gain at the purchase price,
a loss by FIFO over the open batches as they stand (an estimate; posting draws on
the batches as they are then).
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any, Literal, get_args

from sqlalchemy import and_, func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.audit.service import record
from tillbook.errors import Conflict, NotFound, ValidationFailed, invalid
from tillbook.inventory.adjustments import adjust_as_staff, quantity_str, utc_iso
from tillbook.inventory.fifo import Layer, allocate
from tillbook.inventory.schemas import (
    MAX_COUNT_LINES,
    StockAdjustmentIn,
    StockCountEntriesIn,
    StockCountIn,
)
from tillbook.kit.money import ZERO, line_cost, money_str
from tillbook.kit.pagination import Page, envelope
from tillbook.kit.refs import ref_to_id
from tillbook.models import (
    Category,
    Listing,
    Product,
    ProductBarcode,
    StockAdjustment,
    StockBatch,
    StockCount,
    StockCountLine,
    User,
    Warehouse,
)
from tillbook.unit import UnitOfWork

SOURCE = "stock_count"
# A count's states; the list's ``status`` filter takes one of them (the API
# document's enum is this type's values).
CountStatus = Literal["draft", "posted", "cancelled"]
STATUSES: tuple[str, ...] = get_args(CountStatus)


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


async def warehouse_of(session: AsyncSession, company_id: int, count_id: int) -> int:
    """The branch a count belongs to (for the caller's permission check); another
    company's count is not found."""
    found = (
        await session.execute(
            select(StockCount.warehouse_id).where(
                StockCount.id == count_id, StockCount.company_id == company_id
            )
        )
    ).scalar_one_or_none()
    if found is None:
        raise NotFound(f"stock count {count_id} not found")
    return int(found)


async def _listed(
    session: AsyncSession, company_id: int, warehouse_id: int, product_ids: list[int] | None
) -> dict[int, Listing]:
    """The branch's listings of live products, by product id (all, or those asked)."""
    stmt = (
        select(Listing)
        .join(
            Product, (Product.id == Listing.product_id) & (Product.company_id == Listing.company_id)
        )
        .where(
            Listing.company_id == company_id,
            Listing.warehouse_id == warehouse_id,
            Product.archived_at.is_(None),
        )
    )
    if product_ids is not None:
        stmt = stmt.where(Listing.product_id.in_(product_ids))
    return {row.product_id: row for row in (await session.execute(stmt)).scalars()}


async def start_count(
    session: AsyncSession, company_id: int, actor_id: int, body: StockCountIn
) -> dict[str, Any]:
    """A new draft count sheet. The caller has checked ``stock.write`` for the
    branch."""
    warehouse_id = ref_to_id(body.warehouse_id)
    warehouse = (
        None
        if warehouse_id is None
        else await session.scalar(
            select(Warehouse).where(
                Warehouse.company_id == company_id, Warehouse.id == warehouse_id
            )
        )
    )
    if warehouse is None:
        raise invalid("warehouse_id", f"unknown branch {body.warehouse_id!r}")
    category_id: int | None = None
    wanted: list[int] | None = None
    if body.scope == "category":
        category_id = ref_to_id(body.category_id)
        category = (
            None
            if category_id is None
            else await session.scalar(
                select(Category).where(
                    Category.company_id == company_id, Category.id == category_id
                )
            )
        )
        if category is None:
            raise invalid("category_id", "choose a category")
    elif body.scope == "list":
        refs = body.product_ids or []
        wanted = []
        for ref in refs:
            pid = ref_to_id(ref)
            if pid is None:
                raise invalid("product_ids", f"unknown product {ref!r}")
            wanted.append(pid)
        for code in body.item_codes or []:
            found = await _find_code(session, company_id, code)
            if found is None:
                raise invalid("item_codes", f"no product has the code {code!r}")
            wanted.append(found)
        if not wanted:
            raise invalid("product_ids", "name at least one product (item code or barcode)")
    listed = await _listed(session, company_id, warehouse.id, wanted)
    if wanted is not None:
        missing = [str(p) for p in wanted if p not in listed]
        if missing:
            raise invalid(
                "product_ids", f"not listed in {warehouse.name}: product {', '.join(missing)}"
            )
    if category_id is not None:
        in_category = set(
            (
                await session.execute(
                    select(Product.id).where(
                        Product.company_id == company_id, Product.category_id == category_id
                    )
                )
            ).scalars()
        )
        listed = {p: li for p, li in listed.items() if p in in_category}
        if not listed:
            raise invalid("category_id", f"{warehouse.name} lists no product of this category")
    if len(listed) > MAX_COUNT_LINES:
        raise invalid(
            "scope",
            f"{len(listed)} products is more than one sheet holds ({MAX_COUNT_LINES}); "
            "count a category at a time",
        )
    count = StockCount(
        company_id=company_id,
        warehouse_id=warehouse.id,
        status="draft",
        scope=body.scope,
        category_id=category_id,
        notes=body.notes or "",
        value_gain=ZERO,
        value_loss=ZERO,
        lines_adjusted=0,
        created_by=actor_id,
        created_at=_now(),
    )
    session.add(count)
    await session.flush()
    order = wanted if wanted is not None else sorted(listed)
    session.add_all(
        StockCountLine(
            company_id=company_id,
            count_id=count.id,
            product_id=pid,
            difference=ZERO,
            cost_amount=ZERO,
        )
        for pid in dict.fromkeys(order)
    )
    await session.flush()
    await record(
        session,
        company_id=company_id,
        actor_id=actor_id,
        action="stock_count.started",
        entity_type=SOURCE,
        entity_id=count.id,
        after={
            "warehouse_id": warehouse.id,
            "scope": body.scope,
            "category_id": category_id,
            "lines": len(listed),
        },
    )
    return {"status": "success", "count_id": count.id, "lines": len(listed)}


async def _hold_draft(session: AsyncSession, company_id: int, count_id: int) -> StockCount:
    """The count, still a draft, its row held to the end of the unit (a touching
    update: a post or a second entry waits for this one), else 409."""
    count = await session.scalar(
        select(StockCount).where(StockCount.company_id == company_id, StockCount.id == count_id)
    )
    if count is None:
        raise NotFound(f"stock count {count_id} not found")
    done = await session.execute(
        update(StockCount)
        .where(
            StockCount.company_id == company_id,
            StockCount.id == count_id,
            StockCount.status == "draft",
        )
        .values(status="draft")
        .execution_options(synchronize_session=False)
    )
    if getattr(done, "rowcount", 0) != 1:
        await session.refresh(count)
        raise Conflict(f"stock count {count_id} is {count.status}; only a draft changes")
    return count


async def _find_code(session: AsyncSession, company_id: int, code: str) -> int | None:
    """The product a scanned barcode (or a typed item code) names."""
    code = code.strip()
    found = (
        await session.execute(
            select(Product.id).where(
                Product.company_id == company_id,
                Product.archived_at.is_(None),
                or_(
                    Product.item_code == code,
                    Product.id.in_(
                        select(ProductBarcode.product_id).where(
                            ProductBarcode.company_id == company_id,
                            ProductBarcode.barcode == code,
                        )
                    ),
                ),
            )
        )
    ).scalars()
    ids = list(found)
    return ids[0] if len(ids) == 1 else None


async def enter_counts(
    session: AsyncSession,
    company_id: int,
    count_id: int,
    actor_id: int,
    body: StockCountEntriesIn,
) -> dict[str, Any]:
    """Counted quantities typed in (``items``), then one scan (``barcode``). Each
    quantity that changes takes the book stock of that moment as its ``expected``
    (see the module). Every entry is checked before anything is written; the
    answer names the product a scan landed on (``focus``), for the sheet to
    bring its line into view."""
    count = await _hold_draft(session, company_id, count_id)
    lines = {
        line.product_id: line
        for line in (
            await session.execute(
                select(StockCountLine).where(
                    StockCountLine.company_id == company_id, StockCountLine.count_id == count_id
                )
            )
        ).scalars()
    }
    errors: dict[str, list[str]] = {}
    entries: dict[int, Decimal | None] = {}
    for item in body.items:
        pid = ref_to_id(item.product_id)
        if pid is None or pid not in lines:
            errors.setdefault(f"qty-{item.product_id}", []).append("not on this count sheet")
            continue
        entries[pid] = item.counted
    focus: int | None = None
    if body.barcode is not None:
        focus = await _find_code(session, company_id, body.barcode)
        if focus is None:
            errors.setdefault("barcode", []).append(f"no product has the code {body.barcode!r}")
        elif focus not in lines and focus not in await _listed(
            session, company_id, count.warehouse_id, [focus]
        ):
            errors.setdefault("barcode", []).append(
                f"the product with the code {body.barcode!r} is not listed in this branch"
            )
    if errors:
        raise ValidationFailed(errors)
    if focus is not None:
        if focus not in lines:
            line = StockCountLine(
                company_id=company_id,
                count_id=count_id,
                product_id=focus,
                difference=ZERO,
                cost_amount=ZERO,
            )
            session.add(line)
            lines[focus] = line
        typed = entries.get(focus, lines[focus].counted)
        entries[focus] = (typed or ZERO) + 1
    changed = {p: q for p, q in entries.items() if q != lines[p].counted}
    stock = {
        p: li.current_stock
        for p, li in (await _listed(session, company_id, count.warehouse_id, list(changed))).items()
    }
    now = _now()
    for pid, counted in changed.items():
        line = lines[pid]
        line.counted = counted
        line.expected = None if counted is None else stock.get(pid, ZERO)
        line.counted_at = None if counted is None else now
    await session.flush()
    if changed:
        await record(
            session,
            company_id=company_id,
            actor_id=actor_id,
            action="stock_count.counted",
            entity_type=SOURCE,
            entity_id=count_id,
            after={
                str(p): {
                    "counted": None if q is None else quantity_str(q),
                    "expected": None if q is None else quantity_str(stock.get(p, ZERO)),
                }
                for p, q in changed.items()
            },
        )
    return {"status": "success", "count_id": count_id, "changed": len(changed), "focus": focus}


async def post_count(
    uow: UnitOfWork, company_id: int, count_id: int, actor_id: int
) -> dict[str, Any]:
    """Every counted difference as a stock adjustment, in this one unit of work (see
    the module). The caller has checked ``stock.write`` for the count's branch."""
    session = uow.session
    count = await session.scalar(
        select(StockCount).where(StockCount.company_id == company_id, StockCount.id == count_id)
    )
    if count is None:
        raise NotFound(f"stock count {count_id} not found")
    moved = await session.execute(
        update(StockCount)
        .where(
            StockCount.company_id == company_id,
            StockCount.id == count_id,
            StockCount.status == "draft",
        )
        .values(status="posted", closed_by=actor_id, closed_at=_now())
        .execution_options(synchronize_session=False)
    )
    if getattr(moved, "rowcount", 0) != 1:
        await session.refresh(count)
        raise Conflict(f"stock count {count_id} is {count.status}; only a draft is posted")
    lines = list(
        (
            await session.execute(
                select(StockCountLine)
                .where(
                    StockCountLine.company_id == company_id,
                    StockCountLine.count_id == count_id,
                    StockCountLine.counted.is_not(None),
                )
                .order_by(StockCountLine.product_id)
            )
        ).scalars()
    )
    if not lines:
        raise invalid("count", "nothing is counted yet: enter a quantity on at least one line")
    errors: dict[str, list[str]] = {}
    gain = loss = ZERO
    adjusted = 0
    for line in lines:
        assert line.counted is not None
        diff = line.counted - (line.expected or ZERO)
        line.difference = diff
        if diff == 0:
            continue
        body = StockAdjustmentIn(
            product_id=line.product_id,
            quantity=abs(diff),
            adjustment_type="add" if diff > 0 else "subtract",
            notes=f"Stocktake #{count_id}",
        )
        try:
            done = await adjust_as_staff(uow, company_id, count.warehouse_id, actor_id, body)
        except ValidationFailed as exc:
            errors[f"qty-{line.product_id}"] = [m for ms in exc.errors.values() for m in ms]
            continue
        line.adjustment_id = int(done["adjustment_id"])
        line.cost_amount = await _adjustment_cost(session, line.adjustment_id, line.company_id)
        if diff > 0:
            gain += line.cost_amount
        else:
            loss += line.cost_amount
        adjusted += 1
    if errors:
        raise ValidationFailed(errors)
    await session.execute(
        update(StockCount)
        .where(StockCount.company_id == company_id, StockCount.id == count_id)
        .values(value_gain=gain, value_loss=loss, lines_adjusted=adjusted)
        .execution_options(synchronize_session=False)
    )
    await session.flush()
    await record(
        session,
        company_id=company_id,
        actor_id=actor_id,
        action="stock_count.posted",
        entity_type=SOURCE,
        entity_id=count_id,
        after={
            "warehouse_id": count.warehouse_id,
            "lines_counted": len(lines),
            "lines_adjusted": adjusted,
            "value_gain": money_str(gain),
            "value_loss": money_str(loss),
        },
    )
    return {
        "status": "success",
        "count_id": count_id,
        "lines_adjusted": adjusted,
        "value_gain": money_str(gain),
        "value_loss": money_str(loss),
    }


async def _adjustment_cost(session: AsyncSession, adjustment_id: int, company_id: int) -> Decimal:
    adj = await session.get(StockAdjustment, (adjustment_id, company_id))
    assert adj is not None
    return adj.cost_amount


async def cancel_count(
    session: AsyncSession, company_id: int, count_id: int, actor_id: int
) -> dict[str, Any]:
    """A draft dropped: nothing moves; the sheet stays readable."""
    await _hold_draft(session, company_id, count_id)
    await session.execute(
        update(StockCount)
        .where(StockCount.company_id == company_id, StockCount.id == count_id)
        .values(status="cancelled", closed_by=actor_id, closed_at=_now())
        .execution_options(synchronize_session=False)
    )
    await record(
        session,
        company_id=company_id,
        actor_id=actor_id,
        action="stock_count.cancelled",
        entity_type=SOURCE,
        entity_id=count_id,
    )
    return {"status": "success", "count_id": count_id}


# --- reading ---------------------------------------------------------------------------


def _estimate(
    diff: Decimal, purchase_price: Decimal, layers: list[Layer], product_id: int
) -> Decimal:
    """A difference at cost as posting would take it (see the module)."""
    if diff > 0:
        return line_cost(diff, purchase_price)
    if diff == 0:
        return ZERO
    allocation, _left = allocate(product_id, layers, -diff, deficit_cost=purchase_price)
    return allocation.cost


async def count_detail(session: AsyncSession, company_id: int, count_id: int) -> dict[str, Any]:
    """The sheet: each line with what was counted, the book stock it is measured
    against, the difference and its cost (as posted, or as posting would take it
    now), and the stock the line leaves; the totals."""
    count = await session.scalar(
        select(StockCount).where(StockCount.company_id == company_id, StockCount.id == count_id)
    )
    if count is None:
        raise NotFound(f"stock count {count_id} not found")
    rows = (
        await session.execute(
            select(StockCountLine, Product, Listing)
            .join(
                Product,
                (Product.id == StockCountLine.product_id)
                & (Product.company_id == StockCountLine.company_id),
            )
            .outerjoin(
                Listing,
                and_(
                    Listing.product_id == StockCountLine.product_id,
                    Listing.company_id == StockCountLine.company_id,
                    Listing.warehouse_id == count.warehouse_id,
                ),
            )
            .where(StockCountLine.company_id == company_id, StockCountLine.count_id == count_id)
            .order_by(Product.name, Product.id)
        )
    ).all()
    draft = count.status == "draft"
    layers: dict[int, list[Layer]] = {}
    if draft:
        short = [
            line.product_id
            for line, _p, listing in rows
            if line.counted is not None
            and listing is not None
            and line.counted < (line.expected or ZERO)
        ]
        if short:
            today = dt.date.today()
            for b in (
                await session.execute(
                    select(StockBatch).where(
                        StockBatch.company_id == company_id,
                        StockBatch.warehouse_id == count.warehouse_id,
                        StockBatch.product_id.in_(short),
                        StockBatch.quantity_remaining > 0,
                    )
                )
            ).scalars():
                layers.setdefault(b.product_id, []).append(
                    Layer(
                        b.id,
                        b.unit_cost,
                        b.quantity_remaining,
                        b.value_remaining,
                        expired=b.expiry_date is not None and b.expiry_date < today,
                    )
                )
    lines: list[dict[str, Any]] = []
    gain = loss = ZERO
    counted_n = 0
    for line, product, listing in rows:
        stock = listing.current_stock if listing is not None else ZERO
        diff: Decimal | None = None
        cost: Decimal | None = None
        if line.counted is not None:
            counted_n += 1
            if draft:
                diff = line.counted - (line.expected or ZERO)
                price = listing.purchase_price if listing is not None else ZERO
                cost = _estimate(diff, price, layers.get(product.id, []), product.id)
            else:
                diff, cost = line.difference, line.cost_amount
            if diff > 0:
                gain += cost
            elif diff < 0:
                loss += cost
        lines.append(
            {
                "product_id": product.id,
                "name": product.name,
                "item_code": product.item_code,
                "barcode": product.barcode,
                "counted": None if line.counted is None else quantity_str(line.counted),
                "expected": None if line.expected is None else quantity_str(line.expected),
                "counted_at": None if line.counted_at is None else utc_iso(line.counted_at),
                "book_stock": quantity_str(stock),
                "difference": None if diff is None else quantity_str(diff),
                "cost": None if cost is None else money_str(cost),
                "stock_after": (quantity_str(stock + diff) if draft and diff is not None else None),
                "adjustment_id": line.adjustment_id,
            }
        )
    names = dict(
        (
            await session.execute(
                select(User.id, User.name).where(
                    User.company_id == company_id,
                    User.id.in_([u for u in (count.created_by, count.closed_by) if u]),
                )
            )
        ).all()
    )
    warehouse = await session.scalar(
        select(Warehouse).where(
            Warehouse.company_id == count.company_id, Warehouse.id == count.warehouse_id
        )
    )
    return {
        "id": count.id,
        "warehouse_id": count.warehouse_id,
        "warehouse_name": warehouse.name if warehouse is not None else "",
        "status": count.status,
        "scope": count.scope,
        "category_id": count.category_id,
        "notes": count.notes,
        "created_at": utc_iso(count.created_at),
        "created_by": names.get(count.created_by or 0),
        "closed_at": None if count.closed_at is None else utc_iso(count.closed_at),
        "closed_by": names.get(count.closed_by or 0),
        "lines": lines,
        "summary": {
            "lines": len(lines),
            "counted": counted_n,
            "uncounted": len(lines) - counted_n,
            "gain": money_str(gain),
            "loss": money_str(loss),
            "net": money_str(gain - loss),
            "lines_adjusted": count.lines_adjusted,
        },
    }


async def counts_page(
    session: AsyncSession,
    company_id: int,
    warehouse_ids: list[int],
    page: Page,
    status: str | None = None,
) -> dict[str, Any]:
    """The branches' counts, newest first; ``status`` one of ``STATUSES`` (another
    value is a 422 naming it, not a filter silently dropped)."""
    where = [StockCount.company_id == company_id, StockCount.warehouse_id.in_(warehouse_ids)]
    if status is not None:
        if status not in STATUSES:
            raise invalid("status", f"must be one of {', '.join(STATUSES)}")
        where.append(StockCount.status == status)
    total = (
        await session.execute(select(func.count()).select_from(StockCount).where(*where))
    ).scalar_one()
    rows: list[dict[str, Any]] = []
    if page.offset < total:
        lines = (
            select(
                StockCountLine.count_id,
                func.count().label("n"),
                func.count(StockCountLine.counted).label("counted"),
            )
            .where(StockCountLine.company_id == company_id)
            .group_by(StockCountLine.count_id)
            .subquery()
        )
        result = await session.execute(
            select(StockCount, lines.c.n, lines.c.counted)
            .outerjoin(lines, lines.c.count_id == StockCount.id)
            .where(*where)
            .order_by(StockCount.id.desc())
            .offset(page.offset)
            .limit(page.limit)
        )
        rows = [
            {
                "id": c.id,
                "warehouse_id": c.warehouse_id,
                "status": c.status,
                "scope": c.scope,
                "notes": c.notes,
                "lines": int(n or 0),
                "counted": int(counted or 0),
                "value_gain": money_str(c.value_gain),
                "value_loss": money_str(c.value_loss),
                "created_at": utc_iso(c.created_at),
                "closed_at": None if c.closed_at is None else utc_iso(c.closed_at),
            }
            for c, n, counted in result
        ]
    return envelope(page, total, rows)
