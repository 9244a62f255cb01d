"""Promotions in the back office: create, end, pause, resume and archive them, each
change audited and moving the company's ``reference_version`` (so every process
prices the next sale by the new rules: ``orders/promotions.py`` keeps its copy per
version), and what the register's ``promotions`` feed sends.

The rule of a promotion is fixed at its creation (``models/promotions.py``): a
sale is priced by the rules in force at its moment, and an offline register's
queue may bring yesterday's sales in today.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal, cast

from pydantic import Field
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession
from typing_extensions import TypedDict

from tillbook.audit import setup_records
from tillbook.auth.context import AuthContext
from tillbook.errors import Conflict, invalid
from tillbook.kit import xid
from tillbook.kit.changes import Changes, Live, Walk, changes
from tillbook.kit.pagination import Page
from tillbook.kit.problems import Problems
from tillbook.kit.refs import ref_to_id
from tillbook.kit.shapes import DateStr, DateTimeStr, answer
from tillbook.models import Brand, Category, Product, Promotion, Warehouse
from tillbook.orders.lookup import reference_changed
from tillbook.promotions.schemas import PromotionIn

ENTITY = "promotion"


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


Kind = Literal["percent_off", "amount_off", "buy_x_get_y", "quantity_break", "bundle"]
AppliesTo = Literal["all", "products", "categories", "brands"]
Status = Literal["active", "paused", "archived"]


@answer
class PromotionItem(TypedDict):
    """A promotion as the engine reads it (``orders/promotions.py``): a register
    prices its baskets by exactly these fields."""

    id: int
    xid: str
    name: str
    kind: Annotated[
        Kind, Field(description="percent_off, amount_off, buy_x_get_y, quantity_break or bundle")
    ]
    warehouse_id: Annotated[int | None, Field(description="its one branch; null: every branch")]
    applies_to: Annotated[AppliesTo, Field(description="all, products, categories or brands")]
    targets: list[int]
    rule: Annotated[
        dict[str, Any],
        Field(
            description="the kind's parameters: percent; amount; buy, get, percent; "
            "tiers [{min_quantity, percent}]; items [{product_id, quantity}], price"
        ),
    ]
    starts_on: DateStr
    ends_on: DateStr | None
    weekdays: list[int]
    from_time: str | None
    until_time: str | None
    priority: int
    combines: bool
    status: Annotated[Status, Field(description="active, paused or archived")]
    states: Annotated[list[list[str]], Field(description="[instant, status] pairs, oldest first")]
    version: int
    archived_at: DateTimeStr | None


@answer
class PromotionChange(PromotionItem, Live):
    # A promotion in the register's feed (``feed``).
    pass


def view(p: Promotion) -> PromotionItem:
    """A promotion as the admin API, the back office and the register's feed show it:
    everything the engine reads, so the register prices a basket as the server does."""
    return {
        "id": p.id,
        "xid": xid.encode(p.id),
        "name": p.name,
        "kind": cast(Kind, p.kind),
        "warehouse_id": p.warehouse_id,
        "applies_to": cast(AppliesTo, p.applies_to),
        "targets": json.loads(p.targets or "[]"),
        "rule": json.loads(p.rule or "{}"),
        "starts_on": p.starts_on.isoformat(),
        "ends_on": p.ends_on.isoformat() if p.ends_on else None,
        "weekdays": [int(d) for d in p.weekdays],
        "from_time": p.from_time.strftime("%H:%M") if p.from_time else None,
        "until_time": p.until_time.strftime("%H:%M") if p.until_time else None,
        "priority": p.priority,
        "combines": p.combines,
        "status": cast(Status, p.status),
        "states": json.loads(p.states or "[]"),
        "version": p.version,
        "archived_at": setup_records.iso(p.archived_at),
    }


def _clock(value: str | None) -> dt.time | None:
    return dt.time.fromisoformat(value) if value is not None else None


def _audited(v: Mapping[str, Any]) -> dict[str, Any]:
    return {k: val for k, val in v.items() if k not in ("id", "xid", "version", "states")}


def _params(body: PromotionIn, problems: Problems) -> dict[str, Any]:
    """The kind's parameters, each required one present (a 422 naming it if not)."""

    def need(name: str, value: Any) -> Any:
        if value is None:
            problems.add(name, f"is required for a {body.kind} promotion")
        return value

    if body.kind == "percent_off":
        percent = need("percent", body.percent)
        if percent is not None and percent <= 0:
            problems.add("percent", "must be more than 0")
        return {"percent": str(percent)}
    if body.kind == "amount_off":
        amount = need("amount", body.amount)
        if amount is not None and amount <= 0:
            problems.add("amount", "must be more than 0")
        return {"amount": str(amount)}
    if body.kind == "buy_x_get_y":
        percent = body.percent if body.percent is not None else 100
        if percent <= 0:
            problems.add("percent", "must be more than 0 (100: the units given are free)")
        return {"buy": need("buy", body.buy), "get": need("get", body.get), "percent": str(percent)}
    if body.kind == "quantity_break":
        tiers = need("tiers", body.tiers) or []
        if body.tiers is not None and not tiers:
            problems.add("tiers", "needs at least one tier")
        seen: set[str] = set()
        for i, tier in enumerate(tiers):
            if tier.percent <= 0:
                problems.add(f"tiers.{i}.percent", "must be more than 0")
            key = str(tier.min_quantity.normalize())
            if key in seen:
                problems.add(f"tiers.{i}.min_quantity", f"a tier from {key} is given twice")
            seen.add(key)
        return {
            "tiers": [
                {"min_quantity": str(t.min_quantity), "percent": str(t.percent)} for t in tiers
            ]
        }
    items = need("items", body.items) or []
    need("price", body.price)
    if body.items is not None and not items:
        problems.add("items", "a bundle needs at least one product")
    return {
        "items": [{"product_id": i.product_id, "quantity": str(i.quantity)} for i in items],
        "price": str(body.price),
    }


