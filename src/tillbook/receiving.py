"""For integrators: verify a webhook the service sent you.

    from tillbook.receiving import verify

    if not verify(request_body_bytes, request.headers, WEBHOOK_SECRET):
        return 401

Verify against the raw body bytes exactly as received, before parsing them.
Deliveries are at least once: dedupe on the payload's ``id``.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping

SIGNATURE_HEADER = "x-service-signature"


def sign(raw_body: bytes, secret: str) -> str:
    """Lower-case hex HMAC-SHA256 of ``raw_body`` keyed with ``secret``."""
    return hmac.new(secret.encode(), raw_body, hashlib.sha256).hexdigest()


def _headers(headers: Mapping[str, str], name: str) -> list[str]:
    """Every value whose header name matches ``name`` case-insensitively."""
    return [value for key, value in headers.items() if key.lower() == name]


def verify(raw_body: bytes, headers: Mapping[str, str], secret: str) -> bool:
    """True when ``X-Service-Signature`` matches the body, and ``Authorization``
    (when sent) is ``Bearer <secret>``; header names are case-insensitive."""
    signatures = _headers(headers, SIGNATURE_HEADER)
    if not signatures:
        return False
    expected = sign(raw_body, secret).encode()
    good = True
    for signature in signatures:  # every copy must match, not just one
        good &= hmac.compare_digest(signature.strip().lower().encode(), expected)
    for authorization in _headers(headers, "authorization"):
        scheme, _, token = authorization.strip().partition(" ")
        good &= scheme.lower() == "bearer"
        good &= hmac.compare_digest(token.strip().encode(), secret.encode())
    return good
