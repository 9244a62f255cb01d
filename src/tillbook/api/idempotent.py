"""Writes: one transaction, idempotency tokens, and the failed-transaction record.

DESIGN.md §7. The token (``Idempotency-Key`` header, else body ``unique_id``) is
claimed first inside the write transaction with ``INSERT … ON CONFLICT DO
NOTHING``. A concurrent twin with the same token blocks on the unique index
until the first commits, then finds the stored response (or, if the first rolled
back, claims the token itself). Same token with another body: 422. The record
and the work it guards commit together.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import Request
from sqlalchemy import delete, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.api.body import decode_json
from tillbook.api.responses import JSON, dumps
from tillbook.auth.admin import AdminContext
from tillbook.auth.context import AuthContext
from tillbook.db import Database
from tillbook.errors import LedgerImbalance, Unprocessable, invalid
from tillbook.kit.bounds import stored_length, text_problem
from tillbook.kit.text import quoted
from tillbook.models import FailedTransaction, IdempotencyRecord
from tillbook.models.base import table_of
from tillbook.unit import QueuedUpdate, UnitOfWork, unresolved

WINDOW = dt.timedelta(hours=24)
TOKEN_LENGTH = stored_length(IdempotencyRecord.token)
_records = table_of(IdempotencyRecord)
# Built once: every write with a token runs the claim and the response.
_CLAIM_PG = (
    pg_insert(_records)
    .on_conflict_do_nothing(index_elements=["warehouse_id", "token", "company_id"])
    .returning(_records.c.id)
)
_CLAIM_SQLITE = (
    sqlite_insert(_records)
    .on_conflict_do_nothing(index_elements=["warehouse_id", "token", "company_id"])
    .returning(_records.c.id)
)
# The stored answer goes with the unit's last statement.
_RESPONSE = QueuedUpdate(_records, ["warehouse_id", "token"], ["response_status", "response_body"])
_ADMIN_SCOPE = _records.c.warehouse_id.is_(None)
_ADMIN_CLAIM_PG = (
    pg_insert(_records)
    .on_conflict_do_nothing(index_elements=["company_id", "token"], index_where=_ADMIN_SCOPE)
    .returning(_records.c.id)
)
_ADMIN_CLAIM_SQLITE = (
    sqlite_insert(_records)
    .on_conflict_do_nothing(index_elements=["company_id", "token"], index_where=_ADMIN_SCOPE)
    .returning(_records.c.id)
)
Work = Callable[[UnitOfWork], Awaitable[dict[str, Any]]]
# A public write's service: its answer, put in its envelope by ``run_write``'s
# ``answer`` (``api/envelope.py``).
Answering = Callable[[UnitOfWork], Awaitable[Any]]
AdminWork = Callable[[AsyncSession], Awaitable[dict[str, Any]]]


def request_hash(method: str, path: str, raw: bytes) -> str:
    canonical = json.dumps(decode_json(raw), sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(f"{method} {path}\n{canonical}".encode()).hexdigest()


async def _claim(
    uow: UnitOfWork,
    company_id: int,
    warehouse_id: int | None,
    token: str,
    digest: str,
) -> tuple[int, dict[str, Any]] | None:
    """None when this request now owns the token; else the stored (status, body).
    A warehouse's token (public API), or a company's (``company_id``, back office)."""
    now = dt.datetime.now(dt.UTC)
    values = {
        "warehouse_id": warehouse_id,
        "company_id": company_id,
        "token": token,
        "request_hash": digest,
        "created_at": now,
    }
    if warehouse_id is not None:
        claim = _CLAIM_PG if uow.is_postgresql else _CLAIM_SQLITE
    else:
        claim = _ADMIN_CLAIM_PG if uow.is_postgresql else _ADMIN_CLAIM_SQLITE
    session = uow.session
    for _ in range(2):
        if await uow.run(claim, values):
            return None
        # (built only now: the expression costs more than the claim's own work)
        scope = (
            (IdempotencyRecord.warehouse_id == warehouse_id)
            & (IdempotencyRecord.company_id == company_id)
            if warehouse_id is not None
            else (IdempotencyRecord.company_id == company_id)
            & IdempotencyRecord.warehouse_id.is_(None)
        )
        record = (
            await session.execute(
                select(IdempotencyRecord).where(scope, IdempotencyRecord.token == token)
            )
        ).scalar_one()
        created = record.created_at
        if created.tzinfo is None:
            created = created.replace(tzinfo=dt.UTC)
        if created < now - WINDOW:
            await session.execute(
                delete(IdempotencyRecord).where(
                    IdempotencyRecord.id == record.id, IdempotencyRecord.company_id == company_id
                )
            )
            continue
        if record.request_hash != digest:
            raise Unprocessable(
                f"Idempotency-Key {quoted(token)} was already used with a different request body"
            )
        if record.response_status is None or record.response_body is None:
            raise Unprocessable(f"Idempotency-Key {quoted(token)} is in an unknown state")
        return record.response_status, json.loads(record.response_body)
    raise AssertionError("unreachable")


def _token(request: Request, body_token: str | None = None) -> str | None:
    token = request.headers.get("idempotency-key") or body_token
    if token is not None:
        problem = text_problem(token)
        if problem is not None:
            raise invalid("Idempotency-Key", problem)
        if not 1 <= len(token) <= TOKEN_LENGTH:
            raise invalid("Idempotency-Key", f"must be 1 to {TOKEN_LENGTH} characters")
    return token


def idempotency_token(request: Request) -> str | None:
    """The request's ``Idempotency-Key``, checked (422 when it cannot be stored)."""
    return _token(request)


