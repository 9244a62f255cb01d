"""Per-key rate limits with the ``limits`` library (moving window).

Memory storage by default (one process); Redis when ``TILLBOOK_REDIS_URL`` is set,
so every worker and host shares the counters.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from functools import lru_cache

from limits import RateLimitItem, parse
from limits.aio.storage import MemoryStorage, Storage
from limits.aio.strategies import MovingWindowRateLimiter
from limits.storage import storage_from_string

from tillbook.kit import numerals

ALLOWED_PERIODS = ("second", "minute", "hour", "day")


def parse_rate(rate: str) -> RateLimitItem:
    """``N/minute`` or ``N/day`` (also second/hour); ValueError otherwise."""
    count, sep, period = rate.strip().partition("/")
    n = numerals.whole(count)  # ASCII digits: "１００" is not 100 (kit/numerals.py)
    if not sep or n is None or n < 1 or period not in ALLOWED_PERIODS:
        raise ValueError(f"rate limit must look like 60/minute or 10000/day, got {rate!r}")
    return parse(f"{n}/{period}")


def retry_after(reset_time: float, item: RateLimitItem) -> int:
    """Whole seconds until the window frees a place (``window_timing``'s first half)."""
    return window_timing(reset_time, time.time(), item.get_expiry())[0]


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    limit: int
    remaining: int
    reset_epoch: int
    retry_after: int

    def headers(self) -> dict[str, str]:
        h = {
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(self.remaining),
            "X-RateLimit-Reset": str(self.reset_epoch),
        }
        if not self.allowed:
            h["Retry-After"] = str(self.retry_after)
        return h


def window_timing(oldest_expires: float, now: float, window: int) -> tuple[int, int]:
    """``(retry_after, reset_epoch)`` for a moving window whose oldest hit expires
    at ``oldest_expires`` (Unix seconds), seen at ``now``.

    ``retry_after`` is the whole seconds until that hit leaves the window, rounded up,
    at least 1 and at most the window length; ``reset_epoch`` is the Unix second it
    leaves, never later than ``now`` plus the window. Both come from the one clock
    reading: rounding an already rounded-up reset time again against a later clock
    is what made a 5/minute key answer ``Retry-After: 61``. The clamps also hold
    when the counters live in Redis and another host's clock runs ahead.
    """
    retry_after = min(window, max(1, math.ceil(oldest_expires - now)))
    reset_epoch = min(math.ceil(oldest_expires), math.floor(now) + window)
    return retry_after, max(reset_epoch, math.floor(now))


class RateLimiter:
    def __init__(self, redis_url: str | None):
        storage: Storage
        if redis_url:
            uri = redis_url if redis_url.startswith("async+") else "async+" + redis_url
            made = storage_from_string(uri)
            assert isinstance(made, Storage)
            storage = made
        else:
            storage = MemoryStorage()
        self.storage = storage
        self.limiter = MovingWindowRateLimiter(storage)

    async def hit(self, public_key: str, rate: str) -> Verdict:
        item = _item(rate)
        ident = f"tillbook:key:{public_key}"
        allowed = await self.limiter.hit(item, ident)
        stats = await self.limiter.get_window_stats(item, ident)
        retry_after, reset_epoch = window_timing(stats.reset_time, time.time(), item.get_expiry())
        return Verdict(
            allowed=allowed,
            limit=item.amount,
            remaining=max(0, stats.remaining),
            reset_epoch=reset_epoch,
            retry_after=retry_after,
        )


@lru_cache(maxsize=1024)
def _item(rate: str) -> RateLimitItem:
    return parse_rate(rate)
