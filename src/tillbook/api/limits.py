"""The request body cap, enforced while the body arrives (DESIGN.md §12).

``BodyLimit`` sits in front of every route (public, admin, terminal callbacks), so
it runs before an API key, a signature or an admin token is looked at: a client
without credentials cannot make the service read, hold or parse more than
``TILLBOOK_MAX_BODY_BYTES``.

- A ``Content-Length`` above the cap is refused at once, before a byte of the body
  is read (a client that sent ``Expect: 100-continue`` is not even asked for it).
- Otherwise (chunked bodies, or a length within the cap) the bytes of each
  ``http.request`` message are counted as the application reads them; the read
  that crosses the cap stops the request, and whatever the application was doing
  with it is replaced by the 413.

Keep-alive: HTTP lets a server keep the connection after a refused body only by
reading the rest of it (the server discards what follows the answer). That is
done when the rest is known to be small (a declared length at most twice the
cap), so a client a little over the limit keeps its connection; otherwise the
answer carries ``Connection: close`` and the server reads no further.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tillbook.api.responses import JSON
from tillbook.errors import TillbookError


class BodyTooLarge(TillbookError):
    status_code = 413

    def __init__(self, max_bytes: int):
        super().__init__(f"request body exceeds {max_bytes} bytes")


class _Overflow(Exception):
    """Raised from ``receive`` when the body read so far crosses the cap."""


def _declared_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None  # the HTTP server refuses such a request before us
    return None


class BodyLimit:
    """``max_bytes`` for every request, but ``larger`` (path prefix -> bytes) for the
    few routes whose bodies are files (the back office's CSV imports)."""

    def __init__(self, app: ASGIApp, max_bytes: int, larger: dict[str, int] | None = None):
        self.app = app
        self.max_bytes = max_bytes
        self.larger = larger or {}

    def _cap(self, scope: Scope) -> int:
        path = scope.get("path", "")
        for prefix, cap in self.larger.items():
            if path.startswith(prefix):
                return max(cap, self.max_bytes)
        return self.max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        cap = self._cap(scope)
        declared = _declared_length(scope)
        if declared is not None and declared > cap:
            await self._refuse(scope, receive, send, cap, keep_alive=declared <= 2 * cap)
            return

        received = 0
        over = False
        started = False

        async def counting_receive() -> Message:
            nonlocal received, over
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > cap:
                    over = True
                    raise _Overflow
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if over:
                return  # the application's answer to a body it never got is dropped
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counting_receive, guarded_send)
        except Exception:
            if not over:
                raise
        if over and not started:
            await self._refuse(scope, receive, send, cap, keep_alive=False)

    async def _refuse(
        self, scope: Scope, receive: Receive, send: Send, cap: int, *, keep_alive: bool
    ) -> None:
        error = BodyTooLarge(cap)
        headers = {} if keep_alive else {"Connection": "close"}
        response = JSON(error.body(), status_code=error.status_code, headers=headers)
        await response(scope, receive, send)
