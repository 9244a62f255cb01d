"""The promotion engine (DESIGN §18): which promotions price a basket, and what each
takes off which line. One engine for ``POST /sales/preview``, ``POST /sales`` and
the admin API; the register runs the same rules in the browser
(``web/register/js/promotions.js``, tested against the preview over random
baskets), so every rule here is exact arithmetic with one rounding, half up to
the cent, like the rest of DESIGN §3.

A line's discount is worked out on its amount on the price as given, after its own
discount rate (``kit.money.line_base``): tax is split out or added afterwards on
what is left, so a promotion lowers the tax with the price.

The kinds and their parameters (``rule``, a JSON object):

- ``percent_off`` ``{"percent"}``: that share off every line it applies to.
- ``amount_off`` ``{"amount"}``: that much off each unit (never below zero).
- ``buy_x_get_y`` ``{"buy", "get", "percent"}``: of the whole units it applies to,
  every ``buy + get`` give ``get`` at ``percent`` off (100: free), the cheapest
  units first.
- ``quantity_break`` ``{"tiers": [{"min_quantity", "percent"}]}``: when the lines
  it applies to hold at least a tier's quantity together, the highest such tier's
  share off each of them.
- ``bundle`` ``{"items": [{"product_id", "quantity"}], "price"}``: every complete
  set of those products for ``price``; the saving is spread over the set's lines
  in proportion to their value, the last cent on the last.

A line takes one promotion at most: promotions are tried highest ``priority``
first (then oldest), and each claims the lines it counted. Promotions that do not
``combine`` are each tried alone against the combinable ones together, and the
answer that takes most off the basket wins (the customer's best; on a tie, the
combinable ones, then priority).

Whether a promotion is in force is a matter of the sale's moment: its branch, its
dates, weekdays and hours on the branch's clock (its time zone), and its state then (paused
and resumed promotions keep the history of their states).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.kit.money import ZERO
from tillbook.kit.refcache import ReferenceCache
from tillbook.models import Category, Promotion, Warehouse

KINDS = ("percent_off", "amount_off", "buy_x_get_y", "quantity_break", "bundle")
TARGETS = ("all", "products", "categories", "brands")


@dataclass(frozen=True)
class Rule:
    """A promotion as the engine reads it (and as the ``promotions`` feed sends it)."""

    id: int
    name: str
    kind: str
    applies_to: str
    targets: frozenset[int]
    params: Mapping[str, Any]
    warehouse_id: int | None
    starts_on: dt.date
    ends_on: dt.date | None
    weekdays: str
    from_time: dt.time | None
    until_time: dt.time | None
    priority: int
    combines: bool
    # (instant, status) oldest first: the state at a moment is the last one before it.
    states: tuple[tuple[dt.datetime, str], ...]


@dataclass(frozen=True)
class Item:
    """One line of a basket: what the rules look at."""

    index: int
    product_id: int
    # The product's category and every category above it: a promotion on "Drinks"
    # prices the juice filed under "Drinks › Juice".
    categories: tuple[int, ...]
    brand_id: int | None
    quantity: Decimal
    # The line on the price as given, after its own discount rate (``line_base``).
    amount: Decimal


@dataclass(frozen=True)
class Applied:
    """What one promotion took off one line."""

    promotion_id: int
    name: str
    off: Decimal


def _utc(at: dt.datetime) -> dt.datetime:
    return at if at.tzinfo is not None else at.replace(tzinfo=dt.UTC)


def rule_of(row: Promotion) -> Rule:
    return Rule(
        id=row.id,
        name=row.name,
        kind=row.kind,
        applies_to=row.applies_to,
        targets=frozenset(int(t) for t in json.loads(row.targets or "[]")),
        params=json.loads(row.rule or "{}"),
        warehouse_id=row.warehouse_id,
        starts_on=row.starts_on,
        ends_on=row.ends_on,
        weekdays=row.weekdays,
        from_time=row.from_time,
        until_time=row.until_time,
        priority=row.priority,
        combines=row.combines,
        states=tuple(
            (_utc(dt.datetime.fromisoformat(at)), status)
            for at, status in json.loads(row.states or "[]")
        ),
    )


def state_at(rule: Rule, instant: dt.datetime) -> str:
    """The promotion's state at ``instant``: the last change at or before it; before
    its first, the first (a promotion created today prices a sale rung up offline
    this morning on its dates and hours: its dates say when it runs)."""
    current = rule.states[0][1] if rule.states else "active"
    for at, status in rule.states:
        if at <= instant:
            current = status
        else:
            break
    return current


def in_force(rule: Rule, warehouse_id: int, local: dt.datetime, instant: dt.datetime) -> bool:
    """Whether ``rule`` prices a sale of ``warehouse_id`` rung up at ``instant`` (UTC),
    ``local`` being the same moment in the company's time zone."""
    if rule.warehouse_id is not None and rule.warehouse_id != warehouse_id:
        return False
    day = local.date()
    if day < rule.starts_on or (rule.ends_on is not None and day > rule.ends_on):
        return False
    if str(local.isoweekday()) not in rule.weekdays:
        return False
    if rule.from_time is not None and rule.until_time is not None:
        t = local.time().replace(tzinfo=None)
        if not rule.from_time <= t < rule.until_time:
            return False
    return state_at(rule, instant) == "active"