async def run_write(
    request: Request,
    key: AuthContext,
    raw: bytes,
    body_token: str | None,
    work: Answering,
    *,
    answer: Callable[[Any], dict[str, Any]],
    reveal: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
) -> JSON:
    """``work`` in one unit of work under the request's idempotency token; its
    result in the envelope ``answer`` gives it is what the request answers and
    what a replay answers again.

    ``reveal``: what only the first answer may show (a new gift card's code) is
    added by it to the answer after the unit commits; the stored answer that a
    replay returns is ``work``'s own, without it."""
    db: Database = request.app.state.db
    token = _token(request, body_token)
    digest = request_hash(request.method, request.url.path, raw) if token else ""

    async def unit(uow: UnitOfWork) -> tuple[int, dict[str, Any], bool]:
        if token:
            stored = await _claim(uow, key.company_id, key.warehouse_id, token, digest)
            if stored is not None:
                return stored[0], stored[1], True
        result = answer(await work(uow))
        if token:
            response = {"response_status": 200, "response_body": dumps(result).decode()}
            # (company_id: unused while a warehouse's records leave it empty; once the
            # column is NOT NULL, ``QueuedUpdate`` finds the row by it too)
            row = {
                "company_id": key.company_id,
                "warehouse_id": key.warehouse_id,
                "token": token,
                **response,
            }
            uow.defer(_RESPONSE, [row])
        return 200, result, False

    wait = request.app.state.settings.idempotency_wait
    try:
        status, body, replayed = await db.unit(unit, lock_timeout_s=wait)
    except LedgerImbalance as exc:
        await record_failed_transaction(db, key, exc)
        raise
    if reveal is not None and not replayed:
        body = reveal(body)
    return JSON(
        body, status_code=status, headers={"Idempotent-Replayed": "true"} if replayed else None
    )


