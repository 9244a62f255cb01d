"""Form handling shared by the pages: reading fields (text, numbers, ids, dates,
all with ``kit/numerals.py``'s ASCII-digit parsers), parsing them into the API's
request models, running a write once, and the redirect after it.

A form carries a one-time ``form_token`` (``render.form_token``). ``submit`` claims
it with the back-office API's idempotency machinery (``api.idempotent.admin_unit``:
the token is bound to the staff member and to the form's fields), so a form sent
twice (a double click, a reload after POST) does its work once and the second send
is answered with the first one's outcome. A refused write rolls back its claim, so
the corrected form can be sent again."""

from __future__ import annotations

import datetime as dt
import hashlib
from decimal import Decimal
from typing import Any, TypeVar

from fastapi import Request
from fastapi.responses import RedirectResponse
from pydantic import BaseModel, ValidationError
from starlette.datastructures import FormData, UploadFile

from tillbook.api.body import errors_of
from tillbook.api.idempotent import Work, admin_unit
from tillbook.auth.admin import AdminContext
from tillbook.catalog import reference
from tillbook.errors import ValidationFailed, invalid
from tillbook.kit import numerals
from tillbook.kit.bounds import text_problem
from tillbook.kit.pagination import Page as Paging
from tillbook.reports import dashboard
from tillbook.web.session import CSRF_FIELD, read_form

TOKEN_FIELD = "form_token"


def text(form: FormData, name: str) -> str:
    value = form.get(name)
    return value.strip() if isinstance(value, str) else ""


def values(form: FormData) -> dict[str, str]:
    """The text fields, to fill a form in again after a refusal."""
    return {k: v for k, v in form.items() if isinstance(v, str) and k != CSRF_FIELD}


def _fingerprint(form: FormData, extra: bytes) -> bytes:
    parts = sorted((k, v) for k, v in form.multi_items() if isinstance(v, str) and k != CSRF_FIELD)
    digest = hashlib.sha256(repr(parts).encode())
    digest.update(hashlib.sha256(extra).digest())
    return digest.hexdigest().encode()


async def submit(
    request: Request, ctx: AdminContext, work: Work, *, file_bytes: bytes = b""
) -> tuple[dict[str, Any], bool]:
    """Run ``work`` once for this form's token: (its result, replayed)."""
    form = await read_form(request)
    token = text(form, TOKEN_FIELD) or None
    if token is not None:
        problem = text_problem(token)
        if problem is not None or len(token) > 100:
            raise invalid(TOKEN_FIELD, problem or "too long")
    _status, body, replayed = await admin_unit(
        request,
        ctx,
        work,
        token=token,
        content=_fingerprint(form, file_bytes),
    )
    return body, replayed


async def upload(form: FormData, name: str, max_bytes: int) -> bytes | None:
    part = form.get(name)
    if isinstance(part, UploadFile):
        data = await part.read(max_bytes + 1)
        await part.close()
        return data
    return None


def see_other(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)


M = TypeVar("M", bound=BaseModel)


def parse_model(model: type[M], data: dict[str, Any]) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ValidationFailed(errors_of(exc)) from None


def decimal_field(form: FormData, name: str, errors: dict[str, list[str]]) -> Decimal | None:
    """A number typed in a form: thousands commas dropped, then ASCII digits only
    (``kit/numerals.py``: ``２`` or ``١`` is not read as 2 or 1)."""
    raw = text(form, name).replace(",", "")
    if raw == "":
        return None
    value = numerals.decimal(raw)
    if value is None:
        errors.setdefault(name, []).append(
            f"must be a number written with the digits 0-9, got {raw[:40]!r}"
        )
        return None
    return value


def id_field(form: FormData, name: str, errors: dict[str, list[str]]) -> int | None:
    raw = text(form, name)
    if raw == "":
        return None
    n = numerals.whole(raw, max_digits=18)
    if n is None:
        errors.setdefault(name, []).append("choose one from the list")
    return n


def query_id(
    raw: str | None, field: str = "warehouse_id", why: str = "choose a branch"
) -> int | None:
    """An id a page takes from its query string (``?warehouse_id=2``): None when
    absent; anything but ASCII digits is a 422 naming the parameter (``²`` was a
    500, ``２`` read as 2)."""
    if not raw:
        return None
    n = numerals.whole(raw, max_digits=18)
    if n is None:
        raise invalid(field, why)
    return n


async def branches(db: Any, ctx: AdminContext) -> list[tuple[int, str]]:
    """The branches this staff member works with (their own when scoped)."""
    return list(await db.read(lambda s: dashboard.warehouses(s, ctx.company_id, ctx.warehouse_id)))


async def tax_choices(db: Any, ctx: AdminContext) -> list[tuple[int, str]]:
    """The company's taxes a purchase line may name (not archived), labelled with
    their rate and whether the cost entered includes them: the select of a
    delivery's lines (blank: no tax)."""
    _total, rows = await db.read(
        lambda s: reference.page_of(
            s, "tax", ctx.company_id, Paging(page=1, limit=100), include_archived=False
        )
    )
    return [
        (t["id"], f"{t['name']} ({t['rate']}%, {'included' if t['inclusive'] else 'added'})")
        for t in rows
    ]


def query_date(raw: str | None, field: str) -> dt.date | None:
    """A date a page takes from its query string (``?date_from=2026-11-01``): None
    when absent, a 422 naming the parameter when it is not ``YYYY-MM-DD``."""
    if not raw:
        return None
    try:
        return dt.date.fromisoformat(raw)
    except ValueError:
        raise invalid(field, f"must be a date YYYY-MM-DD, got {raw[:20]!r}") from None