# --- the arithmetic -------------------------------------------------------------


def cents(value: Fraction) -> Decimal:
    """``value`` (≥ 0) rounded half up to the cent, exactly."""
    n = (value * 100 + Fraction(1, 2)).__floor__()
    return Decimal(n).scaleb(-2)


def _frac(value: Any) -> Fraction:
    return Fraction(Decimal(str(value)))


def _eligible(rule: Rule, item: Item) -> bool:
    if rule.applies_to == "all":
        return True
    if rule.applies_to == "categories":
        return any(c in rule.targets for c in item.categories)
    ref = {"products": item.product_id, "brands": item.brand_id}.get(rule.applies_to)
    return ref is not None and ref in rule.targets


def _offs(rule: Rule, pool: Sequence[Item]) -> tuple[dict[int, Decimal], set[int]]:
    """What ``rule`` takes off the lines of ``pool`` (by line index), and the lines it
    counted (claimed even where it took nothing: the units a customer bought to get
    the free one)."""
    p = rule.params
    if rule.kind == "percent_off":
        share = _frac(p["percent"]) / 100
        return {i.index: cents(_frac(i.amount) * share) for i in pool}, {i.index for i in pool}
    if rule.kind == "amount_off":
        each = _frac(p["amount"])
        offs = {i.index: min(i.amount, cents(each * _frac(i.quantity))) for i in pool}
        return offs, {i.index for i in pool}
    if rule.kind == "quantity_break":
        held = sum((i.quantity for i in pool), Decimal(0))
        reached = [t for t in p["tiers"] if Decimal(str(t["min_quantity"])) <= held]
        if not reached:
            return {}, set()
        tier = max(reached, key=lambda t: Decimal(str(t["min_quantity"])))
        share = _frac(tier["percent"]) / 100
        return {i.index: cents(_frac(i.amount) * share) for i in pool}, {i.index for i in pool}
    if rule.kind == "buy_x_get_y":
        return _buy_get(p, pool)
    if rule.kind == "bundle":
        return _bundle(p, pool)
    raise ValueError(f"unknown promotion kind {rule.kind!r}")


def _buy_get(p: Mapping[str, Any], pool: Sequence[Item]) -> tuple[dict[int, Decimal], set[int]]:
    whole = [(i, int(i.quantity)) for i in pool if i.quantity >= 1]
    group = int(p["buy"]) + int(p["get"])
    given = sum(n for _i, n in whole) // group * int(p["get"])
    if given == 0:
        return {}, set()
    share = _frac(p["percent"]) / 100
    offs: dict[int, Decimal] = {}
    # The cheapest units go first: by unit value, then line order.
    for item, n in sorted(
        whole, key=lambda w: (_frac(w[0].amount) / _frac(w[0].quantity), w[0].index)
    ):
        if given == 0:
            break
        k = min(n, given)
        given -= k
        offs[item.index] = cents(_frac(item.amount) * k / _frac(item.quantity) * share)
    return offs, {i.index for i, _n in whole}


def _bundle(p: Mapping[str, Any], pool: Sequence[Item]) -> tuple[dict[int, Decimal], set[int]]:
    wanted = [(int(x["product_id"]), _frac(x["quantity"])) for x in p["items"]]
    sets: int | None = None
    for product_id, quantity in wanted:
        held = sum((_frac(i.quantity) for i in pool if i.product_id == product_id), Fraction(0))
        n = (held / quantity).__floor__()
        sets = n if sets is None else min(sets, n)
    if not sets:
        return {}, set()
    parts: list[tuple[Item, Fraction]] = []  # (line, value of the units it gives the sets)
    for product_id, quantity in wanted:
        need = quantity * sets
        for item in pool:
            if item.product_id != product_id or need <= 0:
                continue
            take = min(_frac(item.quantity), need)
            need -= take
            parts.append((item, _frac(item.amount) * take / _frac(item.quantity)))
    value = sum((v for _i, v in parts), Fraction(0))
    price = _frac(p["price"]) * sets
    if value <= price:
        return {}, set()
    saving = cents(value - price)
    parts.sort(key=lambda part: part[0].index)
    offs: dict[int, Decimal] = {}
    running, given = Fraction(0), ZERO
    for item, v in parts:
        running += v
        upto = cents(_frac(saving) * running / value)
        offs[item.index] = offs.get(item.index, ZERO) + upto - given
        given = upto
    return offs, {i.index for i, _v in parts}


