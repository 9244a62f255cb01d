"""Promotions (``/promotions``, DESIGN §18): list, create, end (PATCH ``ends_on``),
rename, pause, resume and archive. Read with ``catalog.read`` (a till's staff sees
the offers it sells with); written with ``prices.write``, as the prices they change.
A rule is fixed once created: a different offer is a new promotion."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from tillbook.api import envelope
from tillbook.api.admin.deps import Allowed, path_id
from tillbook.api.admin.editing import Resource, archive_version, router_for
from tillbook.api.idempotent import run_admin_unit
from tillbook.api.responses import JSON
from tillbook.auth.admin import AdminContext
from tillbook.kit import versions
from tillbook.promotions import service
from tillbook.promotions.schemas import PromotionIn, PromotionPatch
from tillbook.unit import UnitOfWork


async def _create(uow: UnitOfWork, ctx: AdminContext, body: PromotionIn) -> dict[str, Any]:
    return dict(service.view(await service.create(uow.session, ctx.company_id, ctx.user_id, body)))


async def _edit(
    uow: UnitOfWork, ctx: AdminContext, id_: int, version: int | None, changes: dict[str, Any]
) -> dict[str, Any]:
    promotion = await service.edit(uow.session, ctx.company_id, ctx.user_id, id_, version, changes)
    return dict(service.view(promotion))


def _changer(status: str) -> Any:
    async def change(
        uow: UnitOfWork, ctx: AdminContext, id_: int, version: int | None
    ) -> dict[str, Any]:
        promotion = await service.set_state(
            uow.session, ctx.company_id, ctx.user_id, id_, version, status
        )
        return dict(service.view(promotion))

    return change


RESOURCE = Resource(
    prefix="promotions",
    noun="promotion",
    write="prices.write",
    create_body=PromotionIn,
    patch_body=PromotionPatch,
    page=service.page_of,
    one=service.one_of,
    create=_create,
    edit=_edit,
    archive=_changer("archived"),
)

router: APIRouter = router_for(RESOURCE)
writer = Allowed("prices.write")


def _state_route(verb: str, status: str) -> None:
    change = _changer(status)

    @router.post(f"/{{record_id}}/{verb}", summary=f"{verb.capitalize()} a promotion")
    async def state_change(record_id: str, request: Request, ctx: AdminContext = writer) -> JSON:
        rid = path_id(record_id, "promotion")
        expected = await archive_version(request)

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            return envelope.ok(await change(uow, ctx, rid, expected))

        return await run_admin_unit(
            request, ctx, work, headers=lambda b: {"ETag": versions.etag(b["data"]["version"])}
        )


_state_route("pause", "paused")
_state_route("resume", "active")