async def run_admin_write(
    request: Request,
    ctx: AdminContext,
    work: AdminWork,
    *,
    status: int = 200,
    headers: Callable[[dict[str, Any]], dict[str, str]] | None = None,
) -> JSON:
    """A back-office write in one transaction, idempotent on ``Idempotency-Key``:
    the same token and body answer the stored response (``Idempotent-Replayed:
    true``) and change nothing; the same token with another body (or from another
    staff member) is a 422; a twin still in flight is waited for, then a 409.

    ``work`` gets the session and returns the response body; ``headers`` derives
    response headers from it (an ``ETag``), for a replay too. Every admin POST
    route goes through here (or ``run_admin_unit``), after its body was parsed and
    its permission checked::

        return await run_admin_write(request, ctx, lambda s: service.add(s, ...))
    """
    return await run_admin_unit(
        request, ctx, lambda uow: work(uow.session), status=status, headers=headers
    )


async def run_admin_unit(
    request: Request,
    ctx: AdminContext,
    work: Work,
    *,
    status: int = 200,
    headers: Callable[[dict[str, Any]], dict[str, str]] | None = None,
    content: bytes | None = None,
) -> JSON:
    """``run_admin_write`` for work that needs the whole unit of work (events to
    emit, stock to receive, the books to post). ``content``: what the token is bound
    to when the body is not JSON: an upload's file, since a multipart envelope's
    boundary changes from one send of the same file to the next (and the body
    stream is consumed once the form is read). Otherwise the JSON body is hashed,
    as for the public API."""
    code, body, replayed = await admin_unit(
        request, ctx, work, status=status, token=_token(request), content=content
    )
    extra = headers(body) if headers is not None else {}
    if replayed:
        extra["Idempotent-Replayed"] = "true"
    return JSON(body, status_code=code, headers=extra or None)


async def admin_unit(
    request: Request,
    ctx: AdminContext,
    work: Work,
    *,
    status: int = 200,
    token: str | None,
    content: bytes | None = None,
) -> tuple[int, dict[str, Any], bool]:
    """The machinery of ``run_admin_unit``, answering (status, body, replayed): the
    web back office passes the one-time token of a form (its ``form_token`` field)
    and the form's fields as ``content``, so a form sent twice does its work once."""
    db: Database = request.app.state.db
    digest = ""
    if token:
        if content is not None:
            file_hash = hashlib.sha256(content).hexdigest()
            body_hash = hashlib.sha256(
                f"{request.method} {request.url.path}\nfile {file_hash}".encode()
            ).hexdigest()
        else:
            raw = await request.body()
            body_hash = request_hash(
                request.method, request.url.path, raw if raw.strip() else b"null"
            )
        digest = hashlib.sha256(f"staff {ctx.user_id}:{body_hash}".encode()).hexdigest()

    async def unit(uow: UnitOfWork) -> tuple[int, dict[str, Any], bool]:
        if token:
            stored = await _claim(uow, ctx.company_id, None, token, digest)
            if stored is not None:
                return stored[0], stored[1], True
        result = await work(uow)
        if token:
            await uow.session.execute(
                update(_records)
                .where(
                    _records.c.company_id == ctx.company_id,
                    _ADMIN_SCOPE,
                    _records.c.token == token,
                )
                .values(response_status=status, response_body=dumps(result).decode())
            )
        return status, result, False

    wait = request.app.state.settings.idempotency_wait
    return await db.unit(unit, lock_timeout_s=wait)


async def record_failed_transaction(db: Database, key: AuthContext, exc: LedgerImbalance) -> None:
    """Spec: kept in its own transaction after the failed one rolled back."""

    async def write(session: AsyncSession) -> None:
        session.add(
            FailedTransaction(
                company_id=key.company_id,
                warehouse_id=key.warehouse_id,
                reason=exc.reason,
                transaction_data=dumps(
                    {
                        "entries": exc.entries,
                        "context": {
                            "user_id": key.user_id,
                            # (a sale that failed took no number: it names none)
                            "narration": unresolved(exc.narration, "(no number)"),
                        },
                    }
                ).decode(),
                timestamp=dt.datetime.now(dt.UTC),
            )
        )

    await db.standalone(write)
