"""An offline queue for tills: sales, returns and payments are written to a local
SQLite file first, then sent in order when the service answers.

Why it never loses or doubles a sale:

- ``add_*`` commits the document to the file (``synchronous=FULL``) before it
  returns, with everything its sending needs: the body, a **deterministic invoice
  number** for a sale (``<prefix>-<sequence>``, from a counter in the same file
  and transaction), and a deterministic ``Idempotency-Key`` (also the body's
  ``unique_id``). A till restart or a crash loses nothing committed.
- ``flush()`` sends the pending documents oldest first, each with its own key. A
  document leaves the queue (``sent``) only after the service's 2xx answer is
  stored. If the till is killed after the service recorded the sale but before
  the answer was stored, the next ``flush()`` sends it again with the same key and
  invoice number: the service answers the first sale (``Idempotent-Replayed``),
  and nothing is recorded twice (the invoice number protects a sale even after
  the key's 24 h window).
- A connection failure, a 429, a 503, a 401 or 403 (keys, subscription) stops the
  flush (the client's own retries having run out): the document and those after
  it stay pending, in order.
- A refusal of the document itself (400, 404, 422: a closed period, a product
  archived since) marks the document
  ``rejected`` with the service's message, for staff to see (``rejected()``); it
  is never resent as is, and the documents after it go on.
- Two processes flushing the same file at once are kept apart by a lock row
  taken in an ``IMMEDIATE`` transaction; a lock older than ``lock_seconds`` (a
  killed flusher) is taken over.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sqlite3
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from tillbook_client._core import PUBLIC, encode
from tillbook_client.client import Client
from tillbook_client.errors import ApiError, TransportError

Kind = Literal["sale", "sales_return", "payment"]
PATHS: dict[str, str] = {
    "sale": PUBLIC + "/sales",
    "sales_return": PUBLIC + "/sales-returns",
    "payment": PUBLIC + "/payments",
}

REFUSALS = frozenset({400, 404, 413, 415, 422})
"""Answers that judge the document itself: it is set aside (``rejected``). Any other
error (401, 403, 409, 429, 5xx) is about the moment or the till's set-up: the
flush stops and the document stays pending, in order."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    idempotency_key TEXT NOT NULL UNIQUE,
    invoice_number TEXT,
    body TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'pending',
    attempts INTEGER NOT NULL DEFAULT 0,
    tried_at REAL,
    response TEXT,
    error TEXT,
    created_at TEXT NOT NULL,
    sent_at TEXT
);
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS flush_lock (
    id INTEGER PRIMARY KEY CHECK (id = 1), owner TEXT, taken_at REAL
);
"""


@dataclass(frozen=True)
class Queued:
    seq: int
    kind: str
    idempotency_key: str
    invoice_number: str | None
    body: dict[str, Any]
    state: str
    attempts: int
    tried_at: float | None
    response: dict[str, Any] | None
    error: str | None


@dataclass(frozen=True)
class FlushResult:
    sent: int
    rejected: int
    pending: int
    stopped_by: str | None  # why the flush stopped early, if it did


class OfflineQueue:
    """``path``: the SQLite file. ``prefix``: this till's invoice prefix, unique per
    till in the warehouse (``T1`` gives ``T1-000001``…): it is what makes the
    numbers deterministic and unique without asking the service."""

    def __init__(
        self, path: str | os.PathLike[str], prefix: str, *, lock_seconds: float = 120.0
    ) -> None:
        self.prefix = prefix
        self.lock_seconds = lock_seconds
        self._db = sqlite3.connect(os.fspath(path), isolation_level=None, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.executescript(SCHEMA)

    def close(self) -> None:
        self._db.close()

    # --- writing documents down -------------------------------------------------------

    def add_sale(self, body: Mapping[str, Any]) -> Queued:
        """A sale, numbered now (``invoice_number`` unless the body has one)."""
        return self._add("sale", body, numbered=True)

    def add_sales_return(self, body: Mapping[str, Any]) -> Queued:
        """A sales return (its ``invoice_number``, if any, names the original sale)."""
        return self._add("sales_return", body, numbered=False)

    def add_payment(self, body: Mapping[str, Any]) -> Queued:
        return self._add("payment", body, numbered=False)

    def _add(self, kind: Kind, body: Mapping[str, Any], *, numbered: bool) -> Queued:
        data = json.loads(encode(dict(body)))
        self._db.execute("BEGIN IMMEDIATE")
        try:
            n = self._next(kind)
            key = f"{self.prefix}-{kind}-{n:06d}"
            invoice = None
            if numbered:
                invoice = data.setdefault("invoice_number", f"{self.prefix}-{n:06d}")
            data.setdefault("unique_id", key)
            cur = self._db.execute(
                "INSERT INTO documents (kind, idempotency_key, invoice_number, body, created_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (kind, key, invoice, json.dumps(data), _now()),
            )
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        seq = cur.lastrowid
        assert seq is not None
        return self.get(seq)

    def _next(self, kind: str) -> int:
        self._db.execute(
            "INSERT INTO counters (name, value) VALUES (?, 1)"
            " ON CONFLICT (name) DO UPDATE SET value = value + 1",
            (kind,),
        )
        row = self._db.execute("SELECT value FROM counters WHERE name = ?", (kind,)).fetchone()
        return int(row[0])

    # --- reading the queue ------------------------------------------------------------

    def get(self, seq: int) -> Queued:
        row = self._db.execute(f"SELECT {_COLUMNS} FROM documents WHERE seq = ?", (seq,)).fetchone()
        if row is None:
            raise KeyError(seq)
        return _queued(row)

    def _state(self, state: str) -> list[Queued]:
        rows = self._db.execute(
            f"SELECT {_COLUMNS} FROM documents WHERE state = ? ORDER BY seq", (state,)
        ).fetchall()
        return [_queued(r) for r in rows]

    def pending(self) -> list[Queued]:
        return self._state("pending")

    def rejected(self) -> list[Queued]:
        """Documents the service refused: show them to staff (see the README on
        late sales into a closed period)."""
        return self._state("rejected")

    def sent(self) -> list[Queued]:
        return self._state("sent")

    # --- sending --------------------------------------------------------------------------

    def flush(self, client: Client, *, owner: str | None = None) -> FlushResult:
        """Send every pending document in order; see the module docstring."""
        me = owner or f"{os.getpid()}-{time.monotonic_ns()}"
        if not self._lock(me):
            return FlushResult(0, 0, len(self.pending()), "another flush holds the lock")
        sent = rejected = 0
        stopped: str | None = None
        try:
            for doc in self.pending():
                # A signed write is accepted once per signature, and the signature
                # covers the timestamp in whole seconds: a till killed mid-send and
                # restarted within that second waits for the next one.
                if doc.tried_at is not None:
                    time.sleep(max(0.0, doc.tried_at + 1.05 - time.time()))
                self._db.execute(
                    "UPDATE documents SET attempts = attempts + 1, tried_at = ? WHERE seq = ?",
                    (int(time.time()), doc.seq),
                )
                try:
                    answer = client.request(
                        "POST", PATHS[doc.kind], json=doc.body, idempotency_key=doc.idempotency_key
                    )
                except TransportError as exc:
                    stopped = f"no answer: {exc}"
                    break
                except ApiError as exc:
                    if exc.status not in REFUSALS:
                        stopped = f"{exc.status}: {exc.message}"
                        break
                    self._db.execute(
                        "UPDATE documents SET state = 'rejected', error = ? WHERE seq = ?",
                        (
                            json.dumps(
                                {"status": exc.status, "message": exc.message, "errors": exc.errors}
                            ),
                            doc.seq,
                        ),
                    )
                    rejected += 1
                    continue
                self._db.execute(
                    "UPDATE documents SET state = 'sent', response = ?, sent_at = ? WHERE seq = ?",
                    (json.dumps(answer), _now(), doc.seq),
                )
                sent += 1
        finally:
            self._unlock(me)
        return FlushResult(sent, rejected, len(self.pending()), stopped)

    def _lock(self, me: str) -> bool:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            row = self._db.execute("SELECT owner, taken_at FROM flush_lock WHERE id = 1").fetchone()
            now = time.time()
            if row is not None and row[0] is not None and now - float(row[1]) < self.lock_seconds:
                self._db.execute("ROLLBACK")
                return False
            self._db.execute(
                "INSERT INTO flush_lock (id, owner, taken_at) VALUES (1, ?, ?)"
                " ON CONFLICT (id) DO UPDATE"
                " SET owner = excluded.owner, taken_at = excluded.taken_at",
                (me, now),
            )
            self._db.execute("COMMIT")
            return True
        except BaseException:
            self._db.execute("ROLLBACK")
            raise

    def _unlock(self, me: str) -> None:
        self._db.execute("UPDATE flush_lock SET owner = NULL WHERE id = 1 AND owner = ?", (me,))


_COLUMNS = (
    "seq, kind, idempotency_key, invoice_number, body, state, attempts, tried_at, response, error"
)


def _queued(row: Any) -> Queued:
    return Queued(
        seq=int(row[0]),
        kind=str(row[1]),
        idempotency_key=str(row[2]),
        invoice_number=row[3],
        body=json.loads(row[4]),
        state=str(row[5]),
        attempts=int(row[6]),
        tried_at=None if row[7] is None else float(row[7]),
        response=None if row[8] is None else json.loads(row[8]),
        error=row[9],
    )


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat()
