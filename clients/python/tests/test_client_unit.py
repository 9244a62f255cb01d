"""The client without a server: retries (Retry-After, full jitter, the bound),
idempotency keys, signing (the README's worked examples), webhook verification,
event parsing, and the sync and async clients offering the same methods."""

from __future__ import annotations

import hashlib
import hmac
import inspect
import json
import random

import httpx
import pytest
from tillbook_client import (
    AsyncClient,
    Client,
    Event,
    RateLimited,
    RetryPolicy,
    TransportError,
    ValidationError,
    sign,
    verify_webhook,
)
from tillbook_client.models import Order, Payment

OK_SALE = {
    "status": "success",
    "order_id": 1,
    "invoice_number": "SAL-00001",
    "total_amount": 1.8,
    "unique_id": "u",
    "payment_status": "unpaid",
    "paid_amount": "0.00",
    "due_amount": "1.80",
}


def scripted(
    *answers: httpx.Response | Exception,
) -> tuple[httpx.MockTransport, list[httpx.Request]]:
    seen: list[httpx.Request] = []
    queue = list(answers)

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        answer = queue.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    return httpx.MockTransport(handler), seen


def busy(status: int, retry_after: str | None = None) -> httpx.Response:
    headers = {"Retry-After": retry_after} if retry_after else {}
    return httpx.Response(status, headers=headers, json={"status": "error", "message": "busy"})


def make(transport: httpx.MockTransport, sleeps: list[float], **kw: object) -> Client:
    return Client("http://till.test", "pk", "sk", transport=transport, sleep=sleeps.append, **kw)  # type: ignore[arg-type]


def test_retry_after_is_honoured_and_the_key_kept() -> None:
    transport, seen = scripted(
        busy(429, "2"),
        busy(503, "1"),
        httpx.ConnectError("refused"),
        httpx.Response(200, json=OK_SALE),
    )
    sleeps: list[float] = []
    policy = RetryPolicy(max_attempts=5, base=1, cap=8, rng=random.Random(7))
    sale = make(transport, sleeps, retry=policy).create_sale({"user_id": 1})
    assert sale.invoice_number == "SAL-00001"
    keys = {r.headers["idempotency-key"] for r in seen}
    assert len(seen) == 4 and len(keys) == 1  # one key for every send of the write
    assert sleeps[:2] == [2.0, 1.0]
    assert 0 <= sleeps[2] <= min(8, 1 * 2**2)  # full jitter after the 3rd failed send


def test_full_jitter_stays_within_its_bounds() -> None:
    policy = RetryPolicy(base=0.5, cap=4, rng=random.Random(1))
    for attempt in range(10):
        waits = [policy.backoff(attempt) for _ in range(200)]
        ceiling = min(4, 0.5 * 2**attempt)
        assert all(0 <= w <= ceiling for w in waits)
        assert max(waits) > ceiling * 0.8  # it uses the whole range, not a fixed wait


def test_the_bound_and_what_is_not_retried() -> None:
    transport, seen = scripted(*(busy(429) for _ in range(3)))
    sleeps: list[float] = []
    with pytest.raises(RateLimited):
        make(transport, sleeps, retry=RetryPolicy(max_attempts=3)).warehouses()
    assert len(seen) == 3 and len(sleeps) == 2
    transport, seen = scripted(busy(429, "3600"))
    with pytest.raises(RateLimited) as long:
        make(transport, [], retry=RetryPolicy(max_wait=60)).warehouses()
    assert long.value.retry_after == 3600 and len(seen) == 1  # not slept through
    bad = httpx.Response(
        422,
        json={
            "status": "error",
            "message": "invalid",
            "errors": {"user_id": ["unknown customer 9"]},
        },
    )
    transport, seen = scripted(bad)
    with pytest.raises(ValidationError) as invalid:
        make(transport, []).create_sale({"user_id": 9})
    assert invalid.value.errors == {"user_id": ["unknown customer 9"]} and len(seen) == 1
    transport, seen = scripted(*(httpx.ConnectError("down") for _ in range(2)))
    with pytest.raises(TransportError):
        make(transport, [], retry=RetryPolicy(max_attempts=2)).warehouses()


