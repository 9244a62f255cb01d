"""What the sync and async clients share: building, signing and judging requests."""

from __future__ import annotations

import datetime as dt
import json
import time
import uuid
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

import httpx

from tillbook_client.errors import ApiError, error_for
from tillbook_client.retry import RetryPolicy, retryable_status
from tillbook_client.signing import sign

PUBLIC = "/api/v1/public"
USER_AGENT = "tillbook-client/1.0"


def _default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()
    raise TypeError(f"cannot send {type(value).__name__} as JSON")


def encode(body: Any) -> bytes:
    """Compact JSON; ``Decimal`` as a decimal string (exact), dates as ISO text."""
    return json.dumps(body, default=_default, separators=(",", ":"), ensure_ascii=False).encode()


def new_key() -> str:
    return uuid.uuid4().hex


def clean(params: Mapping[str, Any] | None) -> dict[str, str]:
    return {k: str(v) for k, v in (params or {}).items() if v is not None}


class Core:
    def __init__(
        self,
        base_url: str,
        public_key: str,
        secret_key: str,
        *,
        hmac_secret: str | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.public_key = public_key
        self.secret_key = secret_key
        self.hmac_secret = hmac_secret
        self.retry = retry or RetryPolicy()
        self.signed_at: int | None = None

    def resign_wait(self, method: str, wait: float) -> float:
        """A signed write is accepted once, and its signature covers the timestamp in
        whole seconds: a retry sent within the same second would carry the same
        signature and be refused as a replay. So a signed write's retry waits at
        least until the next second."""
        if self.hmac_secret is None or method == "GET" or self.signed_at is None:
            return wait
        return max(wait, self.signed_at + 1.05 - time.time())

    def headers(self) -> dict[str, str]:
        return {
            "X-Service-Public-Key": self.public_key,
            "X-Service-Secret-Key": self.secret_key,
            "Accept": "application/json",
            "User-Agent": USER_AGENT,
        }

    def build(
        self,
        http: httpx.Client | httpx.AsyncClient,
        method: str,
        path: str,
        params: dict[str, str],
        body: bytes | None,
        idempotency_key: str | None,
    ) -> httpx.Request:
        """One send's request: signed anew each time (a signed write is accepted once,
        so a retry carries a new timestamp and signature, and the same key)."""
        headers = self.headers()
        if body is not None:
            headers["Content-Type"] = "application/json"
        if idempotency_key is not None:
            headers["Idempotency-Key"] = idempotency_key
        request = http.build_request(
            method, self.base_url + path, params=params or None, content=body, headers=headers
        )
        if self.hmac_secret is not None:
            timestamp = str(int(time.time()))
            if method != "GET":
                self.signed_at = int(timestamp)
            wire_path = request.url.raw_path.decode("ascii")
            request.headers["X-Service-Timestamp"] = timestamp
            request.headers["X-Service-Signature"] = sign(
                self.hmac_secret, timestamp, request.method, wire_path, body or b""
            )
        return request

    def judge(
        self, response: httpx.Response, attempt: int
    ) -> tuple[Any, ApiError | None, float | None]:
        """(the body, or the error, and the wait before a retry or None to raise)."""
        try:
            payload = response.json() if response.content else None
        except ValueError:
            payload = None
        if response.is_success:
            return payload, None, None
        headers = {k.lower(): v for k, v in response.headers.items()}
        error = error_for(response.status_code, payload, headers)
        if not retryable_status(response.status_code, error.retry_after is not None):
            return None, error, None
        return None, error, self.retry.wait(attempt, error.retry_after)
