"""A batch price change (the spec's price adjustment, for many products and branches
at once): the chosen products' listings in the chosen branches get a new sales
and/or purchase price, set to a value or moved by an amount or a percentage, rounded
to a step.

``plan`` computes old -> new for every listing without writing (the preview);
``apply`` computes it again under row locks and writes it through
``products.update_listing``, the one price service (so each listing's history row,
audit record and ``product.updated`` event are those of a single edit), with one
numbered ``ADJ-BATCH`` per branch for the sales prices. The change as a whole is
audited once per branch (``price_change``, keyed by the branch), which is the
history the back office lists: who, when, and every old -> new.

A preview carries a fingerprint of the prices it was computed from; ``apply``
refuses when the prices moved in between (someone else changed one), so what is
applied is what was shown.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.audit.queries import AuditFilter, list_events
from tillbook.audit.service import record
from tillbook.catalog import products as product_service
from tillbook.catalog.prices import open_batch
from tillbook.catalog.schemas import ListingPatch
from tillbook.errors import ValidationFailed
from tillbook.kit.bounds import PRICE
from tillbook.kit.money import HUNDRED, PRICE_STEPS, money_str, round_to_step
from tillbook.kit.pagination import Page, envelope
from tillbook.kit.search import matches
from tillbook.models import Listing, PriceAdjustmentBatch, Product
from tillbook.unit import UnitOfWork

TARGETS = ("sales", "purchase", "both")
METHODS = ("set", "amount", "percent")
SCOPES = ("search", "category", "list")
MAX_ROWS = 1000  # one change; more is a sign the choice was not what was meant


@dataclass(frozen=True)
class PriceChangeIn:
    """What the form asks: which products (``scope``: a search, a category or a list
    of item codes), which branches, which price, how (``set`` to ``value``, move by
    an ``amount`` or a ``percent``, negative for down) and the rounding ``step``."""

    warehouse_ids: tuple[int, ...]
    scope: str
    target: str
    method: str
    value: Decimal
    step: Decimal = Decimal("0.01")
    search: str | None = None
    category_id: int | None = None
    item_codes: tuple[str, ...] = ()
    notes: str = ""


@dataclass
class PlannedRow:
    product_id: int
    name: str
    item_code: str
    warehouse_id: int
    old_sales: Decimal
    new_sales: Decimal
    old_purchase: Decimal
    new_purchase: Decimal
    version: int = 0
    problem: str | None = None

    @property
    def changes(self) -> bool:
        return self.old_sales != self.new_sales or self.old_purchase != self.new_purchase


@dataclass
class Plan:
    rows: list[PlannedRow] = field(default_factory=list)
    fingerprint: str = ""

    @property
    def problems(self) -> list[PlannedRow]:
        return [r for r in self.rows if r.problem]


def check(body: PriceChangeIn) -> None:
    """The form's fields, each refusal named by its field."""
    errors: dict[str, list[str]] = {}
    if not body.warehouse_ids:
        errors["warehouse_ids"] = ["choose at least one branch"]
    if body.scope not in SCOPES:
        errors["scope"] = [f"must be one of {', '.join(SCOPES)}"]
    elif body.scope == "search" and not body.search:
        errors["search"] = ["enter part of a name or item code"]
    elif body.scope == "category" and body.category_id is None:
        errors["category_id"] = ["choose a category"]
    elif body.scope == "list" and not body.item_codes:
        errors["item_codes"] = ["enter at least one item code"]
    if body.target not in TARGETS:
        errors["target"] = [f"must be one of {', '.join(TARGETS)}"]
    if body.method not in METHODS:
        errors["method"] = [f"must be one of {', '.join(METHODS)}"]
    elif body.method == "set" and body.value < 0:
        errors["value"] = ["a price cannot be negative"]
    elif body.method == "percent" and not Decimal(-100) < body.value <= Decimal(1000):
        errors["value"] = ["a percentage must be above -100 and at most 1000"]
    elif abs(body.value) > PRICE.max:
        errors["value"] = [f"must be at most {PRICE.max}"]
    if body.step not in PRICE_STEPS:
        errors["step"] = [f"must be one of {', '.join(str(s) for s in PRICE_STEPS)}"]
    if errors:
        raise ValidationFailed(errors)


def new_price(old: Decimal, body: PriceChangeIn) -> Decimal:
    if body.method == "set":
        raw = body.value
    elif body.method == "amount":
        raw = old + body.value
    else:
        raw = old * (HUNDRED + body.value) / HUNDRED
    return round_to_step(raw, body.step)


async def _listings(
    session: AsyncSession, company_id: int, body: PriceChangeIn, *, lock: bool
) -> list[tuple[Product, Listing]]:
    query = (
        select(Product, Listing)
        .join(
            Listing, (Listing.product_id == Product.id) & (Listing.company_id == Product.company_id)
        )
        .where(
            Product.company_id == company_id,
            Product.archived_at.is_(None),
            Listing.warehouse_id.in_(body.warehouse_ids),
        )
    )
    if body.scope == "search" and body.search:
        query = query.where(matches(body.search, Product.name, Product.item_code))
    elif body.scope == "category":
        query = query.where(Product.category_id == body.category_id)
    else:
        query = query.where(Product.item_code.in_(body.item_codes))
    # Listings locked in primary-key order (STYLE.md), read in the order shown.
    query = query.order_by(Listing.id).limit(MAX_ROWS + 1)
    if lock:
        query = query.with_for_update(of=Listing)
    rows = [(p, li) for p, li in (await session.execute(query)).all()]
    if len(rows) > MAX_ROWS:
        raise ValidationFailed(
            {"scope": [f"more than {MAX_ROWS} listings chosen; narrow the choice"]}
        )
    if body.scope == "list":
        found = {p.item_code for p, _li in rows}
        missing = [c for c in body.item_codes if c not in found]
        if missing:
            raise ValidationFailed(
                {"item_codes": ["not listed in the chosen branches: " + ", ".join(missing[:20])]}
            )
    if not rows:
        raise ValidationFailed({"scope": ["no product listed in the chosen branches matches"]})
    rows.sort(key=lambda r: (r[0].name.lower(), r[0].id, r[1].warehouse_id))
    return rows


