"""JSON request bodies, parsed by pydantic-core straight from bytes.

Parsing from bytes keeps numbers exact (``0.1`` becomes ``Decimal("0.1")``, never a
float first) and lets authentication and the content-type check run before any
body error is reported.
"""

from __future__ import annotations

from typing import Any, TypeVar

from fastapi import Request
from pydantic import BaseModel, ValidationError

from tillbook.errors import BadRequest, ValidationFailed

M = TypeVar("M", bound=BaseModel)


def field_path(loc: tuple[int | str, ...]) -> str:
    parts = [str(p) for p in loc if p not in ("body",)]
    return ".".join(parts) or "body"


def _message(err: Any) -> str:
    msg = str(err["msg"])
    if err["type"] not in ("missing",) and "input" in err and not isinstance(
        err["input"], dict | list
    ):
        msg += f" (got {err['input']!r})"
    return msg


def errors_of(exc: ValidationError) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for err in exc.errors():
        loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-")))
        out.setdefault(field_path(loc), []).append(_message(err))
    return out


async def parse_body(request: Request, model: type[M]) -> tuple[M, bytes]:
    raw = await request.body()
    if not raw.strip():
        raise BadRequest("request body is empty; send a JSON object")
    try:
        return model.model_validate_json(raw), raw
    except ValidationError as exc:
        errs = exc.errors()
        if errs and errs[0]["type"] == "json_invalid":
            raise BadRequest(f"malformed JSON: {errs[0]['ctx'].get('error', 'invalid')}") from None
        if errs and errs[0]["type"] == "model_type" and errs[0]["loc"] == ():
            raise ValidationFailed({"body": ["must be a JSON object"]}) from None
        raise ValidationFailed(errors_of(exc)) from None


def errors_of_request(errors: Any) -> dict[str, list[str]]:
    """FastAPI's query/path validation errors in the same field-by-field shape."""
    out: dict[str, list[str]] = {}
    for err in errors:
        loc = tuple(p for p in err["loc"] if p not in ("query", "path", "header"))
        out.setdefault(field_path(loc), []).append(_message(err))
    return out or {"request": ["invalid request"]}
