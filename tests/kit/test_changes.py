"""Which statements serve a walk of a change feed (``kit.changes``)."""

from __future__ import annotations

import datetime as dt

from tillbook.kit import changes
from tillbook.kit.cursors import Scope


def _walk(since: dt.datetime) -> changes.Walk:
    return changes.Walk(since=since, limit=100, scope=Scope(b"k" * 32, ("products", 1, 1)))


def test_a_till_polling_is_recent_and_a_first_sync_is_not() -> None:
    """A delta polled within ``RECENT`` of its token may be chosen among what was
    touched since (few touches, ``TOUCHED_MOST``: each page gathers them afresh);
    the first sync, and a till back after longer, walk the branch in id order."""
    now = dt.datetime.now(dt.UTC)
    for since in (now - dt.timedelta(seconds=61), now - dt.timedelta(minutes=30)):
        assert changes.is_recent(_walk(since))
    for since in (now - dt.timedelta(hours=2), changes.EPOCH):
        assert not changes.is_recent(_walk(since))
