"""The webhook delivery worker: outbox → deliveries → signed POSTs, at least once.

One pass (``run_once``):

1. Fan-out: undispatched outbox events (oldest first) become one delivery per
   active, subscribed webhook of the event's company; the event is marked
   dispatched in the same transaction. The unique (event, webhook) constraint
   makes a lost race harmless.
2. Claim: due deliveries (``pending``/``retrying`` whose time has come, or
   ``delivering`` whose lock expired because a worker died mid-send) are set to
   ``delivering`` with ``locked_until`` in one short transaction. PostgreSQL uses
   ``FOR UPDATE SKIP LOCKED``; SQLite's single writer makes the claim exclusive.
3. Send, outside any transaction: the event's stored payload bytes, signed, to an
   address the URL policy checked just now (``events/urlpolicy.py``; see ``_send``).
   A URL the policy refuses is recorded as a failed attempt without connecting.
4. Record: one ``DeliveryAttempt`` row, then ``delivered``, ``retrying`` (full
   jitter backoff) or ``dead`` once the delivery is older than the max age.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import random
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass
from types import TracebackType

import httpx
from sqlalchemy import and_, exists, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.config import Settings
from tillbook.db import Database, cross_tenant
from tillbook.events.urlpolicy import IPAddress, Resolver, Target, UrlPolicy, UrlRefused, check_url
from tillbook.events.webhook_service import subscribed, webhook_secret
from tillbook.kit import generations
from tillbook.kit.crypto import hmac_hex
from tillbook.models import DeliveryAttempt, OutboxEvent, Webhook, WebhookDelivery

log = logging.getLogger("tillbook.worker")

IDLE_SLEEP_S = 0.5
# What the attempt log keeps of a receiver's answer (the tenant reads it): a short,
# printable excerpt of at most EXCERPT_CHARS, from at most EXCERPT_READ_BYTES read.
EXCERPT_CHARS = 200
EXCERPT_READ_BYTES = 1024


def _utc(value: dt.datetime) -> dt.datetime:
    """SQLite hands back naive datetimes; every stored time is UTC."""
    return value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)


@dataclass(frozen=True)
class Claimed:
    company_id: int
    delivery_id: int
    delivery_uid: str
    url: str
    secret: str
    event_type: str
    payload: bytes
    attempts: int
    created_at: dt.datetime


@dataclass(frozen=True)
class Outcome:
    attempted_at: dt.datetime
    status_code: int | None
    latency_ms: float
    error: str | None

    @property
    def ok(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


def signed_headers(
    secret: str, payload: bytes, event_type: str, delivery_uid: str
) -> dict[str, str]:
    return {
        "Content-Type": "application/json",
        "Authorization": f"Bearer {secret}",
        "X-Service-Signature": hmac_hex(secret, payload),
        "X-Service-Event": event_type,
        "X-Service-Delivery": delivery_uid,
        "X-Service-Timestamp": str(int(time.time())),
    }


class DeliveryWorker:
    def __init__(
        self,
        db: Database,
        settings: Settings,
        *,
        client: httpx.AsyncClient | None = None,
        resolver: Resolver | None = None,
        batch_size: int = 100,
        concurrency: int = 20,
    ) -> None:
        self.db = db
        self.settings = settings
        self.policy = UrlPolicy.from_settings(settings, resolver)
        self.batch_size = batch_size
        self.concurrency = concurrency
        self._client = client
        self._owns_client = client is None

    # -- lifecycle ---------------------------------------------------------------

    def _http(self) -> httpx.AsyncClient:
        """One client for the worker's life. No redirects (a 3xx is a failed attempt: the
        Location was never checked). ``trust_env=False``: no proxy or ``.netrc`` from the
        environment between the check and the receiver. No keep-alive: connections are
        pooled by (scheme, address, port), so a TLS connection verified for one host name
        would otherwise carry the next delivery for another name on the same address."""
        if self._client is None:
            self._client = httpx.AsyncClient(
                follow_redirects=False,
                trust_env=False,
                limits=httpx.Limits(max_keepalive_connections=0),
            )
        return self._client

    async def aclose(self) -> None:
        if self._owns_client and self._client is not None:
            await self._client.aclose()
            self._client = None

    async def __aenter__(self) -> DeliveryWorker:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    # -- one pass ----------------------------------------------------------------

    async def run_once(self) -> int:
        """Fan out new events, then claim, send and record due deliveries.

        Returns the number of delivery attempts made.
        """
        # Outbox rows and deliveries are in no answer a worker keeps: its commits,
        # two a second when idle, would otherwise forget them all (``api.answers``).
        with generations.unseen_writes():
            await self.db.write(self._fan_out)
            claimed = await self.db.write(self._claim)
            if not claimed:
                return 0
            await asyncio.gather(*(self._deliver(c) for c in claimed))
        return len(claimed)

    async def run_forever(self, stop: asyncio.Event) -> None:
        """Loop until ``stop`` is set; a pass in progress finishes and is recorded."""
        try:
            while not stop.is_set():
                try:
                    attempts = await self.run_once()
                except Exception:
                    log.exception("webhook worker pass failed")
                    attempts = 0
                if attempts == 0:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(stop.wait(), IDLE_SLEEP_S)
        finally:
            await self.aclose()

    # -- steps -------------------------------------------------------------------

    async def _fan_out(self, session: AsyncSession) -> int:
        """New events of every company to their webhooks' deliveries."""
        with cross_tenant("outbox worker"):
            return await self._fan_out_all(session)

    async def _claim(self, session: AsyncSession) -> list[Claimed]:
        """Due deliveries of every company, claimed (``FOR UPDATE SKIP LOCKED``)."""
        with cross_tenant("outbox worker"):
            return await self._claim_all(session)

    async def _fan_out_all(self, session: AsyncSession) -> int:
        # Events of a company with no active webhook go to nobody: marked in one
        # statement, so that one company's burst (an import announcing thousands of
        # products) never queues other companies' deliveries behind it.
        no_hook = ~(
            select(Webhook.id)
            .where(Webhook.company_id == OutboxEvent.company_id, Webhook.active.is_(True))
            .exists()
        )
        await session.execute(
            update(OutboxEvent)
            .where(OutboxEvent.dispatched.is_(False), no_hook)
            .values(dispatched=True)
        )
        query = (
            select(OutboxEvent.id, OutboxEvent.company_id, OutboxEvent.type)
            .where(OutboxEvent.dispatched.is_(False))
            .order_by(OutboxEvent.id)
            .limit(self.batch_size)
        )
        if not self.db.is_sqlite:
            query = query.with_for_update(skip_locked=True)
        events = (await session.execute(query)).all()
        if not events:
            return 0
        companies = {e.company_id for e in events}
        hooks = (
            await session.execute(
                select(Webhook.id, Webhook.company_id, Webhook.events).where(
                    Webhook.company_id.in_(companies), Webhook.active.is_(True)
                )
            )
        ).all()
        by_company: dict[int, list[tuple[int, str]]] = defaultdict(list)
        for hook in hooks:
            by_company[hook.company_id].append((hook.id, hook.events))
        now = dt.datetime.now(dt.UTC)
        rows = [
            {
                "company_id": e.company_id,
                "event_id": e.id,
                "webhook_id": hook_id,
                "delivery_uid": "dlv_" + uuid.uuid4().hex,
                "status": "pending",
                "attempts": 0,
                "next_attempt_at": now,
                "created_at": now,
            }
            for e in events
            for hook_id, hook_events in by_company[e.company_id]
            if subscribed(hook_events, e.type)
        ]
        if rows:
            await session.execute(insert(WebhookDelivery), rows)
        await session.execute(
            update(OutboxEvent)
            .where(OutboxEvent.id.in_([e.id for e in events]))
            .values(dispatched=True)
        )
        return len(rows)

    async def _claim_all(self, session: AsyncSession) -> list[Claimed]:
        now = dt.datetime.now(dt.UTC)
        active_hook = exists().where(
            Webhook.id == WebhookDelivery.webhook_id, Webhook.active.is_(True)
        )
        query = (
            select(WebhookDelivery)
            .where(
                or_(
                    and_(
                        WebhookDelivery.status.in_(("pending", "retrying")),
                        WebhookDelivery.next_attempt_at <= now,
                    ),
                    and_(
                        WebhookDelivery.status == "delivering",
                        WebhookDelivery.locked_until < now,
                    ),
                ),
                active_hook,
            )
            .order_by(WebhookDelivery.id)
            .limit(self.concurrency)
        )
        if not self.db.is_sqlite:
            query = query.with_for_update(skip_locked=True, of=WebhookDelivery)
        deliveries = list(await session.scalars(query))
        if not deliveries:
            return []
        lease = self.settings.webhook_timeout + self.settings.webhook_lock_grace
        locked_until = now + dt.timedelta(seconds=lease)
        await session.execute(
            update(WebhookDelivery)
            .where(WebhookDelivery.id.in_([d.id for d in deliveries]))
            .values(status="delivering", locked_until=locked_until)
        )
        details = (
            await session.execute(
                select(WebhookDelivery.id, Webhook, OutboxEvent.type, OutboxEvent.payload)
                .join(
                    Webhook,
                    (Webhook.id == WebhookDelivery.webhook_id)
                    & (Webhook.company_id == WebhookDelivery.company_id),
                )
                .join(
                    OutboxEvent,
                    (OutboxEvent.id == WebhookDelivery.event_id)
                    & (OutboxEvent.company_id == WebhookDelivery.company_id),
                )
                .where(WebhookDelivery.id.in_([d.id for d in deliveries]))
            )
        ).all()
        by_id = {row[0]: row for row in details}
        claimed = []
        for d in deliveries:
            _, hook, event_type, payload = by_id[d.id]
            claimed.append(
                Claimed(
                    company_id=d.company_id,
                    delivery_id=d.id,
                    delivery_uid=d.delivery_uid,
                    url=hook.url,
                    secret=webhook_secret(hook),
                    event_type=event_type,
                    payload=payload.encode(),
                    attempts=d.attempts,
                    created_at=_utc(d.created_at),
                )
            )
        return claimed

    async def _deliver(self, claimed: Claimed) -> None:
        outcome = await self._send(claimed)
        try:
            await self.db.write(lambda s: self._record(s, claimed, outcome))
        except Exception:
            # The lock expires and the delivery is sent again: at least once.
            log.exception("could not record delivery %s", claimed.delivery_uid)

    async def _send(self, claimed: Claimed) -> Outcome:
        """Check the URL again, then POST to an address that was checked.

        The policy resolves the host and refuses the delivery when any address is not
        allowed (recorded as a failed attempt; nothing is connected). Otherwise the
        request goes to the checked address itself (``Target.pinned``), with the
        original name in ``Host`` and in TLS (SNI and certificate check): resolving
        once and connecting by address leaves no second lookup that a DNS answer with
        a short TTL could turn towards an internal address (DNS rebinding). The whole
        attempt, lookup included, ends within ``webhook_timeout``, well inside the
        claim's lease.
        """
        headers = signed_headers(
            claimed.secret, claimed.payload, claimed.event_type, claimed.delivery_uid
        )
        attempted_at = dt.datetime.now(dt.UTC)
        started = time.perf_counter()
        status_code: int | None = None
        error: str | None = None
        try:
            async with asyncio.timeout(self.settings.webhook_timeout):
                target = await check_url(claimed.url, self.policy)
                status_code, excerpt = await self._post(target, claimed.payload, headers)
            if not 200 <= status_code < 300:
                error = f"HTTP {status_code}: {excerpt}" if excerpt else f"HTTP {status_code}"
        except UrlRefused as exc:
            error = str(exc)
            log.warning("delivery %s refused: %s", claimed.delivery_uid, exc)
        except TimeoutError:
            error = f"no answer within {self.settings.webhook_timeout:g} s"
        except httpx.HTTPError as exc:
            error = _printable(f"{type(exc).__name__}: {exc}", 300)
        latency_ms = (time.perf_counter() - started) * 1000.0
        return Outcome(attempted_at, status_code, round(latency_ms, 3), error)

    async def _post(
        self, target: Target, payload: bytes, headers: dict[str, str]
    ) -> tuple[int, str]:
        """POST to the checked addresses in the resolver's order, moving on only when a
        connection cannot be made; returns the status and, for an answer outside 2xx,
        a short excerpt of its body."""
        extensions = {"sni_hostname": target.host} if target.url.scheme == "https" else {}
        headers = {
            **headers,
            "Host": target.url.netloc.decode("ascii"),
            "Accept-Encoding": "identity",  # the excerpt is read raw, never inflated
        }
        last: httpx.ConnectError | None = None
        address: IPAddress
        for address in target.addresses:
            try:
                async with self._http().stream(
                    "POST",
                    target.pinned(address),
                    content=payload,
                    headers=headers,
                    extensions=extensions,
                    timeout=self.settings.webhook_timeout,
                    follow_redirects=False,
                ) as response:
                    if 200 <= response.status_code < 300:
                        return response.status_code, ""
                    return response.status_code, await _excerpt(response)
            except httpx.ConnectError as exc:
                last = exc
        if last is None:  # never: a Target has at least one address
            raise UrlRefused(f"host {target.host} has no address")
        raise last

    async def _record(self, session: AsyncSession, claimed: Claimed, outcome: Outcome) -> None:
        delivery = await session.scalar(
            select(WebhookDelivery).where(
                WebhookDelivery.company_id == claimed.company_id,
                WebhookDelivery.id == claimed.delivery_id,
            )
        )
        if delivery is None:  # the webhook was removed meanwhile
            return
        session.add(
            DeliveryAttempt(
                company_id=delivery.company_id,
                delivery_id=delivery.id,
                attempted_at=outcome.attempted_at,
                status_code=outcome.status_code,
                latency_ms=outcome.latency_ms,
                error=outcome.error,
            )
        )
        now = dt.datetime.now(dt.UTC)
        delivery.attempts = delivery.attempts + 1
        delivery.last_status_code = outcome.status_code
        delivery.last_error = outcome.error
        delivery.locked_until = None
        if outcome.ok:
            delivery.status = "delivered"
            delivery.delivered_at = now
        elif (now - _utc(delivery.created_at)).total_seconds() < self.settings.webhook_max_age:
            delivery.status = "retrying"
            delivery.next_attempt_at = now + dt.timedelta(seconds=self.backoff(delivery.attempts))
        else:
            delivery.status = "dead"
        await session.flush()

    def backoff(self, attempts: int) -> float:
        """Full jitter: uniform(0, min(cap, base * 2**attempts))."""
        ceiling = min(
            self.settings.webhook_backoff_cap,
            self.settings.webhook_backoff_base * 2.0 ** min(attempts, 60),
        )
        return random.uniform(0.0, ceiling)


async def _excerpt(response: httpx.Response) -> str:
    """At most EXCERPT_CHARS printable characters of the answer's first bytes.

    The body is read no further than EXCERPT_READ_BYTES (a receiver cannot make the
    worker hold megabytes), control characters become spaces and runs of whitespace
    one space, so the attempt log holds a short line, never the receiver's page."""
    data = bytearray()
    async for chunk in response.aiter_raw():
        data += chunk
        if len(data) >= EXCERPT_READ_BYTES:
            break
    return _printable(bytes(data[:EXCERPT_READ_BYTES]).decode("utf-8", "replace"), EXCERPT_CHARS)


def _printable(text: str, limit: int) -> str:
    """One line of at most ``limit`` printable characters: no CR, LF or escape codes."""
    text = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
