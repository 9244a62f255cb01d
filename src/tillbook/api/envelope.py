"""The spec's success envelope, added to a service's answer here and nowhere else.

Services return their answer's data, typed (``orders/views.py``, ``kit/shapes.py``);
a router hands it to one of these. Two forms, both the spec's:

- ``ok``: ``{"status": "success", "data": ...}``, reads and most writes;
- ``flat``: ``status`` beside the answer's own fields, the v1 writes that answer
  that way (``POST /sales``: ``{"status": "success", "order_id": ...}``).

The OpenAPI document declares the same two around the same types
(``api/public/openapi.py``: ``Ok[...]``, and a flat answer's subclass adding
``status``). A plain dict built per request, no validation: the sale path pays
one small dict.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["done", "flat", "ok"]


def ok(data: object) -> dict[str, Any]:
    """``data`` in the spec's envelope."""
    return {"status": "success", "data": data}


def flat(answer: Mapping[str, object]) -> dict[str, Any]:
    """``answer``'s fields beside ``status``, ``status`` first."""
    return {"status": "success", **answer}


def done(message: str) -> dict[str, Any]:
    """A change with nothing to show but what was done (a webhook removed, a
    session ended): ``{"status": "success", "message": ...}``."""
    return {"status": "success", "message": message}