async def _known(
    session: AsyncSession,
    company_id: int,
    model: type[Product] | type[Category] | type[Brand] | type[Warehouse],
    refs: Sequence[tuple[str, Any]],
    noun: str,
    problems: Problems,
) -> list[int]:
    """The ids of ``refs`` (field, ref), each one of the company's (live) records; a
    problem on its field for any other."""
    ids = [(f, r, ref_to_id(r)) for f, r in refs]
    wanted = {i for _f, _r, i in ids if i is not None}
    found: set[int] = set()
    if wanted:
        statement = select(model.id).where(model.company_id == company_id, model.id.in_(wanted))
        if model is not Warehouse:
            statement = statement.where(model.archived_at.is_(None))
        found = set((await session.scalars(statement)).all())
    out = []
    for f, r, i in ids:
        if i is None or i not in found:
            problems.add(f, f"no {noun} {r!r} in this company")
        else:
            out.append(i)
    return out


async def _checked(
    session: AsyncSession, company_id: int, body: PromotionIn
) -> tuple[dict[str, Any], list[int], int | None]:
    """The rule, its target ids and its branch, or one 422 naming every bad field."""
    problems = Problems()
    params = _params(body, problems)
    if body.ends_on is not None and body.ends_on < body.starts_on:
        problems.add("ends_on", f"{body.ends_on} is before starts_on ({body.starts_on})")
    if (body.from_time is None) != (body.until_time is None):
        problems.add(
            "until_time" if body.until_time is None else "from_time", "give both hours or neither"
        )
    elif (
        body.from_time is not None
        and body.until_time is not None
        and body.from_time >= body.until_time
    ):
        problems.add("until_time", f"{body.until_time} is not after from_time ({body.from_time})")
    if not body.weekdays:
        problems.add("weekdays", "needs at least one day")
    models: dict[str, tuple[Any, str]] = {
        "products": (Product, "product"),
        "categories": (Category, "category"),
        "brands": (Brand, "brand"),
    }
    targets: list[int] = []
    if body.kind == "bundle":
        if body.applies_to != "all" or body.targets:
            problems.add("targets", "a bundle names its products in items, not targets")
        refs = [(f"items.{i}.product_id", it.product_id) for i, it in enumerate(body.items or [])]
        ids = await _known(session, company_id, Product, refs, "product", problems)
        if len(set(ids)) != len(ids):
            problems.add("items", "names a product twice: give it one quantity")
        for item, product_id in zip(params["items"], ids, strict=False):
            item["product_id"] = product_id
    elif body.applies_to == "all":
        if body.targets:
            problems.add("targets", "applies_to all takes no targets")
    else:
        if not body.targets:
            problems.add("targets", f"name the {body.applies_to} it applies to")
        model, noun = models[body.applies_to]
        refs = [(f"targets.{i}", t) for i, t in enumerate(body.targets)]
        targets = sorted(set(await _known(session, company_id, model, refs, noun, problems)))
    branch = None
    if body.warehouse_id is not None:
        found = await _known(
            session,
            company_id,
            Warehouse,
            [("warehouse_id", body.warehouse_id)],
            "branch",
            problems,
        )
        branch = found[0] if found else None
    problems.raise_if_any()
    return params, targets, branch


