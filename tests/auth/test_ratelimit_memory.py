"""The in-process rate limit storage (``auth.ratelimit.WindowMemory``) answers as
``limits``' own ``MemoryStorage`` does, without its background pass per key."""

from __future__ import annotations

import random

import limits.aio.storage.memory as limits_memory
import pytest
from limits import parse
from limits.aio.storage import MemoryStorage
from limits.aio.strategies import MovingWindowRateLimiter

from tillbook.auth import ratelimit
from tillbook.auth.ratelimit import RateLimiter, WindowMemory


async def test_same_answers_as_limits_memory_storage(monkeypatch: pytest.MonkeyPatch) -> None:
    """20,000 random hits, tests, window reads and clears of several rates and keys,
    on one clock that jumps by 0 to 20 s: every answer equal, the window's reset
    time included."""
    clock = [1_000.0]
    monkeypatch.setattr(ratelimit.time, "time", lambda: clock[0])
    monkeypatch.setattr(limits_memory.time, "time", lambda: clock[0])
    theirs, ours = MovingWindowRateLimiter(MemoryStorage()), MovingWindowRateLimiter(WindowMemory())
    rng = random.Random(1)
    items = [parse("5/second"), parse("3/minute"), parse("10/minute")]
    for _ in range(20_000):
        clock[0] += rng.choice([0, 0.01, 0.1, 0.3, 1, 5, 20])
        item = rng.choice(items)
        ident = f"id{rng.randrange(3)}-{item.amount}"
        cost = rng.choice([1, 1, 1, 2])
        op = rng.random()
        if op < 0.6:
            assert await ours.hit(item, ident, cost=cost) == await theirs.hit(
                item, ident, cost=cost
            )
        elif op < 0.8:
            assert await ours.test(item, ident, cost=cost) == await theirs.test(
                item, ident, cost=cost
            )
        elif op < 0.98:
            mine = await ours.get_window_stats(item, ident)
            want = await theirs.get_window_stats(item, ident)
            assert mine.remaining == want.remaining
            if want.remaining != item.amount:
                assert mine.reset_time == want.reset_time
        else:
            await ours.clear(item, ident)
            await theirs.clear(item, ident)


async def test_keys_nobody_uses_are_swept(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [1_000.0]
    monkeypatch.setattr(ratelimit.time, "time", lambda: clock[0])
    storage = WindowMemory()
    limiter = MovingWindowRateLimiter(storage)
    item = parse("10/minute")
    for n in range(50):
        assert await limiter.hit(item, f"key-{n}")
    assert len(storage.windows) == 50
    clock[0] += 61 + WindowMemory.SWEEP_EVERY_S
    assert await limiter.hit(item, "key-0")
    assert list(storage.windows) == [item.key_for("key-0")]


async def test_the_service_limiter_uses_it_without_redis() -> None:
    limiter = RateLimiter(None)
    assert isinstance(limiter.storage, WindowMemory)
    first = await limiter.hit("pk_test", "2/minute")
    second = await limiter.hit("pk_test", "2/minute")
    third = await limiter.hit("pk_test", "2/minute")
    assert (first.allowed, second.allowed, third.allowed) == (True, True, False)
    assert (first.remaining, second.remaining, third.remaining) == (1, 0, 0)
    assert 1 <= third.retry_after <= 60


async def test_one_pass_hit_answers_as_the_strategy(monkeypatch: pytest.MonkeyPatch) -> None:
    """``RateLimiter.hit`` on ``WindowMemory`` (the hit and the window in one pass)
    gives every verdict the strategy's two calls give on ``limits``' own memory
    storage: allowed, remaining, reset and retry-after, over 5,000 hits of three
    keys and rates on a clock that jumps by 0 to 20 s."""
    clock = [1_000.0]
    monkeypatch.setattr(ratelimit.time, "time", lambda: clock[0])
    monkeypatch.setattr(limits_memory.time, "time", lambda: clock[0])
    ours = RateLimiter(None)
    theirs = RateLimiter(None)
    theirs.storage = MemoryStorage()
    theirs.limiter = MovingWindowRateLimiter(theirs.storage)
    rng = random.Random(2)
    refused = 0
    for _ in range(5_000):
        clock[0] += rng.choice([0, 0, 0.01, 0.1, 0.5, 1, 5, 20])
        key, rate = rng.choice([("pk_a", "5/second"), ("pk_b", "3/minute"), ("pk_c", "10/minute")])
        mine, want = await ours.hit(key, rate), await theirs.hit(key, rate)
        assert mine == want
        refused += not mine.allowed
    assert refused > 100  # the windows filled up, and were refused the same way
