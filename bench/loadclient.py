"""The load generator's HTTP client: one keep-alive HTTP/1.1 connection, nothing else.

The benchmark's clients run on the same two cores as the service and PostgreSQL, so
every millisecond of CPU they spend is taken from what they measure. httpx cost
about 2 ms of CPU per request here (its transport, pool and model layers), as much
as a quarter of the service's own; a till, a web store or a terminal runs on its own
machine. This client does only what a load generator needs: it writes a request
with the fixed headers of its key, reads the status line, the headers and a
``Content-Length`` (or chunked) body, and keeps the connection for the next
request. Measured on a POST /sales run: about 0.3 ms of CPU per request.

Only what the benchmark sends is supported: GET and POST, JSON bodies, plain
``http://`` on loopback.
"""

from __future__ import annotations

import asyncio
import contextlib
import urllib.parse
from typing import Any

import orjson


class TransportError(Exception):
    """The connection failed: refused, reset, closed early, timed out."""


class HTTPStatusError(Exception):
    pass


class Response:
    __slots__ = ("content", "headers", "status_code")

    def __init__(self, status_code: int, headers: dict[str, str], content: bytes):
        self.status_code = status_code
        self.headers = headers
        self.content = content

    def json(self) -> Any:
        return orjson.loads(self.content)

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")

    def raise_for_status(self) -> None:
        if self.status_code >= 400:
            raise HTTPStatusError(f"{self.status_code}: {self.text[:300]}")


class Client:
    """``Client(base_url, headers)``: ``await client.get(path, params=…)``,
    ``await client.post(path, json=…)``; ``async with`` closes the connection."""

    def __init__(self, base_url: str, headers: dict[str, str] | None = None, timeout: float = 60):
        url = urllib.parse.urlsplit(base_url)
        if url.scheme != "http" or url.hostname is None:
            raise ValueError(f"plain http:// URLs only, not {base_url!r}")
        self.host = url.hostname
        self.port = url.port or 80
        self.prefix = url.path.rstrip("/")
        self.timeout = timeout
        fixed = {"Host": f"{self.host}:{self.port}", "Accept": "application/json"}
        fixed.update(headers or {})
        self._fixed = "".join(f"{k}: {v}\r\n" for k, v in fixed.items()).encode("latin-1")
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        writer, self._reader, self._writer = self._writer, None, None
        if writer is not None:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    async def get(self, path: str, params: dict[str, Any] | None = None) -> Response:
        if params:
            path = f"{path}?{urllib.parse.urlencode(params)}"
        return await self.request("GET", path)

    async def post(
        self, path: str, json: Any = None, headers: dict[str, str] | None = None
    ) -> Response:
        return await self.request("POST", path, orjson.dumps(json), headers)

    async def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> Response:
        """``headers``: this request's own, beside the client's fixed ones (a key per
        request, when one connection serves many branches)."""
        head = f"{method} {self.prefix}{path} HTTP/1.1\r\n".encode("latin-1") + self._fixed
        if headers:
            head += "".join(f"{k}: {v}\r\n" for k, v in headers.items()).encode("latin-1")
        if body is not None:
            head += b"Content-Type: application/json\r\nContent-Length: %d\r\n" % len(body)
        message = head + b"\r\n" + (body or b"")
        try:
            async with asyncio.timeout(self.timeout):
                if self._writer is None:
                    self._reader, self._writer = await asyncio.open_connection(self.host, self.port)
                assert self._reader is not None
                self._writer.write(message)
                response = await _read_response(self._reader)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError,
                TimeoutError, ValueError) as exc:  # fmt: skip
            await self.aclose()
            raise TransportError(f"{type(exc).__name__}: {exc}") from exc
        if response.headers.get("connection", "").lower() == "close":
            await self.aclose()
        return response


async def _read_response(reader: asyncio.StreamReader) -> Response:
    head = await reader.readuntil(b"\r\n\r\n")
    status_line, *lines = head[:-4].decode("latin-1").split("\r\n")
    status = int(status_line.split(" ", 2)[1])
    headers: dict[str, str] = {}
    for line in lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if "content-length" in headers:
        content = await reader.readexactly(int(headers["content-length"]))
    elif headers.get("transfer-encoding", "").lower() == "chunked":
        parts = []
        while True:
            size = int((await reader.readuntil(b"\r\n"))[:-2].split(b";")[0], 16)
            if size == 0:
                await reader.readuntil(b"\r\n")
                break
            parts.append(await reader.readexactly(size))
            await reader.readexactly(2)
        content = b"".join(parts)
    else:
        content = b""
    return Response(status, headers, content)
