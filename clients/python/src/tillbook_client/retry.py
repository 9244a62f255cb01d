"""When to retry, and how long to wait.

Retried: 429 and 503 (and a 409 that carries ``Retry-After``: a concurrent twin
holds the same idempotency token), and connection failures and timeouts. A POST
keeps its ``Idempotency-Key`` across retries, so a retry of a write that did reach
the service replays its answer instead of recording it twice. The wait is
``Retry-After`` when the service sends one, else the spec's full jitter:
``random(0, min(cap, base × 2^attempt))``; at most ``max_attempts`` sends, and a
``Retry-After`` beyond ``max_wait`` is not slept through (the error is raised)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

RETRY_STATUSES = frozenset({429, 503})


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 5
    base: float = 0.5
    cap: float = 30.0
    max_wait: float = 120.0
    rng: random.Random = field(default_factory=random.Random, compare=False, repr=False)

    def backoff(self, attempt: int) -> float:
        """Full jitter for the wait after failed send number ``attempt`` (0-based)."""
        return self.rng.uniform(0, min(self.cap, self.base * (2**attempt)))

    def wait(self, attempt: int, retry_after: float | None) -> float | None:
        """Seconds to wait before the next send, or None to give up."""
        if attempt + 1 >= self.max_attempts:
            return None
        if retry_after is not None:
            return retry_after if retry_after <= self.max_wait else None
        return self.backoff(attempt)


def retryable_status(status: int, has_retry_after: bool) -> bool:
    return status in RETRY_STATUSES or (status == 409 and has_retry_after)


NO_RETRY = RetryPolicy(max_attempts=1)
