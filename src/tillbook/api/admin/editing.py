"""What every back-office router of an editable set-up record shares: the version an
edit is based on (``If-Match`` or a body ``version``), answers carrying the record's
``ETag``, the ``include_archived`` flag and list pages.

A read answers ``ETag: "<version>"`` and the ``version`` field; an edit names that
version as ``If-Match`` (or ``version`` in its JSON body): a stale one is a 412, a
missing one a 428 (``kit/versions.py``). When both are sent they must agree.

Every family is read with ``catalog.read`` (a till's staff sees the units and taxes
it sells with) and written with the permission its ``Resource`` names
(``auth/roles.py``: ``catalog.write`` or ``settings.write``, company-wide); every
POST is idempotent on ``Idempotency-Key`` (``api.idempotent.run_admin_unit``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from fastapi import APIRouter, Request
from pydantic import BaseModel
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.api import routing
from tillbook.api.admin.deps import Allowed, path_id, require_json
from tillbook.api.body import decode_json, openapi_body, parse_body
from tillbook.api.deps import DB
from tillbook.api.envelope import flat, ok
from tillbook.api.idempotent import run_admin_unit
from tillbook.api.responses import JSON
from tillbook.auth.admin import AdminContext
from tillbook.errors import PreconditionFailed, invalid
from tillbook.kit import versions
from tillbook.kit.bounds import text_problem
from tillbook.kit.pagination import Page, paged, parse_page
from tillbook.kit.text import quoted
from tillbook.unit import UnitOfWork

TRUE = {"1", "true", "yes"}
FALSE = {"", "0", "false", "no"}


def flag(field: str, raw: str | None) -> bool:
    """A true/false query parameter (absent: false); anything else is a 422 naming it."""
    if raw is None:
        return False
    # Before stripping: Python counts U+001C to U+001F as white space.
    problem = text_problem(raw)
    if problem is not None:
        raise invalid(field, problem)
    text = raw.strip().lower()
    if text in TRUE:
        return True
    if text in FALSE:
        return False
    raise invalid(field, f"must be true or false (got {quoted(raw)})")


def include_archived_flag(raw: str | None) -> bool:
    return flag("include_archived", raw)


def expected_version(request: Request, body_version: int | None) -> int | None:
    """The version the edit is based on: ``If-Match``, else the body's ``version``."""
    header = versions.parse_if_match(request.headers.get("if-match"))
    if header is not None and body_version is not None and header != body_version:
        raise PreconditionFailed(
            f"If-Match names version {header} but the body names version {body_version}"
        )
    return header if header is not None else body_version


async def archive_version(request: Request) -> int | None:
    """An archive is an edit too: ``If-Match``, or a JSON body ``{"version": n}``."""
    raw = await request.body()
    body_version: int | None = None
    if raw.strip():
        data = decode_json(raw)
        value = data.get("version") if isinstance(data, dict) else None
        if value is not None:
            if (
                not isinstance(value, int)
                or isinstance(value, bool)
                or not 1 <= value <= versions.MAX_VERSION
            ):
                raise invalid("version", f"must be a whole number from 1 (got {quoted(value)})")
            body_version = value
    return expected_version(request, body_version)


def one(view: Mapping[str, Any], *, status_code: int = 200) -> JSON:
    """One record, with its version as the ``ETag``."""
    return JSON(ok(view), status_code=status_code, headers={"ETag": versions.etag(view["version"])})


def _etag(body: dict[str, Any]) -> dict[str, str]:
    return {"ETag": versions.etag(body["data"]["version"])}


def changes_of(body: Any) -> dict[str, Any]:
    """The fields a PATCH body names (an explicit null included), without ``version``."""
    fields: dict[str, Any] = {name: getattr(body, name) for name in body.model_fields_set}
    fields.pop("version", None)
    return fields


# --- one router shape for every editable set-up record ---------------------------------

B = TypeVar("B", bound=BaseModel)
P = TypeVar("P", bound=BaseModel)
# A record's answer: its declared type (``catalog/reference.AdminUnit``...), with
# the ``version`` its ETag carries.
View = TypeVar("View", bound=Mapping[str, Any])


@dataclass(frozen=True)
class Resource(Generic[B, P, View]):
    """A family of set-up records and the service calls behind its five routes:
    GET list, POST create, GET one, PATCH, POST /{id}/archive. Every call gets the
    admin's company (and the admin as the actor of a change) and answers the
    record's view; ids of another company are not found. ``write``: the permission
    of the create, edit and archive (``auth/roles.py``). A list answers the page
    flat beside ``status`` (``api/envelope.flat``), a record in ``data``
    (``api/envelope.ok``)."""

    prefix: str
    noun: str
    write: str
    create_body: type[B]
    patch_body: type[P]
    page: Callable[[AsyncSession, int, Page, bool], Awaitable[tuple[int, list[View]]]]
    one: Callable[[AsyncSession, int, int], Awaitable[View]]
    create: Callable[[UnitOfWork, AdminContext, B], Awaitable[View]]
    edit: Callable[[UnitOfWork, AdminContext, int, int | None, dict[str, Any]], Awaitable[View]]
    archive: Callable[[UnitOfWork, AdminContext, int, int | None], Awaitable[View]]


def router_for(res: Resource[B, P, View]) -> APIRouter:
    router = routing.admin(f"/{res.prefix}", tags=[f"admin: {res.prefix}"])
    noun = res.noun
    reader = Allowed("catalog.read")
    writer = Allowed(res.write)

    @router.get("", summary=f"List {res.prefix}")
    async def list_records(
        db: DB,
        ctx: AdminContext = reader,
        page: str | None = None,
        limit: str | None = None,
        include_archived: str | None = None,
    ) -> dict[str, Any]:
        p = parse_page(page, limit)
        archived = include_archived_flag(include_archived)
        total, rows = await db.replica_read(lambda s: res.page(s, ctx.company_id, p, archived))
        return flat(paged(p, total, rows))

    @router.post(
        "", status_code=201, summary=f"Create a {noun}", openapi_extra=openapi_body(res.create_body)
    )
    async def create_record(request: Request, ctx: AdminContext = writer) -> JSON:
        require_json(request)
        body, _raw = await parse_body(request, res.create_body)

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            return ok(await res.create(uow, ctx, body))

        return await run_admin_unit(request, ctx, work, status=201, headers=_etag)

    @router.get("/{record_id}", summary=f"One {noun}")
    async def get_record(record_id: str, db: DB, ctx: AdminContext = reader) -> JSON:
        rid = path_id(record_id, noun)
        return one(await db.read(lambda s: res.one(s, ctx.company_id, rid)))

    @router.patch(
        "/{record_id}", summary=f"Edit a {noun}", openapi_extra=openapi_body(res.patch_body)
    )
    async def edit_record(
        record_id: str, request: Request, db: DB, ctx: AdminContext = writer
    ) -> JSON:
        rid = path_id(record_id, noun)
        require_json(request)
        body, _raw = await parse_body(request, res.patch_body)
        expected = expected_version(request, getattr(body, "version", None))
        changes = changes_of(body)
        return one(await db.unit(lambda uow: res.edit(uow, ctx, rid, expected, changes)))

    @router.post("/{record_id}/archive", summary=f"Archive a {noun}")
    async def archive_record(record_id: str, request: Request, ctx: AdminContext = writer) -> JSON:
        rid = path_id(record_id, noun)
        expected = await archive_version(request)

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            return ok(await res.archive(uow, ctx, rid, expected))

        return await run_admin_unit(request, ctx, work, headers=_etag)

    return router
