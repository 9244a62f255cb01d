"""What this host's processes have written, as numbers every one of them can read
without asking the database: the basis of answers served from a process's memory
(``api.answers``).

A page of shared memory per database (``/dev/shm``, else the temporary folder)
holds one number for the whole database and one per company (``SLOTS`` of them,
by company id: two companies that share a slot only forget each other's answers
more often). Every
committed write of a process of this host (``db._committed``: the workers of
``tillbook serve``, the CLI) stores a fresh random number in its company's slot
when it knows the company (a request with a key, ``writing_for``) and in the
database's slot otherwise, after COMMIT and before its answer is sent. Work whose
writes no answer shows (the webhook worker's, the roll-ups') leaves them alone
(``unseen_writes``).

A reader takes the two numbers (``stamp``) *before* it reads the database, and
keeps its answer under them. The answer may be served again while both numbers are
unchanged: a write the read did not see committed after the stamp was taken, so
its number is stored after it too, and the stamp no longer matches. A write that
the read did see only costs one answer read again. Random numbers, rather than a
count, so that two processes storing at once (each reading, adding one, writing
back) can never leave a slot at a value a reader stamped.

What this does not see: a write from another host, or from this host through
another address of the database (another page): each page has a ``signature``,
which the service's connections carry as their name, so that a worker can tell
when such a process is connected (``Database.shares_writes``) and stop serving
from memory (``api.answers``). Nor a statement typed into ``psql``, a process
killed between its COMMIT and its store, or a user whose processes cannot open
the page (another owner's): those show within ``answer_cache_s`` seconds, the age
after which an answer is read again anyway.
"""

from __future__ import annotations

import contextvars
import fcntl
import hashlib
import logging
import mmap
import os
import secrets
import tempfile
from pathlib import Path

log = logging.getLogger("tillbook.generations")

SLOTS = 4096
_HOST = 0  # the slot of writes whose company is not known
_ID = SLOTS + 1  # the page's own random id, set once
_SIZE = (SLOTS + 2) * 8


class _Writes:
    """The company a request's writes belong to, once its key is known; or that
    the writes change nothing an answer shows (``unseen``)."""

    __slots__ = ("company_id", "unseen")

    def __init__(self, *, unseen: bool = False) -> None:
        self.company_id: int | None = None
        self.unseen = unseen


_request: contextvars.ContextVar[_Writes | None] = contextvars.ContextVar(
    "tillbook_request_writes", default=None
)


class request_writes:
    """Around one request (``app.ContextHeaders``): its writes belong to no company
    until ``writing_for`` names one, and never to the next request's. A class, not a
    generator: it wraps every request, and ``contextlib.contextmanager``'s generator
    costs several times as much."""

    __slots__ = ("_token",)

    def __enter__(self) -> None:
        self._token = _request.set(_Writes())

    def __exit__(self, *_exc: object) -> None:
        _request.reset(self._token)


class unseen_writes:
    """Around work whose writes change nothing a kept answer shows (the webhook
    worker's outbox and deliveries, the ledger's roll-ups): its commits leave the
    numbers alone. Without it, an idle webhook worker's two commits a second would
    forget every company's answers as fast as they are kept."""

    __slots__ = ("_token",)

    def __enter__(self) -> None:
        self._token = _request.set(_Writes(unseen=True))

    def __exit__(self, *_exc: object) -> None:
        _request.reset(self._token)


def writing_for(company_id: int) -> None:
    """The current request acts for ``company_id`` (its key's company): every row it
    can write is that company's, so its commits forget that company's answers only.
    Outside a request (a worker's loop, the CLI) writes forget every company's."""
    writes = _request.get()
    if writes is not None:
        writes.company_id = company_id


def _folder() -> Path:
    shm = Path("/dev/shm")
    return shm if shm.is_dir() and os.access(shm, os.W_OK) else Path(tempfile.gettempdir())


class Generations:
    """A database's page of numbers on this host, mapped into this process."""

    def __init__(self, path: Path | None):
        """The page at ``path``, made if missing; None, or a page this process may
        not open (another user's, a folder that is full): a page of this process's
        own, whose answers see this process's writes at once and others' within
        ``answer_cache_s`` (``trusted`` says whether other processes may write
        unseen)."""
        self.path = path
        self._map = mmap.mmap(-1, _SIZE)
        self.shared = False
        page_id = secrets.randbits(64)  # this process's own page, unless shared
        if path is not None:
            try:
                self._map, page_id = _open(path)
                self.shared = True
            except OSError as exc:
                log.warning("answers are not shared with this host's processes: %s", exc)
        # A page of the host's shared memory, or a database in memory (one process's):
        # every writer of the database writes here.
        self.trusted = self.shared or path is None
        # The page's own random id, written once by whoever made it: the name this
        # process's connections carry (``db.Database.shares_writes``), the same for
        # every process that maps this page and no other.
        self.signature = f"{page_id:016x}"
        # Aligned eight-byte items: each store and load is one machine word.
        self._slots = memoryview(self._map).cast("Q")

    def stamp(self, company_id: int) -> tuple[int, int]:
        """The database's number and ``company_id``'s, to be taken before a read."""
        slots = self._slots
        return slots[_HOST], slots[1 + company_id % SLOTS]

    def written(self, company_id: int | None) -> None:
        """A write of ``company_id`` (None: of any) has committed."""
        slot = _HOST if company_id is None else 1 + company_id % SLOTS
        self._slots[slot] = secrets.randbits(64)


def _open(path: Path) -> tuple[mmap.mmap, int]:
    """The page at ``path`` mapped, and its id: made if missing, its blocks
    allocated (a store into a page the folder had no room for would kill the
    process), refused if it is a link or not this user's alone."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        found = os.fstat(fd)
        if found.st_uid != os.getuid() or found.st_mode & 0o077:
            raise OSError(f"{path} is not this user's alone")
        # One maker of the id. Unlocked by hand: the map keeps a duplicate of the
        # descriptor, which would hold the lock for as long as the map lives.
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            if found.st_size < _SIZE:
                os.posix_fallocate(fd, 0, _SIZE)
            mapped = mmap.mmap(fd, _SIZE)
            slots = memoryview(mapped).cast("Q")
            if slots[_ID] == 0:
                slots[_ID] = secrets.randbits(64) or 1
            page_id = int(slots[_ID])
            slots.release()
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
        return mapped, page_id
    finally:
        os.close(fd)


_pages: dict[str | None, Generations] = {}


def of_database(identity: str | None) -> Generations:
    """The host's page for the database ``identity`` names (``db.identity``: the
    same for every process of the host that reaches it by the same address), mapped
    on first use; None (a database in memory, one process's own): a page of this
    process alone."""
    page = _pages.get(identity)
    if page is None:
        if identity is None:
            page = Generations(None)
        else:
            digest = hashlib.sha256(identity.encode()).hexdigest()[:20]
            page = Generations(_folder() / f"tillbook-{os.getuid()}-{digest}.generations")
        _pages[identity] = page
    return page


def committed(page: Generations) -> None:
    """Called after every committed write of this process to ``page``'s database
    (``db._committed``)."""
    writes = _request.get()
    if writes is None:
        page.written(None)
    elif not writes.unseen:
        page.written(writes.company_id)
