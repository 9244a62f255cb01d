"""Reference data every sale needs, cached per process.

Every sale resolves its taxes and payment modes, and posts to accounts by code.
Reading them per request costs round trips and SQL for rows that seldom change,
so they are cached per (database, company): one process serving two databases
never mixes them, and a company only ever sees its own rows.

Two kinds of rows are cached, and each kind has its own rule for staleness:

- rows that are only ever inserted, never changed (a chart's code -> account id):
  a wanted key the cache lacks (an account created since, by another process)
  reloads the company's rows once before it is refused;
- rows the back office edits (taxes, payment modes): every edit bumps the
  company's ``reference_version`` in the edit's transaction, and the key lookup
  reads that number on every request (one column more in a statement that runs
  anyway). A caller passes it as ``version``; the cache serves only a copy loaded
  at that version or later, so an edited rate or an archived mode is seen by the
  next request in every worker process, at no extra round trip. A request whose
  version is unknown (``None``) reads the rows from the database.

A copy loaded at version *v* may hold rows newer than *v* (it is read in the
request's own transaction, after the key lookup): never older, which is what
matters.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Generic, TypeVar

from sqlalchemy import Engine
from sqlalchemy.ext.asyncio import AsyncSession

K = TypeVar("K")
V = TypeVar("V")

Loader = Callable[[AsyncSession, int], Awaitable[dict[K, V]]]

# The version of rows that are never changed: any copy will do.
UNVERSIONED = -1


_urls: dict[int, tuple[Engine, str]] = {}


def _database(session: AsyncSession) -> str:
    bind = session.get_bind()
    engine = bind if isinstance(bind, Engine) else bind.engine
    # (the URL rendered once per engine, not three times a sale; the engine is
    # held with it so that its id is never another's)
    found = _urls.get(id(engine))
    if found is None or found[0] is not engine:
        found = _urls[id(engine)] = (engine, engine.url.render_as_string())
    return found[1]


class ReferenceCache(Generic[K, V]):
    """``load(session, company_id)`` gives every row of a company by key."""

    def __init__(self, load: Loader[K, V], *, keep_empty: bool = False):
        """``keep_empty``: a company without rows is a real answer to keep (most
        companies have no promotions); otherwise an empty copy is never kept (a
        company's chart and modes are read before its first row commits)."""
        self._load = load
        self._keep_empty = keep_empty
        self._rows: dict[tuple[str, int], tuple[int, dict[K, V]]] = {}

    async def get(
        self,
        session: AsyncSession,
        company_id: int,
        wanted: Iterable[K] = (),
        *,
        version: int | None = UNVERSIONED,
        reload: bool = False,
    ) -> dict[K, V]:
        """The company's rows as of ``version`` or later; read again when the copy
        is older, when any of ``wanted`` is missing, or when the caller found a
        reference missing (``reload``). ``version=None``: read, and keep nothing."""
        if version is None:
            return await self._load(session, company_id)
        key = (_database(session), company_id)
        cached = self._rows.get(key)
        if (
            reload
            or cached is None
            or cached[0] < version
            or any(w not in cached[1] for w in wanted)
        ):
            rows = await self._load(session, company_id)
            if (rows or self._keep_empty) and (cached is None or cached[0] <= version):
                self._rows[key] = (version, rows)
            return rows
        return cached[1]
