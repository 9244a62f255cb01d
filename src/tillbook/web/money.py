"""Money in and out in the browser: a customer's or a supplier's payment from the
party's page, allocated to the open invoices it lists, with a printable receipt;
an expense paid now or pending, and approving and paying a pending one; money moved
between two payment modes' accounts (takings paid into the bank).

Every write goes through ``payments.office``: the till's own services acting for
one branch (``auth.context.acting_for``), so idempotency, locking and postings are
those of the public ``POST /payments`` and ``POST /expenses``, and each is audited.
Who may is the role table's (``auth/roles.py``): ``payments.receive`` (a cashier
too) or ``payments.make``, ``expenses.write``, ``expenses.approve``,
``money.move``, each for the branch the form names. Every form carries a one-time
token (``forms.submit``); a refusal renders the form again with each message
beside its field, nothing written."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Annotated, Any

from fastapi import Request
from fastapi.responses import Response
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.datastructures import FormData

from tillbook.api import routing
from tillbook.api.admin.deps import path_id
from tillbook.api.deps import DB
from tillbook.auth.admin import AdminContext
from tillbook.auth.context import acting_for
from tillbook.errors import Conflict, NotFound, ValidationFailed
from tillbook.kit import numerals
from tillbook.kit.pagination import Page as Paging
from tillbook.kit.pagination import parse_page
from tillbook.parties import service as party_service
from tillbook.payments import expenses, moves, office, queries, setup
from tillbook.payments import service as payment_service
from tillbook.payments.schemas import AccountMoveIn, ExpenseIn, ExpensePaymentIn, PaymentIn
from tillbook.unit import UnitOfWork
from tillbook.web import document_currency
from tillbook.web.forms import (
    branches,
    decimal_field,
    id_field,
    parse_model,
    see_other,
    submit,
    text,
    values,
)
from tillbook.web.render import render
from tillbook.web.session import Page, read_form

router = routing.pages()

Staff = Annotated[AdminContext, Page()]
# party path segment -> (party kind, payment type, the permission that records it)
PAYMENT_OF = {
    "customers": ("customer", "in", "payments.receive"),
    "suppliers": ("supplier", "out", "payments.make"),
}
PERMISSION_OF_TYPE = {"in": "payments.receive", "out": "payments.make"}
EVERYTHING = Paging(page=1, limit=100)


def _today() -> str:
    return dt.date.today().isoformat()


async def _allowed_branches(db: Any, ctx: AdminContext, permission: str) -> list[tuple[int, str]]:
    """The branches where this staff member may ``permission``; none: a 403 that
    names the permission."""
    shops = [(i, n) for i, n in await branches(db, ctx) if ctx.can(permission, i)]
    if not shops:
        ctx.require(permission, ctx.warehouse_id)
        raise NotFound("no branch to record it in")
    return shops


def _chosen(raw: str | None, shops: list[tuple[int, str]]) -> int:
    ids = [i for i, _n in shops]
    chosen = numerals.whole(raw) if raw else None
    if chosen is not None and chosen in ids:
        return chosen
    return ids[0]


def _branch_field(
    form: FormData, shops: list[tuple[int, str]], errors: dict[str, list[str]]
) -> int | None:
    wid = id_field(form, "warehouse_id", errors)
    if wid is None and "warehouse_id" not in errors:
        errors["warehouse_id"] = ["choose a branch"]
    return wid


async def _modes(db: Any, ctx: AdminContext) -> list[dict[str, Any]]:
    _total, rows = await db.read(
        lambda s: setup.modes_page(s, ctx.company_id, EVERYTHING, include_archived=False)
    )
    return list(rows)


def _required(value: Any, name: str, message: str, errors: dict[str, list[str]]) -> None:
    if value is None and name not in errors:
        errors[name] = [message]


# --- payments from a party's page ---------------------------------------------------------


async def _payment_page(
    request: Request,
    segment: str,
    ctx: AdminContext,
    db: Any,
    pid: int,
    *,
    status: int = 200,
    errors: dict[str, list[str]] | None = None,
    form_values: dict[str, str] | None = None,
) -> Response:
    kind, payment_type, permission = PAYMENT_OF[segment]
    shops = await _allowed_branches(db, ctx, permission)
    party = await db.read(lambda s: party_service.read(s, ctx.company_id, kind, pid))
    shown = form_values or {}
    wid = _chosen(shown.get("warehouse_id") or request.query_params.get("warehouse_id"), shops)

    async def read(s: AsyncSession) -> payment_service.UserInvoices:
        key = await acting_for(s, ctx.company_id, wid, ctx.user_id)
        return await payment_service.user_invoices(s, key, str(pid))

    open_invoices = await db.read(read)
    modes = await _modes(db, ctx)
    if not form_values:
        cash = next((m["id"] for m in modes if m["code"] == "cash"), "")
        shown = {"payment_mode_id": str(cash), "date": _today()}
    return render(
        request,
        "payment_new.html",
        status=status,
        segment=segment,
        kind=kind,
        payment_type=payment_type,
        party=party,
        branches=shops,
        branch=wid,
        invoices=open_invoices["invoices"],
        balance=open_invoices["user"]["balance"],
        total_due=open_invoices["total_due"],
        modes=[(m["id"], m["name"]) for m in modes],
        currencies=await document_currency.choices(db, ctx.company_id),
        errors=errors or {},
        values=shown,
    )


def _allocation_errors(errors: dict[str, list[str]], order: list[int]) -> dict[str, list[str]]:
    """The service's ``invoices.{i}.…`` messages beside the invoice's row."""
    shown: dict[str, list[str]] = {}
    for name, messages in errors.items():
        parts = name.split(".")
        i = numerals.whole(parts[1]) if len(parts) >= 2 and parts[0] == "invoices" else None
        if i is not None and i < len(order):
            shown.setdefault(f"alloc-{order[i]}", []).extend(messages)
            continue
        shown.setdefault(name, []).extend(messages)
    return shown


async def _record_payment(
    request: Request, segment: str, ctx: AdminContext, db: Any, pid: int
) -> Response:
    _kind, payment_type, permission = PAYMENT_OF[segment]
    shops = await _allowed_branches(db, ctx, permission)
    form = await read_form(request)
    errors: dict[str, list[str]] = {}
    wid = _branch_field(form, shops, errors)
    amount = decimal_field(form, "amount", errors)
    _required(amount, "amount", "enter the amount paid", errors)
    mode = id_field(form, "payment_mode_id", errors)
    _required(mode, "payment_mode_id", "choose how it was paid", errors)
    order: list[int] = []
    allocations: list[dict[str, Any]] = []
    for name in sorted({k for k in form if k.startswith("alloc-")})[:500]:
        invoice_id = numerals.whole(name.removeprefix("alloc-"))
        if invoice_id is None:
            continue
        share = decimal_field(form, name, errors)
        if share is not None and share != 0:
            order.append(invoice_id)
            allocations.append({"order_id": invoice_id, "amount": share})
    body: dict[str, Any] = {
        "user_id": pid,
        "payment_type": payment_type,
        "amount": amount,
        "payment_mode_id": mode,
        "date": text(form, "date") or None,
        "reference": text(form, "reference") or None,
        "notes": text(form, "notes") or None,
        "invoices": allocations or None,
        **document_currency.read(form, errors),
    }
    try:
        if wid is not None:
            ctx.require(permission, wid)
        if errors:
            raise ValidationFailed(errors)
        parsed = parse_model(PaymentIn, body)
        assert wid is not None
        branch = wid

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            return dict(
                await office.record_payment(
                    uow,
                    ctx.company_id,
                    branch,
                    ctx.user_id,
                    parsed,
                    settle_oldest_first=not allocations,
                )
            )

        done, _replayed = await submit(request, ctx, work)
    except ValidationFailed as exc:
        return await _payment_page(
            request,
            segment,
            ctx,
            db,
            pid,
            status=422,
            errors=_allocation_errors(exc.errors, order),
            form_values=values(form),
        )
    return see_other(f"/payments/{done['payment_id']}")


def _payment_routes(segment: str) -> None:
    kind = PAYMENT_OF[segment][0]

    @router.get(f"/{segment}/{{party_id}}/payment", name=f"web_{segment}_payment")
    async def payment_form(request: Request, party_id: str, ctx: Staff, db: DB) -> Response:
        return await _payment_page(request, segment, ctx, db, path_id(party_id, kind))

    @router.post(f"/{segment}/{{party_id}}/payment", name=f"web_{segment}_payment_record")
    async def payment_record(request: Request, party_id: str, ctx: Staff, db: DB) -> Response:
        return await _record_payment(request, segment, ctx, db, path_id(party_id, kind))


for _segment in PAYMENT_OF:
    _payment_routes(_segment)


@router.get("/payments/{payment_id}")
async def receipt(request: Request, payment_id: str, ctx: Staff, db: DB) -> Response:
    """A payment's receipt, printable: for whoever may read the branch's books or
    record such a payment there (a cashier prints the receipt they just took)."""
    paid = await db.read(
        lambda s: queries.payment_receipt(s, ctx.company_id, path_id(payment_id, "payment"))
    )
    wid = paid["warehouse_id"]
    if not ctx.can("books.read", wid):
        ctx.require(PERMISSION_OF_TYPE[paid["payment_type"]], wid)
    return render(request, "payment_receipt.html", payment=paid)


# --- expenses -----------------------------------------------------------------------------


async def _expense_page(
    request: Request,
    ctx: AdminContext,
    db: Any,
    *,
    status: int = 200,
    errors: dict[str, list[str]] | None = None,
    form_values: dict[str, str] | None = None,
) -> Response:
    shops = await _allowed_branches(db, ctx, "expenses.write")
    _total, categories = await db.read(
        lambda s: setup.expense_categories_page(
            s, ctx.company_id, EVERYTHING, include_archived=False
        )
    )
    return render(
        request,
        "expense_new.html",
        status=status,
        branches=shops,
        categories=[(c["id"], c["name"]) for c in categories],
        modes=[(m["id"], m["name"]) for m in await _modes(db, ctx)],
        currencies=await document_currency.choices(db, ctx.company_id),
        errors=errors or {},
        values=form_values or {"warehouse_id": str(shops[0][0]), "date": _today()},
    )


@router.get("/expenses/new")
async def expense_new(request: Request, ctx: Staff, db: DB) -> Response:
    return await _expense_page(request, ctx, db)


@router.post("/expenses/new")
async def expense_create(request: Request, ctx: Staff, db: DB) -> Response:
    shops = await _allowed_branches(db, ctx, "expenses.write")
    form = await read_form(request)
    errors: dict[str, list[str]] = {}
    wid = _branch_field(form, shops, errors)
    category = id_field(form, "expense_category_id", errors)
    _required(category, "expense_category_id", "choose a category", errors)
    amount = decimal_field(form, "amount", errors)
    _required(amount, "amount", "enter the amount", errors)
    if not text(form, "date") and "date" not in errors:
        errors["date"] = ["enter the date of the expense"]
    body = {
        "expense_category_id": category,
        "amount": amount,
        "date": text(form, "date"),
        "payment_mode_id": id_field(form, "payment_mode_id", errors),
        "reference": text(form, "reference") or None,
        "notes": text(form, "notes") or None,
        **document_currency.read(form, errors),
    }
    try:
        if wid is not None:
            ctx.require("expenses.write", wid)
        if errors:
            raise ValidationFailed(errors)
        parsed = parse_model(ExpenseIn, body)
        assert wid is not None
        branch = wid

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            return dict(
                await office.record_expense(uow, ctx.company_id, branch, ctx.user_id, parsed)
            )

        done, _replayed = await submit(request, ctx, work)
    except ValidationFailed as exc:
        return await _expense_page(
            request, ctx, db, status=422, errors=exc.errors, form_values=values(form)
        )
    return see_other(f"/expenses?recorded={done['expense_id']}")


async def _pay_page(
    request: Request,
    ctx: AdminContext,
    db: Any,
    eid: int,
    *,
    status: int = 200,
    errors: dict[str, list[str]] | None = None,
    form_values: dict[str, str] | None = None,
    message: str | None = None,
) -> Response:
    expense = await db.read(lambda s: queries.expense_one(s, ctx.company_id, eid))
    if expense["warehouse_id"] is None:
        raise NotFound(f"expense {eid} not found")
    ctx.require("expenses.approve", expense["warehouse_id"])
    names = dict(await branches(db, ctx))
    modes = await _modes(db, ctx)
    bank = next((m["id"] for m in modes if m["code"] == "bank"), "")
    return render(
        request,
        "expense_pay.html",
        status=status,
        expense=expense,
        branch=names.get(expense["warehouse_id"], ""),
        modes=[(m["id"], m["name"]) for m in modes],
        errors=errors or {},
        values=form_values or {"payment_mode_id": str(bank), "date": _today()},
        message=message,
    )


@router.get("/expenses/{expense_id}/pay")
async def expense_pay_form(request: Request, expense_id: str, ctx: Staff, db: DB) -> Response:
    return await _pay_page(request, ctx, db, path_id(expense_id, "expense"))


@router.post("/expenses/{expense_id}/pay")
async def expense_pay(request: Request, expense_id: str, ctx: Staff, db: DB) -> Response:
    eid = path_id(expense_id, "expense")
    wid = await db.read(lambda s: expenses.expense_branch(s, ctx.company_id, eid))
    if wid is None:
        raise NotFound(f"expense {eid} not found")
    ctx.require("expenses.approve", wid)
    form = await read_form(request)
    errors: dict[str, list[str]] = {}
    mode = id_field(form, "payment_mode_id", errors)
    _required(mode, "payment_mode_id", "choose how it is paid", errors)
    body = {
        "payment_mode_id": mode,
        "date": text(form, "date") or None,
        "reference": text(form, "reference") or None,
    }
    try:
        if errors:
            raise ValidationFailed(errors)
        parsed = parse_model(ExpensePaymentIn, body)
        branch = wid

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            return dict(
                await office.pay_expense(uow, ctx.company_id, branch, ctx.user_id, eid, parsed)
            )

        await submit(request, ctx, work)
    except ValidationFailed as exc:
        return await _pay_page(
            request, ctx, db, eid, status=422, errors=exc.errors, form_values=values(form)
        )
    except Conflict as exc:
        return await _pay_page(request, ctx, db, eid, status=409, message=exc.message)
    return see_other(f"/expenses/{eid}/pay")


# --- money moved between cash and bank -------------------------------------------------------


async def _moves_page(
    request: Request,
    ctx: AdminContext,
    db: Any,
    *,
    status: int = 200,
    errors: dict[str, list[str]] | None = None,
    form_values: dict[str, str] | None = None,
) -> Response:
    shops = await _allowed_branches(db, ctx, "money.move")
    paging = parse_page(request.query_params.get("page"), "25")
    data = await db.read(
        lambda s: moves.moves_page(s, ctx.company_id, [i for i, _n in shops], paging)
    )
    modes = await _modes(db, ctx)
    by_code = {m["code"]: str(m["id"]) for m in modes}
    return render(
        request,
        "money_moves.html",
        status=status,
        data=data,
        branches=shops,
        warehouse_names=dict(shops),
        modes=[(m["id"], f"{m['name']} ({m['account_code']})") for m in modes],
        errors=errors or {},
        values=form_values
        or {
            "warehouse_id": str(shops[0][0]),
            "from_payment_mode_id": by_code.get("cash", ""),
            "to_payment_mode_id": by_code.get("bank", ""),
            "date": _today(),
        },
    )


@router.get("/money-moves")
async def moves_list(request: Request, ctx: Staff, db: DB) -> Response:
    return await _moves_page(request, ctx, db)


@router.post("/money-moves")
async def move(request: Request, ctx: Staff, db: DB) -> Response:
    shops = await _allowed_branches(db, ctx, "money.move")
    form = await read_form(request)
    errors: dict[str, list[str]] = {}
    wid = _branch_field(form, shops, errors)
    source = id_field(form, "from_payment_mode_id", errors)
    _required(source, "from_payment_mode_id", "choose where the money comes from", errors)
    target = id_field(form, "to_payment_mode_id", errors)
    _required(target, "to_payment_mode_id", "choose where the money goes", errors)
    amount: Decimal | None = decimal_field(form, "amount", errors)
    _required(amount, "amount", "enter the amount", errors)
    body = {
        "from_payment_mode_id": source,
        "to_payment_mode_id": target,
        "amount": amount,
        "date": text(form, "date") or None,
        "reference": text(form, "reference") or None,
        "notes": text(form, "notes") or None,
    }
    try:
        if wid is not None:
            ctx.require("money.move", wid)
        if errors:
            raise ValidationFailed(errors)
        parsed = parse_model(AccountMoveIn, body)
        assert wid is not None
        branch = wid

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            return await office.move_money(uow, ctx.company_id, branch, ctx.user_id, parsed)

        done, _replayed = await submit(request, ctx, work)
    except ValidationFailed as exc:
        return await _moves_page(
            request, ctx, db, status=422, errors=exc.errors, form_values=values(form)
        )
    return see_other(f"/money-moves?moved={done['journal_entry_id']}")