async def create(
    session: AsyncSession, company_id: int, actor_id: int | None, body: PromotionIn
) -> Promotion:
    await reference_changed(session, company_id)
    params, targets, branch = await _checked(session, company_id, body)
    promotion = Promotion(
        company_id=company_id,
        warehouse_id=branch,
        name=body.name,
        kind=body.kind,
        applies_to="all" if body.kind == "bundle" else body.applies_to,
        targets=json.dumps(targets),
        rule=json.dumps(params),
        starts_on=body.starts_on,
        ends_on=body.ends_on,
        weekdays="".join(str(d) for d in sorted(set(body.weekdays))),
        from_time=_clock(body.from_time),
        until_time=_clock(body.until_time),
        priority=body.priority,
        combines=body.combines,
        status="active",
        states=json.dumps([[_now().isoformat(), "active"]]),
        created_by=actor_id,
    )
    session.add(promotion)
    await session.flush()
    await setup_records.created(
        session, promotion, actor_id=actor_id, entity_type=ENTITY, fields=_audited(view(promotion))
    )
    return promotion


async def _find(session: AsyncSession, company_id: int, id_: int, *, lock: bool) -> Promotion:
    return await setup_records.find(session, Promotion, company_id, id_, ENTITY, lock=lock)


async def edit(
    session: AsyncSession,
    company_id: int,
    actor_id: int | None,
    id_: int,
    expected_version: int | None,
    changes_: Mapping[str, Any],
) -> Promotion:
    """The name, or the last day: never before yesterday (UTC; today somewhere among
    the company's branches), since the sales already rung up were priced with the
    promotion running."""
    await reference_changed(session, company_id)
    today = dt.datetime.now(dt.UTC).date() - dt.timedelta(days=1)
    promotion = await _find(session, company_id, id_, lock=True)
    setup_records.check_version(promotion, expected_version, f"promotion {id_}")
    if "name" in changes_ and changes_["name"] is None:
        raise invalid("name", "must not be null")
    if "ends_on" in changes_:
        ends = changes_["ends_on"]
        if ends is not None and ends < promotion.starts_on:
            raise invalid("ends_on", f"{ends} is before starts_on ({promotion.starts_on})")
        if ends is not None and ends < today and ends != promotion.ends_on:
            raise invalid(
                "ends_on",
                f"{ends} is past: a promotion ends today at the earliest, so "
                "the sales already priced by it stay as they were",
            )
    before = _audited(view(promotion))
    if setup_records.apply(promotion, changes_):
        await setup_records.updated(
            session,
            promotion,
            actor_id=actor_id,
            entity_type=ENTITY,
            before=before,
            after=_audited(view(promotion)),
        )
    return promotion


