"""Reference data in one page: units, categories (as a tree), brands and taxes, with
a form to add each (``catalog.reference``, as the back-office API adds them)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any

from fastapi import Request
from fastapi.responses import Response
from pydantic import BaseModel
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.api import routing
from tillbook.api.deps import DB
from tillbook.auth.admin import AdminContext
from tillbook.catalog import reference
from tillbook.catalog.reference_schemas import BrandIn, CategoryIn, TaxIn, UnitIn
from tillbook.errors import ValidationFailed
from tillbook.kit.pagination import Page as Paging
from tillbook.unit import UnitOfWork
from tillbook.web.forms import decimal_field, id_field, parse_model, see_other, submit, text, values
from tillbook.web.render import render
from tillbook.web.session import Page, read_form

router = routing.pages()


async def reference_choices(db: Any, ctx: AdminContext) -> dict[str, Sequence[Mapping[str, Any]]]:
    """The live units, categories, brands and taxes, by kind, for a form's choices."""
    everything = Paging(page=1, limit=100)

    async def read(s: AsyncSession) -> dict[str, Sequence[Mapping[str, Any]]]:
        out: dict[str, Sequence[Mapping[str, Any]]] = {}
        for kind in ("unit", "category", "brand", "tax"):
            _total, rows = await reference.page_of(
                s, kind, ctx.company_id, everything, include_archived=False
            )
            out[kind] = rows
        return out

    choices: dict[str, Sequence[Mapping[str, Any]]] = await db.read(read)
    return choices


REFERENCE_FORMS: dict[str, tuple[type[BaseModel], str]] = {
    "unit": (UnitIn, "catalog.write"),
    "category": (CategoryIn, "catalog.write"),
    "brand": (BrandIn, "catalog.write"),
    "tax": (TaxIn, "settings.write"),
}


def category_tree(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Categories nested under their parents (``{"row": ..., "children": [...]}``),
    each level by name; one whose parent is not among ``rows`` (archived, or past
    the page read) stands at the top rather than disappearing."""
    ids = {r["id"] for r in rows}
    nodes: dict[int, dict[str, Any]] = {r["id"]: {"row": r, "children": []} for r in rows}
    top: list[dict[str, Any]] = []
    for r in sorted(rows, key=lambda r: str(r["name"]).lower()):
        parent = r.get("parent_id")
        if isinstance(parent, int) and parent in ids and parent != r["id"]:
            nodes[parent]["children"].append(nodes[r["id"]])
        else:
            top.append(nodes[r["id"]])
    return top


async def _reference_page(
    request: Request,
    ctx: AdminContext,
    db: Any,
    *,
    status: int = 200,
    errors: dict[str, dict[str, list[str]]] | None = None,
    form_values: dict[str, dict[str, str]] | None = None,
) -> Response:
    choices = await reference_choices(db, ctx)
    return render(
        request,
        "reference.html",
        status=status,
        choices=choices,
        tree=category_tree(choices["category"]),
        may={kind: ctx.can(perm) for kind, (_m, perm) in REFERENCE_FORMS.items()},
        kind_errors=errors or {},
        kind_values=form_values or {},
    )


@router.get("/reference")
async def reference_list(
    request: Request, ctx: Annotated[AdminContext, Page("catalog.read")], db: DB
) -> Response:
    return await _reference_page(request, ctx, db)


@router.post("/reference/{kind}")
async def reference_create(
    request: Request, kind: str, ctx: Annotated[AdminContext, Page("catalog.read")], db: DB
) -> Response:
    if kind not in REFERENCE_FORMS:
        return render(request, "error.html", status=404, message="not found")
    model, permission = REFERENCE_FORMS[kind]
    ctx.require(permission)
    form = await read_form(request)
    errors: dict[str, list[str]] = {}
    data: dict[str, Any] = {"name": text(form, "name")}
    if kind == "unit":
        data["short_name"] = text(form, "short_name")
    if kind == "category":
        data["parent_id"] = id_field(form, "parent_id", errors)
    if kind == "tax":
        data["rate"] = decimal_field(form, "rate", errors)
        data["inclusive"] = form.get("inclusive") is not None
    try:
        if errors:
            raise ValidationFailed(errors)
        body: Any = parse_model(model, data)

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            s, cid, uid = uow.session, ctx.company_id, ctx.user_id
            if kind == "unit":
                added: Any = await reference.add_unit(
                    s, cid, uid, name=body.name, short_name=body.short_name
                )
            elif kind == "category":
                added = await reference.add_category(
                    s, cid, uid, name=body.name, slug=None, parent_id=body.parent_id, image=None
                )
            elif kind == "brand":
                added = await reference.add_brand(
                    s, cid, uid, name=body.name, slug=None, image=None
                )
            else:
                added = await reference.add_tax(
                    s, cid, uid, name=body.name, rate=body.rate, inclusive=body.inclusive
                )
            return {"id": added.id}

        await submit(request, ctx, work)
    except ValidationFailed as exc:
        return await _reference_page(
            request,
            ctx,
            db,
            status=422,
            errors={kind: exc.errors},
            form_values={kind: values(form)},
        )
    return see_other(f"/reference#{kind}")