def test_every_post_gets_its_own_key_and_gets_none() -> None:
    transport, seen = scripted(
        httpx.Response(200, json=OK_SALE),
        httpx.Response(200, json=OK_SALE),
        httpx.Response(200, json={"status": "success", "data": []}),
    )
    client = make(transport, [])
    client.create_sale({"user_id": 1})
    client.create_sale({"user_id": 1}, idempotency_key="mine")
    client.warehouses()
    assert seen[0].headers["idempotency-key"] not in ("", "mine")
    assert seen[1].headers["idempotency-key"] == "mine"
    assert "idempotency-key" not in seen[2].headers


def test_signing_matches_the_readme_examples() -> None:
    secret = "hs_EXAMPLEexampleEXAMPLEexampleEXAMPLEexa"
    assert (
        sign(
            secret, "1767225600", "GET", "/api/v1/public/products?search=milk%20bottle&limit=5", b""
        )
        == "da1e009c09fe0be88a591a1f979de1ed6bf74c9245c8edaf08bb13469ca7ef60"
    )
    body = b'{"user_id":12,"payment_type":"in","amount":"5.00","payment_mode_id":"cash"}'
    assert sign(secret, "1767225600", "POST", "/api/v1/public/payments", body) == (
        "15a95a5583719710b8f938313c1e99f3beed2165a43760f81f7a08823984b4f4"
    )


def test_requests_are_signed_on_the_wire_path() -> None:
    transport, seen = scripted(
        httpx.Response(
            200,
            json={
                "status": "success",
                "data": {"current_page": 1, "per_page": 5, "total": 0, "last_page": 1, "data": []},
            },
        )
    )
    make(transport, [], hmac_secret="hs_x").products(search="milk bottle", limit=5)
    request = seen[0]
    ts = request.headers["x-service-timestamp"]
    path = request.url.raw_path.decode()
    assert "milk%20bottle" in path or "milk+bottle" in path
    expected = hmac.new(b"hs_x", f"{ts}.GET.{path}.".encode(), hashlib.sha256).hexdigest()
    assert request.headers["x-service-signature"] == expected


def test_webhook_verification_and_typed_events() -> None:
    raw = json.dumps(
        {
            "id": "evt_1",
            "type": "payment.created",
            "created_at": "2026-11-22T06:35:04Z",
            "company_id": 1,
            "warehouse_id": 1,
            "data": {
                "payment_id": 1,
                "payment_type": "in",
                "user_id": 2,
                "amount": "1.80",
                "unallocated_amount": "0.00",
                "payment_mode_id": 1,
                "date": "2026-11-22",
                "reference": None,
                "notes": "",
                "journal_entry_id": 4,
                "allocations": [],
            },
        }
    ).encode()
    signature = hmac.new(b"whsec", raw, hashlib.sha256).hexdigest()
    good = {"X-Service-Signature": signature, "Authorization": "Bearer whsec"}
    assert verify_webhook(raw, good, "whsec")
    assert not verify_webhook(raw + b" ", good, "whsec")
    assert not verify_webhook(raw, {**good, "Authorization": "Bearer other"}, "whsec")
    assert not verify_webhook(raw, {}, "whsec")
    event = Event.parse(json.loads(raw))
    assert isinstance(event.data, Payment) and str(event.data.amount) == "1.80"
    unknown = Event.parse({**json.loads(raw), "type": "future.thing", "data": {"x": 1}})
    assert unknown.data is None and unknown.raw_data == {"x": 1}
    assert Order.model_fields["items"]


def test_sync_and_async_offer_the_same_methods() -> None:
    def public(cls: type) -> dict[str, inspect.Signature]:
        return {
            n: inspect.signature(f)
            for n, f in vars(cls).items()
            if not n.startswith("_") and callable(f) and n not in ("close", "aclose")
        }

    sync, asyn = public(Client), public(AsyncClient)
    assert set(sync) == set(asyn)
    for name in sync:
        assert list(sync[name].parameters) == list(asyn[name].parameters), name