async def set_state(
    session: AsyncSession,
    company_id: int,
    actor_id: int | None,
    id_: int,
    expected_version: int | None,
    status: str,
) -> Promotion:
    """Pause, resume or archive: the new state from now on, appended to its history."""
    await reference_changed(session, company_id)
    promotion = await _find(session, company_id, id_, lock=True)
    setup_records.check_version(promotion, expected_version, f"promotion {id_}")
    if promotion.status == "archived":
        raise Conflict(f"promotion {id_} is archived")
    if promotion.status == status:
        raise Conflict(f"promotion {id_} is already {status}")
    before = _audited(view(promotion))
    now = _now()
    promotion.status = status
    promotion.states = json.dumps(
        [*json.loads(promotion.states or "[]"), [now.isoformat(), status]]
    )
    if status == "archived":
        promotion.archived_at = now
    await setup_records.updated(
        session,
        promotion,
        actor_id=actor_id,
        entity_type=ENTITY,
        before=before,
        after=_audited(view(promotion)),
        action={"paused": "paused", "active": "resumed", "archived": "archived"}[status],
    )
    return promotion


async def page_of(
    session: AsyncSession, company_id: int, page: Page, include_archived: bool
) -> tuple[int, list[dict[str, Any]]]:
    total, rows = await setup_records.page_of(
        session,
        Promotion,
        company_id,
        page,
        include_archived=include_archived,
        order_by=[Promotion.starts_on.desc()],
    )
    # (the back office's editing resource reads plain dicts)
    return total, [dict(view(r)) for r in rows]


async def one_of(session: AsyncSession, company_id: int, id_: int) -> dict[str, Any]:
    return dict(view(await _find(session, company_id, id_, lock=False)))


async def feed(session: AsyncSession, key: AuthContext, walk: Walk) -> Changes[PromotionChange]:
    """The ``promotions`` change feed of a branch (its own and the company-wide ones):
    what a register prices its baskets by; archived ones as tombstones."""

    async def render(rows: Sequence[Sequence[Any]]) -> list[PromotionItem]:
        return [view(row[0]) for row in rows]

    return await changes(
        session,
        walk,
        select(Promotion).where(
            Promotion.company_id == key.company_id,
            (Promotion.warehouse_id.is_(None)) | (Promotion.warehouse_id == key.warehouse_id),
        ),
        Promotion.updated_at,
        Promotion.id,
        Promotion.archived_at.is_(None),
        render,
    )


async def branch_promotions(session: AsyncSession, key: AuthContext) -> list[PromotionItem]:
    """The branch's promotions that are not archived, oldest first."""
    rows = await session.scalars(
        select(Promotion)
        .where(
            Promotion.company_id == key.company_id,
            Promotion.archived_at.is_(None),
            (Promotion.warehouse_id.is_(None)) | (Promotion.warehouse_id == key.warehouse_id),
        )
        .order_by(Promotion.id)
    )
    return [view(p) for p in rows]


async def ids_by_name(
    session: AsyncSession, company_id: int, applies_to: str, names: Sequence[str]
) -> dict[str, int]:
    """The back office's way of naming targets: products by item code, categories
    and brands by name (without regard to case); what no live record bears is left
    out, for the form to name."""
    models: dict[str, tuple[type[Product] | type[Category] | type[Brand], Any]] = {
        "products": (Product, Product.item_code),
        "categories": (Category, Category.name),
        "brands": (Brand, Brand.name),
    }
    model, column = models[applies_to]
    wanted = {n.strip().lower() for n in names if n.strip()}
    if not wanted:
        return {}
    rows = await session.execute(
        select(func.lower(column), model.id).where(
            model.company_id == company_id,
            model.archived_at.is_(None),
            func.lower(column).in_(wanted),
        )
    )
    return {name: id_ for name, id_ in rows.all()}
