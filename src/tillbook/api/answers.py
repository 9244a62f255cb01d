"""Answers a worker serves again from its memory: the public API's catalog reads
(a product or a sale by id, a page of the products' or customers' list, a search,
a page of a change feed, a reference list).

A read by id costs a database round trip, and on a loopback connection the round
trip's system calls, the driver and the database's own work are most of its CPU
(issue 27: a product read cost 3.6 times a ``/health``); a page of 100 costs its
rows' decoding and encoding on top. A till, a register or a web store reads the
same product, the same first page, the same search again and again between the
writes that change them, so the answer's bytes and ETag are kept, by what the
request asked (path and query) and for whom (the key's company and branch: the
answer holds that branch's stock), and served again while nothing the answer may
depend on has been written. A feed page served again carries the ``sync_token``
of when it was read: older, so the next delta reads a little more, never less.

"Nothing written" is ``kit.generations``: a number for the company, and one for
the database, that every committed write of a process of this host changes before
it answers. The two are read before the database is, and an answer is served again
only while both are what they were then: so a read that begins after any write of
this host has answered sees that write, in every worker. The cost is that a
company's writes, any of them, forget all its answers: a shop selling once a
second has its products read from the database about once a second each, no more.

A write of another host does not change this host's numbers. So a worker looks,
at its start and every ``LOOK_EVERY_S`` seconds, at who is connected to the
database (``Database.shares_writes``: every connection of the service names its
page); while another page's process is connected, nothing is kept or served, and
what was kept is dropped. The window left is a host's first writes before the
next look (two seconds at most on a direct connection; behind PgBouncer a host is
seen only while it works, docs/operators/postgresql.md); ``answer_cache_s`` 0
closes it. An answer is also
read again once ``answer_cache_s`` old, which bounds what no look can see (a
statement typed into ``psql``, a process killed between COMMIT and its store).
Only a whole answer is kept (an error raises before it is stored), and only
``MAX_KEPT_BYTES`` of them per worker (bodies, keys and their overhead), the least
recently served dropped first. An answer read from a replica is not kept: the
numbers count a write the replica may not have replayed yet.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from fastapi import Request, Response

from tillbook.api import envelope
from tillbook.api.responses import dumps
from tillbook.auth.context import AuthContext
from tillbook.db import Database
from tillbook.kit import generations

log = logging.getLogger("tillbook.answers")

# How often a worker looks for writers its page does not see (``Answers.watch``).
LOOK_EVERY_S = 2.0
MAX_BYTES = 256 * 1024  # a larger answer is not kept
MAX_KEPT_BYTES = 32 * 1024 * 1024  # a worker's answers in all, the oldest dropped first


def _opaque(tag: str) -> str:
    tag = tag.strip()
    return tag[2:] if tag.startswith("W/") else tag


def tagged(payload: dict[str, Any], basis: Any = None) -> tuple[bytes, str]:
    """``payload`` as JSON and its ETag: a hash of ``basis`` when given (what the
    answer depends on), else of the body."""
    body = dumps(payload)
    tag = f'W/"{hashlib.sha256(body if basis is None else dumps(basis)).hexdigest()[:32]}"'
    return body, tag


def respond(request: Request, body: bytes, tag: str) -> Response:
    """``body`` with its ETag, or a 304 when the request already holds that tag."""
    wanted = request.headers.get("if-none-match")
    if wanted is not None:
        tags = {_opaque(t) for t in wanted.split(",")}
        if "*" in tags or _opaque(tag) in tags:
            return Response(status_code=304, headers={"ETag": tag})
    return Response(body, media_type="application/json", headers={"ETag": tag})


@dataclass(frozen=True, slots=True)
class _Answer:
    stamp: tuple[int, int]
    at: float
    body: bytes
    tag: str
    size: int  # what it holds in memory, counted against ``MAX_KEPT_BYTES``


class Answers:
    """One worker's answers (``app.state.answers``)."""

    def __init__(self, max_age_s: float, page: generations.Generations):
        self.max_age_s = max_age_s
        self._page = page  # the app's database's (``Database.generations``)
        # Until when (``time.monotonic``) the last look found every writer of the
        # database on this page (``watch``); past it, nothing is served or kept.
        self.shared_until = 0.0
        # Moves each time a look drops what was kept: a read that began before
        # (and may have read under another host's writes) keeps nothing.
        self._looks = 0
        self._kept: dict[tuple[str, str, int, int], _Answer] = {}
        self._bytes = 0

    async def serve(
        self,
        request: Request,
        key: AuthContext,
        read: Callable[[], Awaitable[Any]],
        basis: Callable[[Any], Any] | None = None,
        *,
        keep: bool = True,
    ) -> Response:
        """What ``read`` finds, in the envelope, as JSON with its ETag (over
        ``basis`` of it when given: ``tagged``), kept for the next request that asks
        the same for the same company and branch. ``keep`` False: a read of a
        replica, which may not have replayed a write the numbers already count
        (served from memory if kept before, never kept)."""
        now = time.monotonic()
        if self.max_age_s <= 0 or now >= self.shared_until:
            return respond(request, *_tagged(await read(), basis))
        stamp = self._page.stamp(key.company_id)  # before the database: see the module
        looks = self._looks
        scope = request.scope
        query = scope["query_string"]
        kept_as = (
            scope["path"],
            query.decode("latin-1") if query else "",
            key.company_id,
            key.warehouse_id,
        )
        kept = self._kept.pop(kept_as, None)
        if kept is not None:
            if kept.stamp == stamp and now - kept.at < self.max_age_s:
                self._kept[kept_as] = kept  # the most recently served, last to go
                return respond(request, kept.body, kept.tag)
            self._bytes -= kept.size
        body, tag = _tagged(await read(), basis)
        if keep and len(body) <= MAX_BYTES and looks == self._looks:
            self._keep(kept_as, _Answer(stamp, now, body, tag, _size(kept_as, body, tag)))
        return respond(request, body, tag)

    async def look(self, db: Database) -> None:
        """Whether every writer of ``db`` is on this worker's page
        (``Database.shares_writes``): until the next look is due, answers are kept
        and served if so; if not (another host has connected), every kept answer is
        dropped, and none is kept or served until a look finds it alone again. A
        look that fails (the database away) counts as not alone."""
        if self.max_age_s <= 0:
            return
        try:
            alone = await db.shares_writes()
        except Exception as exc:
            log.debug("could not look for other writers: %s", exc)
            alone = False
        if alone and db.is_sqlite:
            self.shared_until = math.inf  # a file of this host: no one else to look for
        elif alone:
            self.shared_until = time.monotonic() + LOOK_EVERY_S * 2
        else:
            if self._kept:
                log.info("another host writes to the database: answers read afresh")
            self.shared_until = 0.0
            self._looks += 1
            self._kept.clear()
            self._bytes = 0

    async def watch(self, db: Database, stop: asyncio.Event) -> None:
        """``look`` every ``LOOK_EVERY_S`` until ``stop`` (the app's lifespan, which
        looks once itself before the first request)."""
        if self.max_age_s <= 0 or db.is_sqlite:
            return
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), LOOK_EVERY_S)
            if not stop.is_set():
                await self.look(db)

    def _keep(self, kept_as: tuple[str, str, int, int], answer: _Answer) -> None:
        """``answer`` as the newest kept, the least recently served dropped past
        ``MAX_KEPT_BYTES`` (an answer no one asks again, a till's delta from its own
        token, goes first)."""
        while self._kept and self._bytes + answer.size > MAX_KEPT_BYTES:
            oldest = next(iter(self._kept))
            self._bytes -= self._kept.pop(oldest).size
        self._kept[kept_as] = answer
        self._bytes += answer.size


# What a kept answer costs beside its body and its key's texts: the tuple, the
# object, the dictionary's slot (measured: 400 bytes for a 116-byte answer).
_OVERHEAD = 400


def _size(kept_as: tuple[str, str, int, int], body: bytes, tag: str) -> int:
    return len(body) + len(kept_as[0]) + len(kept_as[1]) + len(tag) + _OVERHEAD


def _tagged(data: Any, basis: Callable[[Any], Any] | None) -> tuple[bytes, str]:
    return tagged(envelope.ok(data), None if basis is None else envelope.ok(basis(data)))


def of(request: Request) -> Answers:
    """The worker's answers (made with the app, ``app.create_app``)."""
    kept: Answers = request.app.state.answers
    return kept
