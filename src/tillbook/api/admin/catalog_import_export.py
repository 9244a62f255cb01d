"""The catalog in and out as CSV through the back office (DESIGN.md §13):
``POST /import/products`` (multipart field ``file``) and ``GET /export/products``.

An import is idempotent twice over: by what it does (rows are matched by item code
and warehouse, opening stock is posted only when a listing is created, so the same
file again answers ``unchanged`` for every row) and, like every admin POST, on an
``Idempotency-Key`` (bound to the file's bytes), which replays the first answer.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Request
from fastapi.responses import Response

from tillbook.api import routing
from tillbook.api.admin.deps import Allowed
from tillbook.api.admin.uploads import uploaded_file
from tillbook.api.deps import DB
from tillbook.api.envelope import ok
from tillbook.api.idempotent import run_admin_unit
from tillbook.api.responses import JSON
from tillbook.auth.admin import AdminContext
from tillbook.catalog import import_export
from tillbook.unit import UnitOfWork

router = routing.admin(tags=["admin: catalog"])


@router.post("/import/products")
async def import_products(
    request: Request, ctx: Annotated[AdminContext, Allowed("catalog.write")]
) -> JSON:
    """``catalog.write`` company-wide: a file defines products for every branch,
    and sets prices and opening stock."""
    data = await uploaded_file(request, import_export.MAX_BYTES)

    async def work(uow: UnitOfWork) -> dict[str, Any]:
        counts = await import_export.import_products(
            uow, ctx.company_id, data, actor_id=ctx.user_id
        )
        return ok(counts.as_dict())

    return await run_admin_unit(request, ctx, work, content=data)


@router.get(
    "/export/products",
    response_class=Response,
    responses={200: {"content": {"text/csv": {}}, "description": "the CSV file"}},
)
async def export_products(
    ctx: Annotated[AdminContext, Allowed("catalog.read")], db: DB
) -> Response:
    text = await db.read(lambda s: import_export.export_products(s, ctx.company_id))
    return Response(
        text.encode(),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": 'attachment; filename="products.csv"'},
    )
