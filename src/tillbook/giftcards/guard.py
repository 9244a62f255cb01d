"""Guessing defended (DESIGN §18): rate limits on looking a gift card up by code.

Two moving windows, in the app's rate limiter storage (shared through Redis when
configured), checked before any lookup and counted after it:

- per API key (or register): wrong codes. A till that mistypes now and then is
  never stopped; a key walking the code space is stopped after ``KEY_FAILURES``
  and must wait for the window to move.
- per card (per code's keyed hash, so a wrong code counts against itself too):
  every lookup, right or wrong. A leaked code cannot be polled for its balance
  beyond ``CARD_LOOKUPS``.

A refusal is a 429 with ``Retry-After``, before the database is read. The code
space itself (``giftcards.codes``) is what makes guessing hopeless; the limits
keep it so whatever the number of keys an attacker holds is small.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager

from limits import RateLimitItem, parse

from tillbook.auth.context import AuthContext
from tillbook.auth.ratelimit import RateLimiter, retry_after
from tillbook.errors import RateLimited, ValidationFailed
from tillbook.giftcards import codes

KEY_FAILURES: RateLimitItem = parse("20/hour")
CARD_LOOKUPS: RateLimitItem = parse("30/hour")


def _key_ident(key: AuthContext) -> str:
    who = key.actor.key_id if key.actor.key_id is not None else f"user-{key.user_id}"
    return f"tillbook:gift-card-failures:{key.company_id}:{who}"


def _card_idents(company_id: int, texts: Iterable[str]) -> list[str]:
    """One ident per distinct code as stored; a code of the wrong shape is counted
    under its text's hash (it cannot be a card, but it is a guess all the same)."""
    out = []
    for text in texts:
        normal = codes.normalize(text) or text
        out.append(f"tillbook:gift-card-lookups:{codes.lookup_key(company_id, normal)}")
    return sorted(set(out))


async def _refuse_if_full(limiter: RateLimiter, item: RateLimitItem, ident: str, what: str) -> None:
    if await limiter.limiter.test(item, ident):
        return
    stats = await limiter.limiter.get_window_stats(item, ident)
    wait = retry_after(stats.reset_time, item)
    raise RateLimited(
        f"too many gift card {what}; retry after {wait} seconds",
        headers={"Retry-After": str(wait)},
    )


async def before(limiter: RateLimiter, key: AuthContext, texts: Iterable[str]) -> None:
    """Refuse (429) a request naming gift card codes when this key has guessed wrong
    too often, or one of the codes has been looked up too often; count the lookups."""
    texts = list(texts)
    if not texts:
        return
    await _refuse_if_full(limiter, KEY_FAILURES, _key_ident(key), "codes refused for this key")
    idents = _card_idents(key.company_id, texts)
    for ident in idents:
        await _refuse_if_full(limiter, CARD_LOOKUPS, ident, "lookups of this code")
    for ident in idents:
        await limiter.limiter.hit(CARD_LOOKUPS, ident)


async def wrong(limiter: RateLimiter, key: AuthContext) -> None:
    """Count a code that named no usable card against the key."""
    await limiter.limiter.hit(KEY_FAILURES, _key_ident(key))


@asynccontextmanager
async def counting(limiter: RateLimiter, key: AuthContext) -> AsyncIterator[None]:
    """Around a request that looks codes up: a 422 naming a code field (``code``,
    ``all_payments.N.gift_card_code``) counts as a wrong guess for the key."""
    try:
        yield
    except ValidationFailed as exc:
        if any(f == "code" or f.endswith(".gift_card_code") for f in exc.errors):
            await wrong(limiter, key)
        raise
