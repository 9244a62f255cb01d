"""The garbage collector of a serving process.

CPython's cyclic collector walks every tracked object of a generation when that
generation fills up. A serving process holds a few hundred thousand long-lived
objects from its start (SQLAlchemy's metadata and compiled caches, FastAPI's routes
and pydantic's validators, the OpenAPI models), and every request allocates enough
containers to fill the youngest generation a few times; the oldest one then
collects often enough that the walk over the start-up heap cost a third of the CPU
of a product read by id (``py-spy --native``: ``gc_collect_main`` 33% of a request's
samples, issue 27). After start-up:

- ``gc.freeze()`` moves everything alive then into the permanent generation, which
  no collection walks (CPython's own advice for forking servers);
- the youngest generation is collected every ``YOUNG`` allocations instead of 700:
  a request's garbage is mostly acyclic and freed by reference counting anyway, and
  what is cyclic is found a little later, with a bounded amount of it in memory.

Only for ``tillbook serve`` (``Settings.settle_heap``): a test process builds and
drops many applications, and frozen objects are never collected.
"""

from __future__ import annotations

import gc

YOUNG = 20_000


def settle() -> None:
    """Collect what start-up left, freeze the rest, widen the youngest generation."""
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG, middle, old)
