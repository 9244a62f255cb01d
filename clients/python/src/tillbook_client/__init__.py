"""tillbook-client: a typed Python client for the tillbook API (sync and async),
with request signing, retries with full jitter, automatic idempotency keys,
pagination, webhook verification and an offline queue for tills."""

from tillbook_client.client import AsyncClient, Client
from tillbook_client.errors import (
    ApiError,
    AuthenticationError,
    BadRequest,
    Conflict,
    NotFound,
    PermissionDenied,
    PreconditionFailed,
    RateLimited,
    ServerError,
    ServiceUnavailable,
    TillbookError,
    TransportError,
    ValidationError,
)
from tillbook_client.models import Event
from tillbook_client.offline import FlushResult, OfflineQueue, Queued
from tillbook_client.retry import RetryPolicy
from tillbook_client.signing import sign, verify_webhook

__all__ = [
    "ApiError",
    "AsyncClient",
    "AuthenticationError",
    "BadRequest",
    "Client",
    "Conflict",
    "Event",
    "FlushResult",
    "NotFound",
    "OfflineQueue",
    "PermissionDenied",
    "PreconditionFailed",
    "Queued",
    "RateLimited",
    "RetryPolicy",
    "ServerError",
    "ServiceUnavailable",
    "TillbookError",
    "TransportError",
    "ValidationError",
    "sign",
    "verify_webhook",
]
