"""Settings read from ``TILLBOOK_*`` environment variables.

One place so that the CLI, the API and the worker agree on every knob.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import os
import secrets
from functools import lru_cache
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

log = logging.getLogger("tillbook.config")


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="TILLBOOK_", extra="ignore")

    database_url: str = "sqlite:///./tillbook.db"
    # A streaming replica of ``database_url`` (PostgreSQL) for the reads that may lag:
    # reports, back-office lists and the till change feeds (``Database.replica_read``,
    # DESIGN.md §17). Unset: they read the primary like everything else.
    read_database_url: str | None = None
    master_key: str | None = None
    master_key_file: str = "./.tillbook-master-key"
    redis_url: str | None = None
    webhook_backoff_base: float = 30.0
    webhook_backoff_cap: float = 3600.0
    webhook_timeout: float = 10.0
    webhook_max_age: float = 24 * 3600.0
    # A claimed delivery stays locked for webhook_timeout + this many seconds; a worker
    # that dies mid-send leaves it to be sent again by another once the lock expires.
    webhook_lock_grace: float = 30.0
    # Let webhooks use http:// and loopback or private addresses (local development and
    # tests); link-local and cloud metadata addresses stay refused (events/urlpolicy.py).
    webhook_allow_private_networks: bool = False
    log_level: str = "INFO"
    # Seconds a request waits for a concurrent twin with the same idempotency token.
    idempotency_wait: float = 5.0
    db_pool_size: int = 10
    # Run the webhook delivery worker inside the API process (``tillbook serve``
    # sets it unless --no-worker; ``tillbook worker`` runs it alone).
    run_worker: bool = False
    # Roll up the months behind every company in the background (``tillbook serve``
    # sets it), every this many seconds and at the start (``ledger/rollups.py``);
    # without it the first report that needs a month rolls it up.
    run_rollups: bool = False
    rollup_every_s: float = Field(default=3600.0, gt=0)
    # Settle the process's heap once it has started (``tillbook serve`` sets it;
    # ``kit/heap.py``): tests, which build many apps in one process, leave it off.
    settle_heap: bool = False
    # Request bodies above this many bytes are refused with 413 while they are read,
    # before any key or token is checked (``api/limits.py``, DESIGN.md §12).
    max_body_bytes: int = Field(default=1024 * 1024, ge=1)
    # The back office's CSV uploads (``POST /api/v1/admin/import/...``) are files: a
    # catalog of 10,000 products in three branches is about 3 MB.
    max_import_bytes: int = Field(default=32 * 1024 * 1024, ge=1)
    # While the service holds no company, the back office's first page offers to
    # start one (``/start``: company, base currency, first branch, owner). A hosted
    # service that creates companies itself turns it off.
    first_run_setup: bool = True
    # The oldest answer a worker serves from its memory (``api.answers``: the public
    # API's catalog reads) without reading the database again. Writes made through this
    # host's processes are seen at once whatever it says; it bounds how long a write
    # they cannot see (one typed into psql) goes unseen; while another host's process
    # is connected, nothing is served from memory. 0 turns the answers off.
    answer_cache_s: float = Field(default=10.0, ge=0)


@lru_cache
def get_settings() -> Settings:
    return Settings()


def master_key_bytes(settings: Settings) -> bytes:
    """The 32-byte key that encrypts secrets at rest.

    Production sets ``TILLBOOK_MASTER_KEY``; a first local run generates one into a
    file (with a warning) so that ``tillbook serve`` works with nothing configured.
    """
    raw = settings.master_key
    if raw is None:
        path = Path(settings.master_key_file)
        if path.exists():
            raw = path.read_text().strip()
        else:
            raw = base64.urlsafe_b64encode(secrets.token_bytes(32)).decode()
            path.write_text(raw + "\n")
            os.chmod(path, 0o600)
            log.warning(
                "TILLBOOK_MASTER_KEY is not set; generated one into %s. "
                "Set TILLBOOK_MASTER_KEY in production and keep it safe.",
                path,
            )
    key = base64.urlsafe_b64decode(raw.encode() + b"=" * (-len(raw) % 4))
    if len(key) != 32:
        raise ValueError("TILLBOOK_MASTER_KEY must be 32 bytes, url-safe base64 encoded")
    return key


def master_key() -> bytes:
    """The master key of this process's settings, for ``kit.crypto``."""
    return master_key_bytes(get_settings())


def cursor_key() -> bytes:
    """The key that signs the cursors of paged reads (``kit.cursors``)."""
    return derived_key(master_key(), "cursors/v1")


@lru_cache(maxsize=8)
def derived_key(master: bytes, purpose: str) -> bytes:
    """A key for one purpose from the master key: HMAC-SHA256 of the purpose's name,
    so a key used for one job reveals nothing of the master key or of other jobs'
    keys, and rotating the master key rotates them all."""
    return hmac.new(master, b"tillbook/" + purpose.encode(), hashlib.sha256).digest()
