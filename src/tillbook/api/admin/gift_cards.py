"""Gift cards and store credit in the back office (DESIGN §18): the company's cards
and credit balances (codes masked), one card's statement, and selling a card for a
branch (its code in the first answer only; a replay has it removed).

Who may (``auth/roles.py``): reading is ``books.read`` (the balances are what 21300
owes); selling is ``payments.receive`` for the branch, as taking a customer's
money at the counter is."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Request

from tillbook.api import envelope, routing
from tillbook.api.admin.deps import Allowed, path_id, query_id, require_json
from tillbook.api.admin.money import branch
from tillbook.api.body import openapi_body, parse_body
from tillbook.api.deps import DB
from tillbook.api.idempotent import admin_unit, idempotency_token
from tillbook.api.responses import JSON
from tillbook.auth.admin import AdminContext
from tillbook.errors import invalid
from tillbook.giftcards import queries
from tillbook.kit.pagination import parse_page
from tillbook.payments import gift_cards
from tillbook.payments.schemas import BranchGiftCardIn
from tillbook.unit import UnitOfWork

router = routing.admin("/gift-cards", tags=["admin: gift cards"])
Reader = Annotated[AdminContext, Allowed("books.read")]
KINDS = ("card", "credit")


@router.get("")
async def list_cards(
    ctx: Reader,
    db: DB,
    kind: str | None = None,
    customer_id: str | None = None,
    page: str | None = None,
    limit: str | None = None,
) -> dict[str, Any]:
    """Cards and store-credit balances, newest first; ``kind`` card or credit."""
    if kind is not None and kind not in KINDS:
        raise invalid("kind", "must be card or credit")
    customer = query_id(customer_id, "customer_id")
    paging = parse_page(page, limit)
    data = await db.read(
        lambda s: queries.card_page(s, ctx.company_id, paging, kind=kind, customer_id=customer)
    )
    return envelope.ok(data)


@router.get("/{card_id}")
async def card_statement(card_id: str, ctx: Reader, db: DB) -> dict[str, Any]:
    """One card's or credit balance's movements, each naming its order and entry."""
    cid = path_id(card_id, "gift card")
    return envelope.ok(await db.read(lambda s: queries.statement(s, ctx.company_id, cid)))


@router.post("", status_code=201, openapi_extra=openapi_body(BranchGiftCardIn))
async def sell_card(
    request: Request,
    ctx: Annotated[AdminContext, Allowed("payments.receive", per_warehouse=True)],
) -> JSON:
    require_json(request)
    body, _raw = await parse_body(request, BranchGiftCardIn)
    wid = branch(ctx, body.warehouse_id, "payments.receive")
    shown: dict[str, str | None] = {"code": None}

    async def work(uow: UnitOfWork) -> dict[str, Any]:
        card, shown["code"] = await gift_cards.sell_in_branch(
            uow, ctx.company_id, wid, ctx.user_id, body
        )
        return envelope.ok(card)

    status, answer, replayed = await admin_unit(
        request, ctx, work, status=201, token=idempotency_token(request)
    )
    if replayed:
        return JSON(answer, status_code=status, headers={"Idempotent-Replayed": "true"})
    return JSON(gift_cards.reveal_code(answer, shown["code"]), status_code=status)
