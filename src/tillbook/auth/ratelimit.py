"""Per-key rate limits with the ``limits`` library (moving window).

Memory storage by default (one process); Redis when ``TILLBOOK_REDIS_URL`` is set,
so every worker and host shares the counters.
"""

from __future__ import annotations

import bisect
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


class WindowMemory(MemoryStorage):
    """``limits``' memory storage with its moving window kept without a background
    pass: the same answers, at a cost that does not grow with the number of keys.

    ``MemoryStorage`` starts, on every hit whose previous pass has finished, a
    task that walks every key it holds and hands each key's list to a worker
    thread to find the expired entries: measured in process, 0.37 ms of CPU a hit
    with two keys and 2.1 ms with 2,000 (a thousand companies of two branches),
    on top of inserting each hit at the front of a list of the whole window.
    Here a key's hits are kept oldest first (a hit is an append), its expired ones
    cut when the key is next used, and keys nobody used for a window are dropped
    by a sweep at most once a minute, in the event loop. Only the moving window
    is kept here (``MovingWindowRateLimiter`` is the one strategy used); the
    counters of the other strategies stay ``MemoryStorage``'s."""

    STORAGE_SCHEME = ["async+tillbook-window-memory"]  # noqa: RUF012 (as limits declares it)
    SWEEP_EVERY_S = 60.0

    def __init__(self) -> None:
        super().__init__()
        # key -> [(hit time, expiry time)], oldest first
        self.windows: dict[str, list[tuple[float, float]]] = {}
        self._swept = time.time()

    def _live(self, key: str, now: float) -> list[tuple[float, float]]:
        if now - self._swept > self.SWEEP_EVERY_S:
            self._swept = now
            for name in [k for k, hits in self.windows.items() if hits[-1][1] <= now]:
                del self.windows[name]
        hits = self.windows.get(key)
        if hits is None:
            return []
        cut = bisect.bisect_right(hits, now, key=lambda hit: hit[1])
        if cut:
            del hits[:cut]
        if not hits:
            del self.windows[key]
        return hits

    async def acquire_entry(self, key: str, limit: int, expiry: int, amount: int = 1) -> bool:
        """``amount`` hits now, unless the window already holds ``limit - amount + 1``
        hits younger than ``expiry`` seconds (``MemoryStorage.acquire_entry``)."""
        if amount > limit:
            return False
        now = time.time()
        hits = self._live(key, now)
        position = len(hits) - 1 - (limit - amount)  # the (limit - amount + 1)th newest
        if position >= 0 and hits[position][0] >= now - expiry:
            return False
        if not hits:
            hits = self.windows[key] = []
        hits.extend([(now, now + expiry)] * amount)
        return True

    async def get_moving_window(self, key: str, limit: int, expiry: int) -> tuple[float, int]:
        """(the oldest hit in the window, the hits in it) (``MemoryStorage``'s)."""
        now = time.time()
        hits = self._live(key, now)
        if not hits:
            return now, 0
        first = bisect.bisect_right(hits, now - expiry, key=lambda hit: hit[0])
        inside = len(hits) - first
        return hits[first if inside else 0][0], inside

    def hit_window(self, key: str, limit: int, expiry: int) -> tuple[bool, float, int]:
        """One hit now, if the window has room, and then the window: ``(allowed,
        the oldest hit in it, the hits in it)``, what ``acquire_entry`` followed by
        ``get_moving_window`` answer, found in one pass (``RateLimiter.hit``, on
        every request of the API)."""
        now = time.time()
        hits = self._live(key, now)
        position = len(hits) - limit  # the limit-th newest
        allowed = not (position >= 0 and hits[position][0] >= now - expiry)
        if allowed:
            if not hits:
                hits = self.windows[key] = []
            hits.append((now, now + expiry))
        if not hits:
            return allowed, now, 0
        first = bisect.bisect_right(hits, now - expiry, key=lambda hit: hit[0])
        inside = len(hits) - first
        return allowed, hits[first if inside else 0][0], inside

    async def clear(self, key: str) -> None:
        await super().clear(key)
        self.windows.pop(key, None)

    async def reset(self) -> int | None:
        count = await super().reset()
        held = len(self.windows)
        self.windows.clear()
        return max(count or 0, held)


class RateLimiter:
    def __init__(self, redis_url: str | None):
        storage: Storage
        if redis_url:
            uri = redis_url if redis_url.startswith("async+") else "async+" + redis_url
            made = storage_from_string(uri)
            assert isinstance(made, Storage)
            storage = made
        else:
            storage = WindowMemory()
        self.storage = storage
        self.limiter = MovingWindowRateLimiter(storage)

    async def hit(self, public_key: str, rate: str) -> Verdict:
        """A request of key ``public_key``, counted against ``rate``: whether it may
        go on, and the window's figures for the ``X-RateLimit-*`` headers."""
        item = _item(rate)
        ident = f"tillbook:key:{public_key}"
        expiry = item.get_expiry()
        if isinstance(self.storage, WindowMemory):
            # In process: the hit and the window in one pass, not two calls
            # through the strategy (8% of a read by id's CPU).
            allowed, oldest, inside = self.storage.hit_window(
                item.key_for(ident), item.amount, expiry
            )
            reset_time, remaining = oldest + expiry, item.amount - inside
        else:
            allowed = await self.limiter.hit(item, ident)
            stats = await self.limiter.get_window_stats(item, ident)
            reset_time, remaining = stats.reset_time, stats.remaining
        retry_after, reset_epoch = window_timing(reset_time, time.time(), expiry)
        return Verdict(
            allowed=allowed,
            limit=item.amount,
            remaining=max(0, remaining),
            reset_epoch=reset_epoch,
            retry_after=retry_after,
        )


@lru_cache(maxsize=1024)
def _item(rate: str) -> RateLimitItem:
    return parse_rate(rate)
