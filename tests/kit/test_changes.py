"""Which statements serve a walk of a change feed (``kit.changes``)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from tillbook.catalog.changes import _PRODUCTS
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


class _TwoMoments:
    """``Reads`` whose database moves on between two statements: the touched
    products are read at ``first``, the page at ``second``."""

    def __init__(self, first: dt.datetime, second: dt.datetime) -> None:
        self.first, self.second = first, second
        self.calls: list[dict[str, Any]] = []

    async def one(
        self, statement: Any, params: Mapping[str, Any], **lists: Any
    ) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]]]:
        self.calls.append(dict(params))
        gathering = "ids" in lists
        now = self.first if gathering else self.second
        horizon = {"now": now, "in_recovery": False, "replayed_until": None}
        if gathering:
            return horizon, {"ids": [{"touched_id": 7}, {"touched_id": 3}, {"touched_id": 7}]}
        return horizon, {name: [] for name in ("_rows", *lists)}


async def test_a_recent_walk_begins_when_the_touched_products_were_read() -> None:
    """The page is read by a statement after the touched products' (outside a
    transaction on PostgreSQL): a change that became visible in between is not
    among them, so the sync token comes from the earlier read, and the next delta
    starts before that change (on a replica, replay may jump far ahead between the
    two reads)."""
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    reads = _TwoMoments(now - dt.timedelta(seconds=30), now)
    walk = _walk(now - dt.timedelta(minutes=5))
    page = await changes.read(
        reads, walk, _PRODUCTS, {"company_id": 1, "warehouse_id": 1}, lambda rows, lists: []
    )
    assert page["data"] == [] and page["next_cursor"] is None
    assert page["sync_token"] == changes.iso(reads.first - changes.OVERLAP)
    # the page is chosen among the touched ids, each once
    assert reads.calls[1][changes.TOUCHED.key] == [3, 7]