def _run(rules: Sequence[Rule], items: Sequence[Item]) -> dict[int, Applied]:
    claimed: set[int] = set()
    applied: dict[int, Applied] = {}
    for rule in rules:
        pool = [i for i in items if i.index not in claimed and i.amount > 0 and _eligible(rule, i)]
        if not pool:
            continue
        offs, counted = _offs(rule, pool)
        if not any(off > 0 for off in offs.values()):
            continue
        claimed |= counted
        for index, off in offs.items():
            if off > 0:
                applied[index] = Applied(rule.id, rule.name, off)
    return applied


def apply(rules: Iterable[Rule], items: Sequence[Item]) -> dict[int, Applied]:
    """What the promotions in force take off which line (by ``Item.index``)."""
    ordered = sorted(rules, key=lambda r: (-r.priority, r.id))
    if not ordered:
        return {}
    candidates = [_run([r for r in ordered if r.combines], items)]
    candidates += [_run([r], items) for r in ordered if not r.combines]
    best, best_total = candidates[0], sum((a.off for a in candidates[0].values()), ZERO)
    for candidate in candidates[1:]:
        total = sum((a.off for a in candidate.values()), ZERO)
        if total > best_total:
            best, best_total = candidate, total
    return best


# --- the company's promotions, cached by reference version ---------------------------


async def _load(session: AsyncSession, company_id: int) -> dict[int, Rule]:
    rows = await session.scalars(
        select(Promotion).where(Promotion.company_id == company_id, Promotion.archived_at.is_(None))
    )
    return {row.id: rule_of(row) for row in rows}


# Every change of a promotion bumps the company's ``reference_version`` (the
# promotions service calls ``lookup.reference_changed``), so a copy older than the
# version the request's key read is never served (``kit/refcache.py``).
_COMPANY_PROMOTIONS: ReferenceCache[int, Rule] = ReferenceCache(_load, keep_empty=True)


async def _load_parents(session: AsyncSession, company_id: int) -> dict[int, int | None]:
    rows = await session.execute(
        select(Category.id, Category.parent_id).where(Category.company_id == company_id)
    )
    return {id_: parent for id_, parent in rows.all()}


# Category edits move the company's reference version too (``catalog.reference``).
_CATEGORY_PARENTS: ReferenceCache[int, int | None] = ReferenceCache(_load_parents, keep_empty=True)


async def category_paths(
    session: AsyncSession, company_id: int, version: int | None
) -> dict[int, tuple[int, ...]]:
    """Each category with the ones above it, nearest first (a cycle, which the
    catalog refuses, would stop at the first repeat)."""
    parents = await _CATEGORY_PARENTS.get(session, company_id, version=version)
    paths: dict[int, tuple[int, ...]] = {}
    for start in parents:
        path: list[int] = []
        at: int | None = start
        while at is not None and at not in path:
            path.append(at)
            at = parents.get(at)
        paths[start] = tuple(path)
    return paths


async def company_rules(session: AsyncSession, company_id: int, version: int | None) -> list[Rule]:
    """The company's promotions that are not archived (in force or not)."""
    return list((await _COMPANY_PROMOTIONS.get(session, company_id, version=version)).values())


def moment(
    order_date: dt.date, order_datetime: dt.datetime | None, zone: dt.tzinfo, now: dt.datetime
) -> tuple[dt.datetime, dt.datetime]:
    """(local, UTC) moment a sale is priced at: its date-time when it has one; a
    date alone is taken now when it is today on the branch's clock, else at the end
    of that day (it cannot show it fell in a promotion's hours)."""
    if order_datetime is not None:
        instant = _utc(order_datetime)
        return instant.astimezone(zone), instant
    local_now = now.astimezone(zone)
    if local_now.date() == order_date:
        return local_now, local_now.astimezone(dt.UTC)
    local = dt.datetime.combine(order_date, dt.time(23, 59, 59), tzinfo=zone)
    return local, local.astimezone(dt.UTC)


async def in_force_for(
    session: AsyncSession,
    company_id: int,
    warehouse_id: int,
    version: int | None,
    order_date: dt.date,
    order_datetime: dt.datetime | None,
) -> list[Rule]:
    """The company's promotions that price a sale of ``warehouse_id`` dated so. A
    company with none costs no statement (the copy is kept per reference version);
    one with some reads its time zone, which weekdays and hours are in."""
    rules = await company_rules(session, company_id, version)
    if not rules:
        return []
    now = await branch_now(session, company_id, warehouse_id)
    local, instant = moment(order_date, order_datetime, now.tzinfo or dt.UTC, now)
    return [r for r in rules if in_force(r, warehouse_id, local, instant)]


async def branch_now(session: AsyncSession, company_id: int, warehouse_id: int) -> dt.datetime:
    """Now on the branch's clock: its time zone is the one a promotion's days and
    hours are read in, where the sale is rung up."""
    name = await session.scalar(
        select(Warehouse.timezone).where(
            Warehouse.id == warehouse_id, Warehouse.company_id == company_id
        )
    )
    try:
        zone: dt.tzinfo = ZoneInfo(name or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        zone = dt.UTC
    return dt.datetime.now(zone)
