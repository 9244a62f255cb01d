"""The catalog's reference data as the back office keeps it: units, categories (a
tree), brands and taxes — created, edited and archived, never deleted.

Every write takes the company's reference lock first
(``orders.lookup.reference_changed``), which also tells every process's tax cache
that its copy is stale; then the record, its version check, the change and its
audit record (``audit/setup_records.py``). Names are unique where a shop expects them
(409 naming the field): a unit's name and short name, a brand's name and slug, a
category's slug, and its name among its siblings, a tax's name — compared without
regard to case, among records that are not archived (an archived name is free
again).

Taxes: a rate edit applies to orders priced after it; every order line keeps the
rate and amount it was charged (``order_items.tax_rate``, ``tax_amount``), so past
orders, their receipts and their returns are unchanged. Whether a tax is inclusive
can change only while no order line has been charged it: a return at a lower price
re-reads that flag, so changing it under past sales would change their refunds.

Categories and brands are what tills cache for their product pickers, and the spec
names ``product.updated`` as the trigger for refreshing those caches. A rename,
move, image change or archive therefore emits one ``product.updated`` per change,
not one per product: each event makes a till refetch its categories and brands, so
an event per product of a 10 000-product category would make every till refetch
them 10 000 times (and queue 10 000 rows in one transaction) for one rename. The
event's ``data`` carries the changed category or brand (its GET shape, with
``archived``), which fields changed, and ``product_ids``: the products whose
``category`` or ``brand`` reads differently now, for a till that caches products
by id. It has no top-level ``id``, so it cannot be mistaken for a product's. It is
company-wide (``warehouse_id`` null): categories and brands are company-wide.

``usable`` and ``check_usable`` are the check for anything that newly assigns a
unit, category, brand or tax to a product (product create and edit, import): an
archived one is refused, with a 422 naming the field.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any, Literal, TypeVar, overload

from sqlalchemy.ext.asyncio import AsyncSession
from typing_extensions import TypedDict

from tillbook.audit import setup_records
from tillbook.catalog import reference_repository as repo
from tillbook.catalog.announcements import announce_reference_change
from tillbook.catalog.rules import slugify
from tillbook.catalog.views import CategoryFields
from tillbook.errors import Conflict, duplicate, invalid
from tillbook.kit import xid
from tillbook.kit.money import number
from tillbook.kit.pagination import Page
from tillbook.kit.problems import Problems
from tillbook.kit.refs import ref_to_id
from tillbook.kit.shapes import DateTimeStr, answer
from tillbook.models import Brand, Category, Tax, Unit
from tillbook.orders.lookup import reference_changed
from tillbook.unit import UnitOfWork

Kind = Literal["unit", "category", "brand", "tax"]
NOUNS: dict[str, str] = {"unit": "unit", "category": "category", "brand": "brand", "tax": "tax"}


# --- checks for whoever assigns these to a product ------------------------------------


async def check_usable(
    session: AsyncSession,
    company_id: int,
    refs: Sequence[tuple[str, Kind, int | str | None]],
    problems: Problems,
) -> dict[str, int]:
    """field -> id for each (field, kind, reference) that names a unit, category,
    brand or tax of the company that is not archived; every other one is added to
    ``problems`` under its field (unknown, another company's, or archived). A None
    reference (no category) is left out and is no problem. One statement per kind."""
    wanted: dict[str, set[int]] = {}
    ids: dict[str, int | None] = {}
    for field, kind, ref in refs:
        if ref is None:
            continue
        ids[field] = ref_to_id(ref)
        if ids[field] is not None:
            wanted.setdefault(kind, set()).add(ids[field])  # type: ignore[arg-type]
    found = {
        kind: await repo.states(session, company_id, kind, ids_) for kind, ids_ in wanted.items()
    }
    out: dict[str, int] = {}
    for field, kind, ref in refs:
        if ref is None:
            continue
        id_ = ids[field]
        archived = found.get(kind, {}).get(id_) if id_ is not None else None
        if archived is None:
            problems.add(field, f"unknown {NOUNS[kind]} {ref!r}")
        elif archived:
            problems.add(field, f"{NOUNS[kind]} {ref!r} is archived and cannot be assigned")
        else:
            assert id_ is not None
            out[field] = id_
    return out


async def usable(
    session: AsyncSession,
    company_id: int,
    kind: Kind,
    ref: int | str,
    field: str | None = None,
) -> int:
    """The id of the company's unit, category, brand or tax ``ref`` names, when it
    may be newly assigned to a product; otherwise a 422 naming ``field`` (default
    ``<kind>_id``)."""
    problems = Problems()
    name = field or f"{kind}_id"
    found = await check_usable(session, company_id, [(name, kind, ref)], problems)
    problems.raise_if_any()
    return found[name]


# --- views -------------------------------------------------------------------------
# The back office's answers for each record (``api/admin/units.py`` and its
# siblings put them in the envelope): every field, the version an edit names and
# when it was archived. The till reads slimmer ones (``catalog/views.py``).


@answer
class AdminUnit(TypedDict):
    id: int
    xid: str
    name: str
    short_name: str
    version: int
    archived_at: DateTimeStr | None


@answer
class AdminCategory(CategoryFields):
    # The category's own fields (as a till's feed shows them) and its edit state.
    version: int
    archived_at: DateTimeStr | None


@answer
class AdminBrand(TypedDict):
    id: int
    xid: str
    name: str
    slug: str
    image: str | None
    version: int
    archived_at: DateTimeStr | None


@answer
class AdminTax(TypedDict):
    id: int
    xid: str
    name: str
    rate: float
    inclusive: bool
    version: int
    archived_at: DateTimeStr | None


def unit_view(u: Unit) -> AdminUnit:
    return {
        "id": u.id,
        "xid": xid.encode(u.id),
        "name": u.name,
        "short_name": u.short_name,
        "version": u.version,
        "archived_at": setup_records.iso(u.archived_at),
    }


def category_view(c: Category) -> AdminCategory:
    return {
        "id": c.id,
        "xid": xid.encode(c.id),
        "name": c.name,
        "slug": c.slug,
        "parent_id": c.parent_id,
        "image": c.image,
        "version": c.version,
        "archived_at": setup_records.iso(c.archived_at),
    }


def brand_view(b: Brand) -> AdminBrand:
    return {
        "id": b.id,
        "xid": xid.encode(b.id),
        "name": b.name,
        "slug": b.slug,
        "image": b.image,
        "version": b.version,
        "archived_at": setup_records.iso(b.archived_at),
    }


def tax_view(t: Tax) -> AdminTax:
    return {
        "id": t.id,
        "xid": xid.encode(t.id),
        "name": t.name,
        "rate": number(Decimal(t.rate)),
        "inclusive": t.inclusive,
        "version": t.version,
        "archived_at": setup_records.iso(t.archived_at),
    }


ReferenceView = AdminUnit | AdminCategory | AdminBrand | AdminTax

_VIEWS: dict[str, Any] = {
    "unit": (Unit, unit_view, (Unit.name,)),
    "category": (Category, category_view, (Category.name,)),
    "brand": (Brand, brand_view, (Brand.name,)),
    "tax": (Tax, tax_view, (Tax.name,)),
}


@overload
async def page_of(
    session: AsyncSession,
    kind: Literal["unit"],
    company_id: int,
    page: Page,
    *,
    include_archived: bool,
) -> tuple[int, list[AdminUnit]]: ...
@overload
async def page_of(
    session: AsyncSession,
    kind: Literal["category"],
    company_id: int,
    page: Page,
    *,
    include_archived: bool,
) -> tuple[int, list[AdminCategory]]: ...
@overload
async def page_of(
    session: AsyncSession,
    kind: Literal["brand"],
    company_id: int,
    page: Page,
    *,
    include_archived: bool,
) -> tuple[int, list[AdminBrand]]: ...
@overload
async def page_of(
    session: AsyncSession,
    kind: Literal["tax"],
    company_id: int,
    page: Page,
    *,
    include_archived: bool,
) -> tuple[int, list[AdminTax]]: ...
@overload
async def page_of(
    session: AsyncSession, kind: Kind, company_id: int, page: Page, *, include_archived: bool
) -> tuple[int, list[ReferenceView]]: ...
async def page_of(
    session: AsyncSession, kind: Kind, company_id: int, page: Page, *, include_archived: bool
) -> tuple[int, list[Any]]:
    """One page of the company's units, categories, brands or taxes, by name."""
    model, view, order = _VIEWS[kind]
    total, rows = await setup_records.page_of(
        session, model, company_id, page, include_archived=include_archived, order_by=order
    )
    return total, [view(r) for r in rows]


@overload
async def one_of(
    session: AsyncSession, kind: Literal["unit"], company_id: int, id_: int
) -> AdminUnit: ...
@overload
async def one_of(
    session: AsyncSession, kind: Literal["category"], company_id: int, id_: int
) -> AdminCategory: ...
@overload
async def one_of(
    session: AsyncSession, kind: Literal["brand"], company_id: int, id_: int
) -> AdminBrand: ...
@overload
async def one_of(
    session: AsyncSession, kind: Literal["tax"], company_id: int, id_: int
) -> AdminTax: ...
async def one_of(session: AsyncSession, kind: Kind, company_id: int, id_: int) -> Any:
    model, view, _order = _VIEWS[kind]
    row = await setup_records.find(session, model, company_id, id_, NOUNS[kind], lock=False)
    return view(row)


def _fields(view: Mapping[str, Any]) -> dict[str, Any]:
    """A view as the audit keeps it: without the id, xid and version (kept apart)."""
    return {k: v for k, v in view.items() if k not in ("id", "xid", "version")}


def _required(changes: Mapping[str, Any], *names: str) -> None:
    for name in names:
        if name in changes and changes[name] is None:
            raise invalid(name, "must not be null")


# --- units -------------------------------------------------------------------------


async def _unit_names_free(
    session: AsyncSession, company_id: int, name: str, short_name: str, exclude: int | None
) -> None:
    if await setup_records.taken(session, Unit, company_id, Unit.name, name, exclude_id=exclude):
        raise duplicate("name", f"a unit named {name!r} already exists")
    if await setup_records.taken(
        session, Unit, company_id, Unit.short_name, short_name, exclude_id=exclude
    ):
        raise duplicate("short_name", f"a unit with short name {short_name!r} already exists")


async def add_unit(
    session: AsyncSession, company_id: int, actor_id: int | None, *, name: str, short_name: str
) -> Unit:
    await reference_changed(session, company_id)
    await _unit_names_free(session, company_id, name, short_name, None)
    unit = Unit(company_id=company_id, name=name, short_name=short_name)
    session.add(unit)
    await session.flush()
    await setup_records.created(
        session, unit, actor_id=actor_id, entity_type="unit", fields=_fields(unit_view(unit))
    )
    return unit


async def edit_unit(
    session: AsyncSession,
    company_id: int,
    actor_id: int | None,
    unit_id: int,
    expected_version: int | None,
    changes: Mapping[str, Any],
) -> Unit:
    await reference_changed(session, company_id)
    unit = await setup_records.find(session, Unit, company_id, unit_id, "unit", lock=True)
    setup_records.check_version(unit, expected_version, f"unit {unit.id}")
    _required(changes, "name", "short_name")
    before = _fields(unit_view(unit))
    await _unit_names_free(
        session,
        company_id,
        changes.get("name", unit.name),
        changes.get("short_name", unit.short_name),
        unit.id,
    )
    if setup_records.apply(unit, changes):
        await setup_records.updated(
            session,
            unit,
            actor_id=actor_id,
            entity_type="unit",
            before=before,
            after=_fields(unit_view(unit)),
        )
    return unit


async def archive_unit(
    session: AsyncSession,
    company_id: int,
    actor_id: int | None,
    unit_id: int,
    expected_version: int | None,
) -> Unit:
    """An archived unit stays on the products and order lines that name it; it can
    no longer be assigned (``usable``)."""
    await reference_changed(session, company_id)
    unit = await setup_records.find(session, Unit, company_id, unit_id, "unit", lock=True)
    await setup_records.archive(
        session,
        unit,
        expected_version=expected_version,
        what=f"unit {unit.id}",
        actor_id=actor_id,
        entity_type="unit",
    )
    return unit


# --- categories --------------------------------------------------------------------


async def _parent(
    session: AsyncSession, company_id: int, ref: int | str | None, moving: int | None
) -> int | None:
    """The parent a category may take: one of the company's categories, not
    archived, and not the category itself or anything under it (a loop would take
    the subtree out of the tree)."""
    if ref is None:
        return None
    parent_id = ref_to_id(ref)
    parents = await repo.category_parents(session, company_id)
    if parent_id is None or parent_id not in parents:
        raise invalid("parent_id", f"unknown category {ref!r}")
    if moving is not None:
        seen: set[int] = set()
        node: int | None = parent_id
        while node is not None and node not in seen:
            if node == moving:
                what = "itself" if parent_id == moving else f"its own descendant {parent_id}"
                raise invalid("parent_id", f"category {moving} cannot be moved under {what}")
            seen.add(node)
            node = parents.get(node)
    parent = await setup_records.find(
        session, Category, company_id, parent_id, "category", lock=False
    )
    if parent.archived_at is not None:
        raise invalid("parent_id", f"category {parent_id} is archived and takes no new children")
    return parent_id


async def _category_names_free(
    session: AsyncSession,
    company_id: int,
    name: str,
    slug: str,
    parent_id: int | None,
    exclude: int | None,
) -> None:
    sibling = Category.parent_id.is_(None) if parent_id is None else Category.parent_id == parent_id
    if await setup_records.taken(
        session, Category, company_id, Category.name, name, exclude_id=exclude, where=[sibling]
    ):
        where = "at the top" if parent_id is None else f"under category {parent_id}"
        raise duplicate("name", f"a category named {name!r} already exists {where}")
    if await setup_records.taken(
        session, Category, company_id, Category.slug, slug, exclude_id=exclude
    ):
        raise duplicate("slug", f"a category with slug {slug!r} already exists")


Slugged = TypeVar("Slugged", Category, Brand)


async def _free_slug(
    session: AsyncSession, model: type[Slugged], company_id: int, name: str
) -> str:
    """The slug of ``name``, made unique with ``-2``, ``-3``… (only when the client
    named no slug: one it names and is taken is a 409)."""
    base = slugify(name)[:190].strip("-") or "item"
    slug, n = base, 1
    while await setup_records.taken(session, model, company_id, model.slug, slug):
        n += 1
        slug = f"{base}-{n}"
    return slug


async def add_category(
    session: AsyncSession,
    company_id: int,
    actor_id: int | None,
    *,
    name: str,
    slug: str | None,
    parent_id: int | str | None,
    image: str | None,
) -> Category:
    """A new category has no products yet: no event (a product assigned to it later
    announces itself)."""
    await reference_changed(session, company_id)
    parent = await _parent(session, company_id, parent_id, None)
    chosen = slug if slug is not None else await _free_slug(session, Category, company_id, name)
    await _category_names_free(session, company_id, name, chosen, parent, None)
    category = Category(
        company_id=company_id, name=name, slug=chosen, parent_id=parent, image=image
    )
    session.add(category)
    await session.flush()
    await setup_records.created(
        session,
        category,
        actor_id=actor_id,
        entity_type="category",
        fields=_fields(category_view(category)),
    )
    return category


async def edit_category(
    uow: UnitOfWork,
    company_id: int,
    actor_id: int | None,
    category_id: int,
    expected_version: int | None,
    changes: Mapping[str, Any],
) -> Category:
    """Rename, re-slug, re-image or move (``parent_id``; null: to the top). The
    slug stays as it was unless the edit names one: links to it keep working."""
    session = uow.session
    await reference_changed(session, company_id)
    category = await setup_records.find(
        session, Category, company_id, category_id, "category", lock=True
    )
    setup_records.check_version(category, expected_version, f"category {category.id}")
    _required(changes, "name", "slug")
    wanted = dict(changes)
    if "parent_id" in wanted:
        wanted["parent_id"] = await _parent(session, company_id, wanted["parent_id"], category.id)
    before = _fields(category_view(category))
    await _category_names_free(
        session,
        company_id,
        wanted.get("name", category.name),
        wanted.get("slug", category.slug),
        wanted.get("parent_id", category.parent_id),
        category.id,
    )
    if setup_records.apply(category, wanted):
        after = _fields(category_view(category))
        await setup_records.updated(
            session,
            category,
            actor_id=actor_id,
            entity_type="category",
            before=before,
            after=after,
        )
        changed = [k for k in after if after[k] != before[k]]
        products = await repo.products_in_category(session, company_id, category.id)
        announce_reference_change(
            uow, company_id, "category", category_view(category), changed, products, "updated"
        )
    return category


async def archive_category(
    uow: UnitOfWork,
    company_id: int,
    actor_id: int | None,
    category_id: int,
    expected_version: int | None,
) -> Category:
    """Only a category with no live category under it: archiving a parent would
    leave its children under a category no picker shows. Its products keep it."""
    session = uow.session
    await reference_changed(session, company_id)
    category = await setup_records.find(
        session, Category, company_id, category_id, "category", lock=True
    )
    setup_records.check_version(category, expected_version, f"category {category.id}")
    children = await repo.live_children(session, company_id, category.id)
    if children and category.archived_at is None:
        raise Conflict(
            f"category {category.id} has {children} categories under it that are not "
            "archived; move or archive them first"
        )
    await setup_records.archive(
        session,
        category,
        expected_version=expected_version,
        what=f"category {category.id}",
        actor_id=actor_id,
        entity_type="category",
    )
    products = await repo.products_in_category(session, company_id, category.id)
    announce_reference_change(
        uow, company_id, "category", category_view(category), ["archived_at"], products, "archived"
    )
    return category


# --- brands ------------------------------------------------------------------------


async def _brand_names_free(
    session: AsyncSession, company_id: int, name: str, slug: str, exclude: int | None
) -> None:
    if await setup_records.taken(session, Brand, company_id, Brand.name, name, exclude_id=exclude):
        raise duplicate("name", f"a brand named {name!r} already exists")
    if await setup_records.taken(session, Brand, company_id, Brand.slug, slug, exclude_id=exclude):
        raise duplicate("slug", f"a brand with slug {slug!r} already exists")


async def add_brand(
    session: AsyncSession,
    company_id: int,
    actor_id: int | None,
    *,
    name: str,
    slug: str | None,
    image: str | None,
) -> Brand:
    await reference_changed(session, company_id)
    chosen = slug if slug is not None else await _free_slug(session, Brand, company_id, name)
    await _brand_names_free(session, company_id, name, chosen, None)
    brand = Brand(company_id=company_id, name=name, slug=chosen, image=image)
    session.add(brand)
    await session.flush()
    await setup_records.created(
        session, brand, actor_id=actor_id, entity_type="brand", fields=_fields(brand_view(brand))
    )
    return brand


async def edit_brand(
    uow: UnitOfWork,
    company_id: int,
    actor_id: int | None,
    brand_id: int,
    expected_version: int | None,
    changes: Mapping[str, Any],
) -> Brand:
    session = uow.session
    await reference_changed(session, company_id)
    brand = await setup_records.find(session, Brand, company_id, brand_id, "brand", lock=True)
    setup_records.check_version(brand, expected_version, f"brand {brand.id}")
    _required(changes, "name", "slug")
    before = _fields(brand_view(brand))
    await _brand_names_free(
        session,
        company_id,
        changes.get("name", brand.name),
        changes.get("slug", brand.slug),
        brand.id,
    )
    if setup_records.apply(brand, changes):
        after = _fields(brand_view(brand))
        await setup_records.updated(
            session, brand, actor_id=actor_id, entity_type="brand", before=before, after=after
        )
        changed = [k for k in after if after[k] != before[k]]
        products = await repo.products_of_brand(session, company_id, brand.id)
        announce_reference_change(
            uow, company_id, "brand", brand_view(brand), changed, products, "updated"
        )
    return brand


async def archive_brand(
    uow: UnitOfWork,
    company_id: int,
    actor_id: int | None,
    brand_id: int,
    expected_version: int | None,
) -> Brand:
    session = uow.session
    await reference_changed(session, company_id)
    brand = await setup_records.find(session, Brand, company_id, brand_id, "brand", lock=True)
    await setup_records.archive(
        session,
        brand,
        expected_version=expected_version,
        what=f"brand {brand.id}",
        actor_id=actor_id,
        entity_type="brand",
    )
    products = await repo.products_of_brand(session, company_id, brand.id)
    announce_reference_change(
        uow, company_id, "brand", brand_view(brand), ["archived_at"], products, "archived"
    )
    return brand


# --- taxes -------------------------------------------------------------------------


async def add_tax(
    session: AsyncSession,
    company_id: int,
    actor_id: int | None,
    *,
    name: str,
    rate: Decimal,
    inclusive: bool,
) -> Tax:
    await reference_changed(session, company_id)
    if await setup_records.taken(session, Tax, company_id, Tax.name, name):
        raise duplicate("name", f"a tax named {name!r} already exists")
    tax = Tax(company_id=company_id, name=name, rate=rate, inclusive=inclusive)
    session.add(tax)
    await session.flush()
    await setup_records.created(
        session, tax, actor_id=actor_id, entity_type="tax", fields=_fields(tax_view(tax))
    )
    return tax


async def edit_tax(
    session: AsyncSession,
    company_id: int,
    actor_id: int | None,
    tax_id: int,
    expected_version: int | None,
    changes: Mapping[str, Any],
) -> Tax:
    """A new rate applies to orders priced after this commits, in every process
    (the reference version the key lookup reads moves with it); orders before keep
    the rate on their lines."""
    await reference_changed(session, company_id)
    tax = await setup_records.find(session, Tax, company_id, tax_id, "tax", lock=True)
    setup_records.check_version(tax, expected_version, f"tax {tax.id}")
    _required(changes, "name", "rate", "inclusive")
    before = _fields(tax_view(tax))
    name = changes.get("name", tax.name)
    if await setup_records.taken(session, Tax, company_id, Tax.name, name, exclude_id=tax.id):
        raise duplicate("name", f"a tax named {name!r} already exists")
    if (
        "inclusive" in changes
        and changes["inclusive"] != tax.inclusive
        and await repo.tax_charged(session, company_id, tax.id)
    ):
        raise invalid(
            "inclusive",
            f"tax {tax.id} has been charged on orders, whose returns follow its inclusive "
            "flag; create a new tax instead",
        )
    if setup_records.apply(tax, changes):
        await setup_records.updated(
            session,
            tax,
            actor_id=actor_id,
            entity_type="tax",
            before=before,
            after=_fields(tax_view(tax)),
        )
    return tax


async def archive_tax(
    session: AsyncSession,
    company_id: int,
    actor_id: int | None,
    tax_id: int,
    expected_version: int | None,
) -> Tax:
    """An archived tax prices no new order line and cannot be assigned to a product;
    returns of orders charged it still read it."""
    await reference_changed(session, company_id)
    tax = await setup_records.find(session, Tax, company_id, tax_id, "tax", lock=True)
    await setup_records.archive(
        session,
        tax,
        expected_version=expected_version,
        what=f"tax {tax.id}",
        actor_id=actor_id,
        entity_type="tax",
    )
    return tax
