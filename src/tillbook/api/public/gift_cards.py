"""Gift cards (DESIGN §18): sell or load one, check its balance. The code travels
in bodies only (URLs end up in logs); lookups by code pass the guessing limits of
``giftcards.guard`` first."""

from __future__ import annotations

from typing import Any

from fastapi import Request

from tillbook.api import envelope, routing
from tillbook.api.body import parse_body
from tillbook.api.deps import DB, CurrentKey
from tillbook.api.idempotent import run_write
from tillbook.api.public import openapi as r
from tillbook.api.responses import JSON
from tillbook.giftcards import guard
from tillbook.payments import gift_cards
from tillbook.payments.schemas import GiftCardCodeIn, GiftCardIn
from tillbook.unit import UnitOfWork

router = routing.public(tags=["gift cards"])


@router.post(
    "/gift-cards",
    openapi_extra=r.write_body(GiftCardIn),
    responses=r.ok(r.GiftCardSold, 429, *r.WRITE),
)
async def post_gift_card(request: Request, key: CurrentKey) -> JSON:
    """Sell a new card (its code in full in this answer only) or load one (``code``)."""
    body, raw = await parse_body(request, GiftCardIn)
    limiter = request.app.state.ratelimiter
    await guard.before(limiter, key, [body.code] if body.code else [])
    shown: dict[str, str | None] = {"code": None}

    async def work(uow: UnitOfWork) -> gift_cards.GiftCardData:
        card, shown["code"] = await gift_cards.sell_card(uow, key, body)
        return card

    async with guard.counting(limiter, key):
        return await run_write(
            request,
            key,
            raw,
            body.unique_id,
            work,
            answer=envelope.ok,
            reveal=lambda answer: gift_cards.reveal_code(answer, shown["code"]),
        )


@router.post(
    "/gift-cards/balance",
    openapi_extra=r.write_body(GiftCardCodeIn),
    responses=r.ok(r.GiftCardBalance, 400, 415, 422, 429),
)
async def gift_card_balance(request: Request, key: CurrentKey, db: DB) -> dict[str, Any]:
    """What a card holds. POST so that the code is in no URL."""
    body, _raw = await parse_body(request, GiftCardCodeIn)
    limiter = request.app.state.ratelimiter
    await guard.before(limiter, key, [body.code])
    async with guard.counting(limiter, key):
        return envelope.ok(
            await db.read(lambda s: gift_cards.check_balance(UnitOfWork(s), key, body))
        )
