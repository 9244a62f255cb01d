"""JSON request bodies, parsed by pydantic-core straight from bytes.

Parsing from bytes keeps numbers exact (``0.1`` becomes ``Decimal("0.1")``, never a
float first) and lets authentication and the content-type check run before any
body error is reported.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError

from tillbook.errors import BadRequest, ValidationFailed
from tillbook.kit.text import QUOTE_LIMIT, quoted, shorten

if TYPE_CHECKING:  # the CLI parses bodies too, and need not import FastAPI to start
    from fastapi import Request

M = TypeVar("M", bound=BaseModel)


def field_path(loc: tuple[int | str, ...]) -> str:
    # A location can hold a key the client chose (an unknown property): cut it short.
    parts = [shorten(str(p)) for p in loc if p not in ("body",)]
    return ".".join(parts) or "body"


# Fields whose value is never quoted back, by any part of their name: a rejected
# password is still the owner's password, and a rejected secret still a secret.
SECRET_NAME_PARTS = ("password", "secret", "token")
HIDDEN = "<hidden>"


def _is_secret(loc: tuple[int | str, ...]) -> bool:
    return any(
        isinstance(part, str) and any(word in part.lower() for word in SECRET_NAME_PARTS)
        for part in loc
    )


def _message(err: Any) -> str:
    """Pydantic's message, with at most ``QUOTE_LIMIT`` characters of the value it
    rejected and none of a secret's (DESIGN.md §12).

    The value is added as ``(got …)`` unless the message already shows it (a
    validator's own ``ValueError``); a message that shows a long value or a secret
    has it cut or hidden in place."""
    msg = str(err["msg"])
    if "input" not in err:
        return msg
    value = err["input"]
    secret = _is_secret(tuple(err.get("loc", ())))
    if isinstance(value, str | bytes) and value and (secret or len(value) > QUOTE_LIMIT):
        shown = HIDDEN if secret else quoted(value)
        msg = msg.replace(repr(value), shown)
        if isinstance(value, str) and len(value) >= 8:  # shown without quotes
            msg = msg.replace(value, shown)
    if (
        err["type"] not in ("missing",)
        and not secret
        and not isinstance(value, dict | list)
        and repr(value) not in str(err["msg"])
    ):
        msg += f" (got {quoted(value)})"
    return msg


_UNION_TAGS = {"int", "str", "constrained-str", "constrained-int", "decimal", "float", "bool"}


def _is_branch_tag(part: int | str) -> bool:
    """Union branches and validator wrappers show up in pydantic locations; a client
    wants the field name only."""
    return isinstance(part, str) and (part in _UNION_TAGS or part.startswith("function-"))


def errors_of(exc: ValidationError) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for err in exc.errors():
        loc = tuple(p for p in err["loc"] if not _is_branch_tag(p))
        messages = out.setdefault(field_path(loc), [])
        message = _message(err)
        if message not in messages:
            messages.append(message)
    return out


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def _exact_number(text: str) -> Decimal:
    """A JSON number with a fraction or an exponent, exactly. An exponent beyond what
    Decimal represents (``1e99999999999999999999``) raises InvalidOperation, not a
    ValueError: refused here like NaN, as a number JSON cannot carry to us."""
    try:
        return Decimal(text)
    except ArithmeticError:
        raise ValueError(f"the number {text[:40]} is out of any range") from None


def decode_json(raw: bytes) -> Any:
    """JSON with every non-integer number as an exact Decimal (never a float)."""
    try:
        return json.loads(raw, parse_float=_exact_number, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:
        raise BadRequest(f"malformed JSON: {exc}") from None


async def parse_body(request: Request, model: type[M]) -> tuple[M, bytes]:
    raw = await request.body()
    return parse_bytes(raw, model), raw


def parse_bytes(raw: bytes, model: type[M]) -> M:
    """A body already read (a signed callback is verified over its bytes first)."""
    if not raw.strip():
        raise BadRequest("request body is empty; send a JSON object")
    data = decode_json(raw)
    if not isinstance(data, dict):
        raise ValidationFailed({"body": ["must be a JSON object"]})
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ValidationFailed(errors_of(exc)) from None


def errors_of_request(errors: Any) -> dict[str, list[str]]:
    """FastAPI's query/path validation errors in the same field-by-field shape."""
    out: dict[str, list[str]] = {}
    for err in errors:
        loc = tuple(p for p in err["loc"] if p not in ("query", "path", "header"))
        out.setdefault(field_path(loc), []).append(_message(err))
    return out or {"request": ["invalid request"]}


REF_TEMPLATE = "#/components/schemas/{model}"
BODY_SCHEMAS: dict[str, Any] = {}
# The model each documented body is parsed with, by schema name: the document test
# parses every request example with it, as the endpoint would.
BODY_MODELS: dict[str, type[BaseModel]] = {}


def openapi_body(model: type[BaseModel]) -> dict[str, Any]:
    """``openapi_extra`` documenting a body that the endpoint parses itself."""
    schema = model.model_json_schema(ref_template=REF_TEMPLATE)
    BODY_SCHEMAS.update(schema.pop("$defs", {}))
    BODY_SCHEMAS[model.__name__] = schema
    BODY_MODELS[model.__name__] = model
    return {
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {"schema": {"$ref": REF_TEMPLATE.format(model=model.__name__)}}
            },
        }
    }
