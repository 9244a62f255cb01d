"""Request signing and webhook verification: HMAC-SHA256, lower-case hex.

A request's canonical string is ``TIMESTAMP.METHOD.PATH.BODY``: the Unix seconds
sent as ``X-Service-Timestamp``, the method in upper case, the path and query
exactly as they go on the wire (percent-encoding untouched, no ``?`` without a
query) and the raw body bytes, keyed with the key's ``hmac_secret`` (UTF-8)."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping


def canonical(timestamp: str, method: str, path: str, body: bytes) -> bytes:
    return f"{timestamp}.{method.upper()}.{path}.".encode() + body


def sign(hmac_secret: str, timestamp: str, method: str, path: str, body: bytes) -> str:
    """The ``X-Service-Signature`` of a request."""
    message = canonical(timestamp, method, path, body)
    return hmac.new(hmac_secret.encode(), message, hashlib.sha256).hexdigest()


def verify_webhook(raw_body: bytes, headers: Mapping[str, str], secret: str) -> bool:
    """True when a webhook delivery is the service's: ``X-Service-Signature`` is the
    HMAC of the raw body bytes with the webhook's secret and ``Authorization`` (when
    sent) is ``Bearer <secret>``. Compare before parsing; constant time; header
    names case-insensitive; every copy of a repeated header must match."""
    lowered = [(k.lower(), v) for k, v in headers.items()]
    signatures = [v for k, v in lowered if k == "x-service-signature"]
    if not signatures:
        return False
    expected = hmac.new(secret.encode(), raw_body, hashlib.sha256).hexdigest().encode()
    good = True
    for signature in signatures:
        good &= hmac.compare_digest(signature.strip().lower().encode(), expected)
    for value in (v for k, v in lowered if k == "authorization"):
        scheme, _, token = value.strip().partition(" ")
        good &= scheme.lower() == "bearer"
        good &= hmac.compare_digest(token.strip().encode(), secret.encode())
    return good
