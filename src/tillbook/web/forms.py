"""Form handling shared by the pages: reading fields, and running a write once.

A form carries a one-time ``form_token`` (``render.form_token``). ``submit`` claims
it with the back-office API's idempotency machinery (``api.idempotent.admin_unit``:
the token is bound to the staff member and to the form's fields), so a form sent
twice (a double click, a reload after POST) does its work once and the second send
is answered with the first one's outcome. A refused write rolls back its claim, so
the corrected form can be sent again."""

from __future__ import annotations

import hashlib
from typing import Any

from fastapi import Request
from starlette.datastructures import FormData, UploadFile

from tillbook.api.idempotent import Work, admin_unit
from tillbook.auth.admin import AdminContext
from tillbook.errors import invalid
from tillbook.kit.bounds import text_problem
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
