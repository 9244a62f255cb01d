"""How a browser must treat what the service sends: the security headers, in one
place. ``app.ContextHeaders`` adds them to every response whatever its path (a page
of the back office, the API's JSON, a receipt, a static file, an error, the 500),
so a page added later (the register at ``/register``) has them without asking.

- ``Content-Security-Policy``: scripts and styles from the service's own files
  only (``default-src 'self'``, no inline script, no inline style, no ``eval``);
  the receipt's inline style is allowed by its hash (``orders/receipts.py``:
  a receipt is one self-contained document); no plugins, no ``<base>``, forms post
  to the service only, and no framing (``frame-ancestors 'none'``);
- ``X-Frame-Options: DENY``: no framing, for browsers that ignore
  ``frame-ancestors``;
- ``Referrer-Policy: same-origin``: a link out of the back office does not tell
  the other site which page (and which record id) it came from;
- ``X-Content-Type-Options: nosniff``: a response is only ever what its
  ``Content-Type`` says (an uploaded CSV is never run as a script).

A response that already carries a ``Content-Security-Policy`` keeps it: only the
API documentation pages do (``DOCS_POLICY``), because the bundled Swagger UI and
ReDoc need more than the back office allows (see there).
"""

from __future__ import annotations

from tillbook.orders.receipts import STYLE_HASHES


def policy(*, styles: tuple[str, ...] = (), images: tuple[str, ...] = (), **more: str) -> str:
    quoted = " ".join(f"'{s}'" if s.startswith("sha256-") else s for s in styles)
    directives = {
        "default-src": "'self'",
        "script-src": "'self'",
        "style-src": f"'self' {quoted}".strip(),
        "img-src": " ".join(("'self'", *images)),
        "object-src": "'none'",
        "base-uri": "'none'",
        "form-action": "'self'",
        "frame-ancestors": "'none'",
        **{name.replace("_", "-"): value for name, value in more.items()},
    }
    return "; ".join(f"{name} {value}" for name, value in directives.items())


PAGE_POLICY = policy(styles=STYLE_HASHES)
"""Every response's policy but the documentation's."""

DOCS_POLICY = policy(
    styles=("'unsafe-inline'",),
    images=("data:",),
    worker_src="'self' blob:",
)
"""``/docs`` and ``/redoc``: still no script but the bundled files (their start-up
code is ``static/swagger-init.js``, not inline), but ReDoc writes its styles into
``<style>`` elements at run time (styled-components) and Swagger UI's and ReDoc's
icons are ``data:`` images; ReDoc searches in a worker made from a ``blob:``. The
pages show the service's own OpenAPI document, nothing a user typed."""

HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", PAGE_POLICY.encode()),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
    (b"x-content-type-options", b"nosniff"),
)
"""Added to every response that does not carry the header already."""
