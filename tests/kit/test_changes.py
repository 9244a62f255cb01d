"""Which statements serve a walk of a change feed (``kit.changes``)."""

from __future__ import annotations

import datetime as dt

from tillbook.catalog.changes import _PRODUCTS
from tillbook.kit import changes
from tillbook.kit.cursors import Scope


def _walk(since: dt.datetime) -> changes.Walk:
    return changes.Walk(since=since, limit=100, scope=Scope(b"k" * 32, ("products", 1, 1)))


def test_a_till_polling_gets_the_touched_products_and_a_first_sync_the_walk() -> None:
    """A delta polled within ``RECENT`` of its token is chosen among what was touched
    since (each page gathers that afresh: cheap for a few minutes of changes); the
    first sync, and a till back after longer, walk the branch in id order."""
    recent = _PRODUCTS.recent
    assert recent is not None
    now = dt.datetime.now(dt.UTC)
    for since in (now - dt.timedelta(seconds=61), now - dt.timedelta(minutes=30)):
        chosen, own = changes._for(_walk(since), _PRODUCTS)
        assert chosen is recent
        # looking from an overlap earlier: one write's rows may carry times apart
        assert own[changes.TOUCHED_SINCE.key] == since - changes.OVERLAP
    for since in (now - dt.timedelta(hours=2), changes.EPOCH):
        assert changes._for(_walk(since), _PRODUCTS) == (_PRODUCTS, {})
