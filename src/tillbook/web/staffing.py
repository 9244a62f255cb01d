"""Staff members in the browser: the owner's page (``staff.manage``).

Every rule is ``tenancy/staff.py``'s, the one the admin API calls: one email one
login, the last active owner kept, an owner without a warehouse, archived staff
signed out. The page only turns its refusals into messages next to the fields:
a rule's 422 names its field, a taken email (409) is shown under the email, the
last-owner refusal above the form. An edit carries the version it was based on
in a hidden field, so an edit over someone else's is refused (412) with the
record as it is now. A new password set here (a reset), a new role or a new
branch signs the staff member out everywhere (the service ends their sessions)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Request
from fastapi.responses import Response

from tillbook.api import routing
from tillbook.api.admin.deps import path_id
from tillbook.api.deps import DB
from tillbook.auth import roles
from tillbook.auth.admin import AdminContext
from tillbook.errors import Conflict, PreconditionFailed, Unprocessable, ValidationFailed
from tillbook.kit.pagination import envelope, parse_page
from tillbook.tenancy import staff as staff_service
from tillbook.unit import UnitOfWork
from tillbook.web.forms import branches, id_field, see_other, submit, text, values
from tillbook.web.render import render
from tillbook.web.session import Page, read_form

router = routing.pages()

Owner = Annotated[AdminContext, Page("staff.manage")]
STALE = (
    "Someone else changed this staff member while you were editing. "
    "Here they are as they are now; make your change again."
)
ROLE_CHOICES = [(r, r) for r in roles.ROLES]


async def _list_page(
    request: Request,
    ctx: AdminContext,
    db: Any,
    page: str | None = None,
    *,
    status: int = 200,
    errors: dict[str, list[str]] | None = None,
    form_values: dict[str, str] | None = None,
    message: str | None = None,
) -> Response:
    paging = parse_page(page, "50")
    total, rows = await db.read(lambda s: staff_service.list_staff(s, ctx.company_id, paging))
    shops = await branches(db, ctx)
    return render(
        request,
        "staff.html",
        status=status,
        total=total,
        pages=envelope(paging, total, []),
        staff_members=[staff_service.view(u) for u in rows],
        names=dict(shops),
        branches=shops,
        roles=ROLE_CHOICES,
        errors=errors or {},
        values=form_values or {"role": roles.CASHIER},
        message=message,
    )


async def _member_page(
    request: Request,
    ctx: AdminContext,
    db: Any,
    staff_id: int,
    *,
    status: int = 200,
    errors: dict[str, list[str]] | None = None,
    form_values: dict[str, str] | None = None,
    message: str | None = None,
) -> Response:
    member = staff_service.view(
        await db.read(lambda s: staff_service.get_staff(s, ctx.company_id, staff_id))
    )
    current = {
        "name": member["name"],
        "email": member["email"] or "",
        "role": member["role"] or "",
        "warehouse_id": str(member["warehouse_id"] or ""),
    }
    shown = dict(current)
    if form_values is not None:
        shown.update(form_values)
    shown["version"] = str(member["version"])  # always the version shown now
    return render(
        request,
        "staff_member.html",
        status=status,
        member=member,
        branches=await branches(db, ctx),
        roles=ROLE_CHOICES,
        errors=errors or {},
        values=shown,
        message=message,
    )


@router.get("/settings/staff")
async def staff_list(request: Request, ctx: Owner, db: DB, page: str | None = None) -> Response:
    return await _list_page(request, ctx, db, page)


@router.post("/settings/staff")
async def staff_create(request: Request, ctx: Owner, db: DB) -> Response:
    form = await read_form(request)
    errors: dict[str, list[str]] = {}
    warehouse_id = id_field(form, "warehouse_id", errors)
    password = form.get("password")
    new = staff_service.NewStaff(
        name=text(form, "name"),
        email=text(form, "email"),
        role=text(form, "role"),
        password=password if isinstance(password, str) else "",
        warehouse_id=warehouse_id,
    )
    kept = {k: v for k, v in values(form).items() if k != "password"}
    try:
        if errors:
            raise ValidationFailed(errors)

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            user = await staff_service.create_staff(
                uow.session, ctx.company_id, new, actor_id=ctx.user_id
            )
            return dict(staff_service.view(user))

        body, _replayed = await submit(request, ctx, work)
    except ValidationFailed as exc:
        return await _list_page(request, ctx, db, status=422, errors=exc.errors, form_values=kept)
    except Conflict as exc:
        return await _list_page(
            request, ctx, db, status=409, errors={"email": [exc.message]}, form_values=kept
        )
    return see_other(f"/settings/staff/{body['id']}?saved=1")


@router.get("/settings/staff/{staff_id}")
async def staff_member(request: Request, staff_id: str, ctx: Owner, db: DB) -> Response:
    return await _member_page(request, ctx, db, path_id(staff_id, "staff member"))


@router.post("/settings/staff/{staff_id}/edit")
async def staff_edit(request: Request, staff_id: str, ctx: Owner, db: DB) -> Response:
    sid = path_id(staff_id, "staff member")
    form = await read_form(request)
    errors: dict[str, list[str]] = {}
    version = id_field(form, "version", errors)
    warehouse_id = id_field(form, "warehouse_id", errors)
    changes: dict[str, Any] = {
        "name": text(form, "name"),
        "email": text(form, "email"),
        "role": text(form, "role"),
        "warehouse_id": warehouse_id,  # empty: the whole company
    }
    password = form.get("password")
    if isinstance(password, str) and password:
        changes["password"] = password  # a reset: their sessions end (the service)
    kept = {k: v for k, v in values(form).items() if k != "password"}
    try:
        if errors:
            raise ValidationFailed(errors)

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            user = await staff_service.update_staff(
                uow.session, ctx.company_id, sid, version, actor_id=ctx.user_id, **changes
            )
            return dict(staff_service.view(user))

        await submit(request, ctx, work)
    except ValidationFailed as exc:
        return await _member_page(
            request, ctx, db, sid, status=422, errors=exc.errors, form_values=kept
        )
    except Conflict as exc:
        return await _member_page(
            request, ctx, db, sid, status=409, errors={"email": [exc.message]}, form_values=kept
        )
    except Unprocessable as exc:  # the last active owner
        return await _member_page(
            request, ctx, db, sid, status=422, message=exc.message, form_values=kept
        )
    except PreconditionFailed:
        return await _member_page(request, ctx, db, sid, status=412, message=STALE)
    return see_other(f"/settings/staff/{sid}?saved=1")


@router.get("/settings/staff/{staff_id}/archive")
async def staff_archive_confirm(request: Request, staff_id: str, ctx: Owner, db: DB) -> Response:
    sid = path_id(staff_id, "staff member")
    member = staff_service.view(
        await db.read(lambda s: staff_service.get_staff(s, ctx.company_id, sid))
    )
    return render(request, "staff_archive.html", member=member)


@router.post("/settings/staff/{staff_id}/archive")
async def staff_archive(request: Request, staff_id: str, ctx: Owner, db: DB) -> Response:
    sid = path_id(staff_id, "staff member")

    async def work(uow: UnitOfWork) -> dict[str, Any]:
        user = await staff_service.archive_staff(
            uow.session, ctx.company_id, sid, actor_id=ctx.user_id
        )
        return dict(staff_service.view(user))

    try:
        await submit(request, ctx, work)
    except Unprocessable as exc:
        return await _member_page(request, ctx, db, sid, status=422, message=exc.message)
    return see_other(f"/settings/staff/{sid}")


@router.post("/settings/staff/{staff_id}/pin")
async def staff_pin(request: Request, staff_id: str, ctx: Owner, db: DB) -> Response:
    """Set the PIN the staff member sells with at a register, or remove it
    (``remove``); the PIN is never shown back, only whether one is set."""
    sid = path_id(staff_id, "staff member")
    form = await read_form(request)
    raw = form.get("pin")
    pin: str | None = raw if isinstance(raw, str) else ""
    if text(form, "remove") == "1":
        pin = None
    try:

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            user = await staff_service.set_pin(
                uow.session, ctx.company_id, sid, pin, actor_id=ctx.user_id
            )
            return dict(staff_service.view(user))

        await submit(request, ctx, work)
    except ValidationFailed as exc:
        return await _member_page(request, ctx, db, sid, status=422, errors=exc.errors)
    except Unprocessable as exc:
        return await _member_page(request, ctx, db, sid, status=422, message=exc.message)
    return see_other(f"/settings/staff/{sid}?saved=1")
