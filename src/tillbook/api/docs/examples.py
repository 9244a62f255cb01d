"""Request and response examples for every operation.

A hand-written example (``op(request=..., response=...)`` in ``operations.py``)
wins; otherwise one is built from the schema, taking each property's value from
the example of its name in ``fields.FIELDS`` when that value fits the property's
schema (type, pattern, enum), else a plain value of the right type. The document
test validates every example against its schema, so a hand-written one cannot
drift from the shapes.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from tillbook.api.docs.fields import FIELDS

if TYPE_CHECKING:
    from tillbook.api.docs.operations import Op

MAX_DEPTH = 6


def _resolve(doc: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[1]
        schema = doc["components"]["schemas"][name]
    return schema


def _types(schema: dict[str, Any]) -> list[str]:
    t = schema.get("type")
    if isinstance(t, list):
        return [x for x in t if isinstance(x, str)]
    return [t] if isinstance(t, str) else []


def _fits(doc: dict[str, Any], schema: dict[str, Any], value: Any) -> bool:
    """A cheap check that a glossary example suits a property's schema."""
    schema = _resolve(doc, schema)
    for branch in schema.get("anyOf", []) + schema.get("oneOf", []):
        if _fits(doc, branch, value):
            return True
    if "const" in schema:
        return bool(schema["const"] == value)
    if "enum" in schema:
        return value in schema["enum"]
    kinds = _types(schema)
    if value is None:
        return "null" in kinds
    if isinstance(value, bool):
        return "boolean" in kinds
    if isinstance(value, int):
        ok = "integer" in kinds or "number" in kinds
        return (
            ok and value >= schema.get("minimum", value) and value <= schema.get("maximum", value)
        )
    if isinstance(value, float):
        return "number" in kinds
    if isinstance(value, str):
        if "string" not in kinds:
            return False
        pattern = schema.get("pattern")
        if pattern and not re.search(pattern, value):
            return False
        shortest: int = schema.get("minLength", 0)
        longest: int = schema.get("maxLength", len(value))
        return shortest <= len(value) <= longest
    if isinstance(value, list):
        return "array" in kinds and len(value) >= schema.get("minItems", 0)
    if isinstance(value, dict):
        return "object" in kinds
    return False


def _plain(schema: dict[str, Any]) -> Any:
    kinds = _types(schema)
    fmt = schema.get("format")
    if "string" in kinds:
        if fmt == "date":
            return "2026-11-20"
        if fmt == "date-time":
            return "2026-11-20T09:30:00Z"
        if fmt == "time":
            return "09:30:00"
        pattern = schema.get("pattern", "")
        if "\\.[0-9]{4}" in pattern:
            return "2.0000"
        if "\\.[0-9]{2}" in pattern:
            return "12.50"
        if pattern == "^[0-9]+$":
            return "1"
        if "https?://" in pattern:
            return "https://example.com/image.png"
        return "text"
    if "integer" in kinds:
        return max(1, int(schema.get("minimum", 1)))
    if "number" in kinds:
        return 2.5
    if "boolean" in kinds:
        return True
    if "null" in kinds:
        return None
    return None


def build(doc: dict[str, Any], schema: dict[str, Any], name: str = "", depth: int = 0) -> Any:
    """An example value of ``schema`` (``name``: the property it is the value of)."""
    schema = _resolve(doc, schema)
    if schema.get("examples"):
        return schema["examples"][0]
    if "example" in schema:
        return schema["example"]
    entry = FIELDS.get(name)
    if entry is not None and entry.example is not None and _fits(doc, schema, entry.example):
        return entry.example
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    branches = schema.get("anyOf") or schema.get("oneOf")
    if branches:
        chosen = next((b for b in branches if _resolve(doc, b).get("type") != "null"), branches[0])
        return build(doc, chosen, name, depth)
    kinds = _types(schema)
    if "object" in kinds or "properties" in schema:
        if depth > MAX_DEPTH:
            return {}
        return {
            prop: build(doc, sub, prop, depth + 1)
            for prop, sub in schema.get("properties", {}).items()
        }
    if "array" in kinds:
        if depth > MAX_DEPTH or "items" not in schema:
            return []
        return [build(doc, schema["items"], name, depth + 1)]
    return _plain(schema)


def _json_media(container: dict[str, Any]) -> dict[str, Any] | None:
    media = container.get("content", {}).get("application/json")
    return media if isinstance(media, dict) and "schema" in media else None


def add_examples(doc: dict[str, Any], ops: dict[str, Op]) -> None:
    for path, item in doc["paths"].items():
        for method, operation in item.items():
            op = ops.get(f"{method.upper()} {path}")
            body = _json_media(operation.get("requestBody", {}))
            if body is not None:
                given = op.request if op is not None else None
                body["example"] = given if given is not None else build(doc, body["schema"])
            for status, response in operation.get("responses", {}).items():
                media = _json_media(response)
                if media is None:
                    continue
                given = op.response if op is not None and status.startswith("2") else None
                media["example"] = given if given is not None else build(doc, media["schema"])
    for hook in doc.get("webhooks", {}).values():
        body = _json_media(hook["post"]["requestBody"])
        if body is not None:
            body["example"] = build(doc, body["schema"])
