"""The register's app shell at ``/register`` (DESIGN.md §15): a page, its manifest,
service worker and ES modules, public because the shell holds no data (every call
it makes to the API carries the register's own credential) and because a service
worker must be able to fetch and cache it without a session.

The service worker is served at ``/register/sw.js`` with ``Service-Worker-Allowed:
/register`` so that its scope covers ``/register`` itself as well as the assets
under it. Its cache name carries a digest of every shell file, so a new release
installs a new cache and drops the old one; the asset list is written into it here
rather than kept by hand in the script."""

from __future__ import annotations

import hashlib
import json
from functools import cache
from pathlib import Path

from fastapi.responses import Response

from tillbook.api import routing
from tillbook.errors import NotFound

SHELL = Path(__file__).parent / "register"
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; manifest-src 'self'; worker-src 'self'; object-src 'none'; "
    "base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
)
TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".html": "text/html; charset=utf-8",
    ".webmanifest": "application/manifest+json",
}
HEADERS = {"Content-Security-Policy": CSP, "Referrer-Policy": "no-referrer"}

router = routing.pages()


@cache
def _assets() -> dict[str, bytes]:
    """Every shell file by its URL, read once (they ship inside the package)."""
    found: dict[str, bytes] = {}
    for path in sorted(SHELL.rglob("*")):
        if path.is_file() and path.suffix in TYPES and path.name not in ("index.html", "sw.js"):
            found["/register/" + path.relative_to(SHELL).as_posix()] = path.read_bytes()
    return found


@cache
def _worker() -> bytes:
    assets = _assets()
    index = (SHELL / "index.html").read_bytes()
    digest = hashlib.sha256(index)
    for url, body in assets.items():
        digest.update(url.encode() + b"\0" + body)
    script = (SHELL / "sw.js").read_text()
    script = script.replace('"__VERSION__"', json.dumps(digest.hexdigest()[:16]))
    script = script.replace('["__ASSETS__"]', json.dumps(["/register", *assets]))
    return script.encode()


def _answer(body: bytes, suffix: str, *, revalidate: bool = True) -> Response:
    headers = dict(HEADERS)
    # The service worker serves the shell from its own cache; the HTTP cache must not
    # hold an old copy past a release (no-cache: always revalidated).
    headers["Cache-Control"] = "no-cache" if revalidate else "public, max-age=300"
    return Response(body, media_type=TYPES[suffix], headers=headers)


@router.get("/register")
@router.get("/register/")
async def shell() -> Response:
    return _answer((SHELL / "index.html").read_bytes(), ".html")


@router.get("/register/sw.js")
async def worker() -> Response:
    response = _answer(_worker(), ".js")
    response.headers["Service-Worker-Allowed"] = "/register"
    return response


@router.get("/register/{path:path}")
async def asset(path: str) -> Response:
    body = _assets().get("/register/" + path)
    if body is None:
        raise NotFound("not found")
    return _answer(body, Path(path).suffix)