def _fingerprint(rows: list[tuple[Product, Listing]]) -> str:
    digest = hashlib.sha256()
    for _p, li in sorted(rows, key=lambda r: r[1].id):
        digest.update(f"{li.id}:{li.sales_price:f}:{li.purchase_price:f};".encode())
    return digest.hexdigest()[:32]


def _planned(rows: list[tuple[Product, Listing]], body: PriceChangeIn) -> Plan:
    plan = Plan(fingerprint=_fingerprint(rows))
    for product, listing in rows:
        sales = listing.sales_price
        purchase = listing.purchase_price
        new_sales = new_price(sales, body) if body.target in ("sales", "both") else sales
        new_purchase = (
            new_price(purchase, body) if body.target in ("purchase", "both") else purchase
        )
        row = PlannedRow(
            product.id,
            product.name,
            product.item_code,
            listing.warehouse_id,
            sales,
            new_sales,
            purchase,
            new_purchase,
            listing.version,
        )
        if new_sales < 0 or new_purchase < 0:
            row.problem = "the new price would be below zero"
        elif max(new_sales, new_purchase) > PRICE.max:
            row.problem = f"the new price would be above {PRICE.max}"
        elif listing.mrp is not None and new_sales > listing.mrp:
            row.problem = f"the new sales price is above the MRP {listing.mrp}"
        plan.rows.append(row)
    return plan


async def plan(session: AsyncSession, company_id: int, body: PriceChangeIn) -> Plan:
    """The preview: old -> new for every chosen listing, nothing written."""
    check(body)
    return _planned(await _listings(session, company_id, body, lock=False), body)


async def apply(
    uow: UnitOfWork,
    company_id: int,
    body: PriceChangeIn,
    *,
    fingerprint: str,
    actor_id: int | None,
) -> dict[str, Any]:
    """The change, as previewed, in this one transaction; refused whole when a row
    has a problem or the prices moved since the preview."""
    check(body)
    session = uow.session
    rows = await _listings(session, company_id, body, lock=True)
    planned = _planned(rows, body)
    if planned.fingerprint != fingerprint:
        raise ValidationFailed(
            {"preview": ["prices changed since this preview was made; preview again"]}
        )
    if planned.problems:
        first = planned.problems[0]
        raise ValidationFailed({"value": [f"{first.name} ({first.item_code}): {first.problem}"]})
    notes = body.notes or "price change"
    per_branch: dict[int, list[PlannedRow]] = defaultdict(list)
    batches: dict[int, str] = {}
    batch_by_branch: dict[int, PriceAdjustmentBatch] = {}
    for row in planned.rows:
        if not row.changes:
            continue
        per_branch[row.warehouse_id].append(row)
        batch = None
        if row.new_sales != row.old_sales:
            if row.warehouse_id not in batches:
                opened = await open_batch(uow, company_id, row.warehouse_id, notes, actor_id)
                batches[row.warehouse_id] = opened.invoice_number
                batch_by_branch[row.warehouse_id] = opened
            batch = batch_by_branch[row.warehouse_id]
        patch: dict[str, Any] = {"version": row.version}
        if row.new_sales != row.old_sales:
            patch["sales_price"] = row.new_sales
        if row.new_purchase != row.old_purchase:
            patch["purchase_price"] = row.new_purchase
        await product_service.update_listing(
            uow,
            company_id,
            row.product_id,
            row.warehouse_id,
            ListingPatch(**patch),
            expected_version=None,
            actor_id=actor_id,
            price_batch=batch,
        )
    for warehouse_id, changed in per_branch.items():
        await record(
            session,
            company_id=company_id,
            actor_id=actor_id,
            action="applied",
            entity_type="price_change",
            entity_id=warehouse_id,
            after={
                "batch": batches.get(warehouse_id),
                "notes": body.notes,
                "rule": rule_text(body),
                "items": [
                    {
                        "product_id": r.product_id,
                        "name": r.name,
                        "item_code": r.item_code,
                        "sales_price": [money_str(r.old_sales), money_str(r.new_sales)],
                        "purchase_price": [
                            money_str(r.old_purchase),
                            money_str(r.new_purchase),
                        ],
                    }
                    for r in changed
                ],
            },
        )
    return {
        "changed": sum(len(v) for v in per_branch.values()),
        "batches": sorted(batches.values()),
    }


def rule_text(body: PriceChangeIn) -> str:
    """The change in words, as the history shows it."""
    which = {
        "sales": "sales price",
        "purchase": "purchase price",
        "both": "sales and purchase price",
    }
    if body.method == "set":
        how = f"set to {money_str(body.value)}"
    elif body.method == "amount":
        how = f"{'up' if body.value >= 0 else 'down'} by {money_str(abs(body.value))}"
    else:
        how = f"{'up' if body.value >= 0 else 'down'} by {abs(body.value).normalize():f}%"
    return f"{which.get(body.target, body.target)} {how}, rounded to {body.step}"


async def history_page(
    session: AsyncSession, company_id: int, warehouse_id: int | None, page: Page
) -> dict[str, Any]:
    """The price changes applied in the back office, newest first: one warehouse's
    (a scoped staff member's) or every one's."""
    total, events = await list_events(
        session,
        company_id,
        page,
        AuditFilter(entity_type="price_change", entity_id=warehouse_id),
    )
    return envelope(page, total, events)
