"""Reference data that is written once and never changed, cached per process.

A company's chart of accounts, its taxes and its payment modes are inserted and
never updated or deleted: a new rate is a new tax (old order lines keep theirs, as
accounting needs), a new mode is a new row. Every sale needs all three, so reading
them per request would cost two round trips and their SQL for rows that cannot have
changed. They are cached per (database, company): one process serving two databases
never mixes them, and a company only ever sees its own rows.

A reference the cache does not know (a tax or mode created since, by another
process) reloads the company's rows once before it is refused.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Generic, TypeVar

from sqlalchemy import Engine
from sqlalchemy.ext.asyncio import AsyncSession

K = TypeVar("K")
V = TypeVar("V")

Loader = Callable[[AsyncSession, int], Awaitable[dict[K, V]]]


def _database(session: AsyncSession) -> str:
    bind = session.get_bind()
    engine = bind if isinstance(bind, Engine) else bind.engine
    return engine.url.render_as_string()


class ReferenceCache(Generic[K, V]):
    """``load(session, company_id)`` gives every row of a company by key."""

    def __init__(self, load: Loader[K, V]):
        self._load = load
        self._rows: dict[tuple[str, int], dict[K, V]] = {}

    async def get(
        self,
        session: AsyncSession,
        company_id: int,
        wanted: Iterable[K] = (),
        *,
        reload: bool = False,
    ) -> dict[K, V]:
        """The company's rows; read again when any of ``wanted`` is missing, or when
        the caller found a reference missing (``reload``)."""
        key = (_database(session), company_id)
        rows = self._rows.get(key)
        if reload or rows is None or any(w not in rows for w in wanted):
            rows = await self._load(session, company_id)
            if rows:
                self._rows[key] = rows
        return rows
