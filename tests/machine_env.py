"""The bridge a hypothesis state machine uses to drive the app: the machine runs in
a worker thread (hypothesis is synchronous) and hands each coroutine back to
pytest-asyncio's session loop, where the client and the database live."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Coroutine
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx

from tillbook.db import Database

T = TypeVar("T")


@dataclass
class Env:
    loop: asyncio.AbstractEventLoop
    client: httpx.AsyncClient
    db: Database

    def run(self, coro: Coroutine[Any, Any, T] | Awaitable[T]) -> T:
        async def wrap() -> T:
            return await coro

        return asyncio.run_coroutine_threadsafe(wrap(), self.loop).result(timeout=120)
