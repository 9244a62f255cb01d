"""Settings → Loyalty in the browser (``settings.write``): the company's programme,
set through the service the admin API's ``PUT /loyalty`` calls
(``loyalty/programme.py``), so the same checks, revaluation and audit apply.

The form carries the version it was drawn from in a hidden field: a change over
someone else's is refused (412) with the programme as it is now."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Request
from fastapi.responses import Response

from tillbook.api import routing
from tillbook.api.deps import DB
from tillbook.auth.admin import AdminContext
from tillbook.errors import PreconditionFailed, PreconditionRequired, ValidationFailed
from tillbook.loyalty import programme
from tillbook.loyalty.schemas import ProgrammeIn
from tillbook.unit import UnitOfWork
from tillbook.web.forms import id_field, parse_model, see_other, submit, text, values
from tillbook.web.render import render
from tillbook.web.session import Page, read_form

router = routing.pages()

Setter = Annotated[AdminContext, Page("settings.write")]
STALE = (
    "Someone else changed the loyalty programme while you were editing it. "
    "Here it is as it is now; make your change again."
)


async def _page(
    request: Request,
    ctx: AdminContext,
    db: Any,
    *,
    status: int = 200,
    errors: dict[str, list[str]] | None = None,
    form_values: dict[str, str] | None = None,
    message: str | None = None,
) -> Response:
    current = await db.read(lambda s: programme.read(s, ctx.company_id))
    shown = {
        "earn_unit": current["earn_unit"] or "1.00",
        "point_value": current["point_value"] or "0.01",
        "active": "1" if current["active"] or not current["configured"] else "",
    }
    if form_values is not None:
        shown.update({k: form_values.get(k, "") for k in shown})
    shown["version"] = str(current["version"])
    return render(
        request,
        "loyalty.html",
        status=status,
        programme=current,
        errors=errors or {},
        values=shown,
        message=message,
    )


@router.get("/settings/loyalty")
async def loyalty_settings(request: Request, ctx: Setter, db: DB) -> Response:
    return await _page(request, ctx, db)


@router.post("/settings/loyalty")
async def loyalty_save(request: Request, ctx: Setter, db: DB) -> Response:
    form = await read_form(request)
    errors: dict[str, list[str]] = {}
    version = id_field(form, "version", errors) or None  # 0: not set up yet
    try:
        if errors:
            raise ValidationFailed(errors)
        body = parse_model(
            ProgrammeIn,
            {
                "earn_unit": text(form, "earn_unit").replace(",", ""),
                "point_value": text(form, "point_value").replace(",", ""),
                "active": text(form, "active") == "1",
                "version": version,
            },
        )

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            return await programme.put(uow, ctx.company_id, ctx.actor, body, version)

        await submit(request, ctx, work)
    except ValidationFailed as exc:
        return await _page(
            request, ctx, db, status=422, errors=exc.errors, form_values=values(form)
        )
    except (PreconditionFailed, PreconditionRequired):
        return await _page(request, ctx, db, status=412, message=STALE)
    return see_other("/settings/loyalty?saved=1")
