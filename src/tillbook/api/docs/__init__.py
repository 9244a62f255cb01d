"""The OpenAPI document's prose, examples and admin response types, in one place.

``document(schema)`` runs last in the app's ``openapi()`` (``app.py``), after
FastAPI has generated the document and ``api/public/openapi.finish_openapi`` has
added the security schemes. It adds, without any route decorator having to carry
them:

- for every operation (``operations.OPERATIONS``, keyed ``"METHOD /path"``): its
  summary, description, a request example (when it takes a JSON body), a response
  example, and the error responses an admin route can answer;
- the back office's answers, each the type its view returns, in its envelope
  (``admin_models.ADMIN_RESPONSES``);
- a description for every property of every component schema and every parameter
  (``fields.FIELDS``, by name, with ``fields.OVERRIDES`` by schema and name where one
  name means different things, such as ``user_id``);
- the webhook events in the document's ``webhooks`` section (``events.EVENTS``).

Adding a route? ``tests/api/test_openapi_document.py`` fails until it is described:

1. add ``"METHOD /api/v1/...": op("Summary", "What it does, who may, what it
   changes.")`` to ``OPERATIONS`` in ``operations.py`` (``request=`` /
   ``response=`` give hand-written examples; without them the examples are built
   from the schema and the example values of ``fields.FIELDS``);
2. give every new property or parameter name a ``FIELDS`` entry (description,
   example), or an ``OVERRIDES`` entry when the name is already there but means
   something else on your schema;
3. a back-office route answering JSON: declare its answer as an ``@answer``
   ``TypedDict`` beside the view that builds it (``kit/shapes.py``), return it
   through ``api/envelope.py`` and attach it in ``admin_models.ADMIN_RESPONSES``.
"""

from __future__ import annotations

import copy
from typing import Any

from pydantic import TypeAdapter
from pydantic.json_schema import GenerateJsonSchema

from tillbook.api.body import BODY_SCHEMAS
from tillbook.api.docs import admin_models, events, examples, fields, operations
from tillbook.api.public.openapi import ENVELOPE_422

REF = "#/components/schemas/{model}"
ERROR = "#/components/schemas/ErrorBody"

_ADMIN_ERRORS: dict[int, str] = {
    400: "a body that is not JSON (or a malformed multipart upload), or a number no "
    "decimal can hold",
    401: "no session, or an expired or ended one (log in again)",
    403: "the staff member's role lacks the permission the route names, or the "
    "warehouse is outside their scope",
    404: "no such record in the session's company (in the path, or one the query or body names)",
    409: "a conflicting record (a duplicate code or email), or a concurrent request "
    "with the same Idempotency-Key",
    412: "the version named by If-Match (or the body's `version`) is stale: read again",
    415: "Content-Type is not application/json (or multipart/form-data for an import)",
    422: "invalid request; `errors` names each bad field; nothing was changed",
    428: "an edit without If-Match or a body `version`",
    429: "too many failed logins from this address or for this email",
    500: "unexpected failure; nothing was half-written",
    503: "the database is unavailable; retry after Retry-After seconds",
}


def add_components(schema: dict[str, Any], defs: dict[str, Any]) -> None:
    """Put ``defs`` among the document's component schemas. A request body's name
    (``api/body.BODY_SCHEMAS``) given to another shape, before or after the body
    is merged, is a programming error: one would silently replace the other, and a
    client generated from the document would send or expect the wrong one. An
    answer's type generated again (the webhooks' ``data`` reuse the answers'
    types, generated for serialization, with their defaults) replaces its copy."""
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    for name, definition in defs.items():
        body = BODY_SCHEMAS.get(name)
        if body is not None and (
            definition != body or components.get(name, definition) != definition
        ):
            raise ValueError(f"a request body and another shape are both named {name!r}")
        components[name] = definition


def _add_models(schema: dict[str, Any], models: list[type[Any]]) -> None:
    """The components of ``models``: pydantic models, or the ``TypedDict`` shapes
    services return (``kit/shapes.py``)."""
    inputs = [(m.__name__, "serialization", TypeAdapter(m).core_schema) for m in models]
    _, defs = GenerateJsonSchema(ref_template=REF).generate_definitions(inputs)  # type: ignore[arg-type]
    add_components(schema, {str(name): definition for name, definition in defs.items()})


def _admin_errors(key: str, operation: dict[str, Any]) -> None:
    method, path = key.split(" ", 1)
    codes = {401, 403, 404, 500, 503}
    if path.endswith("/login"):
        codes = {400, 422, 429, 500, 503}
    if method in ("POST", "PUT", "PATCH", "DELETE"):
        codes |= {400, 409, 415, 422}
    # An edit names the version it is based on (``kit/versions.py``); a PUT that
    # replaces a record may too (the loyalty programme does), and so does a change
    # of a record's state (archive; a promotion's pause and resume).
    if method in ("PATCH", "PUT") or path.endswith(("/archive", "/pause", "/resume")):
        codes |= {412, 428}
    if operation.get("parameters"):
        codes.add(422)
    responses = operation.setdefault("responses", {})
    for code in sorted(codes):
        if str(code) in responses:
            continue
        # A 409 may name its field like a 422 (a duplicate name or code).
        ref = ENVELOPE_422 if code in (409, 422) else ERROR
        responses[str(code)] = {
            "description": _ADMIN_ERRORS[code],
            "content": {"application/json": {"schema": {"$ref": ref}}},
        }
        if code in (429, 503):
            responses[str(code)]["headers"] = {
                "Retry-After": {
                    "description": "seconds to wait before retrying",
                    "schema": {"type": "string", "pattern": "^[0-9]+$"},
                }
            }


def _admin_models(schema: dict[str, Any]) -> None:
    models = sorted({m for _, m in admin_models.ADMIN_RESPONSES.values()}, key=lambda m: m.__name__)
    _add_models(schema, models)
    for key, (status, model) in admin_models.ADMIN_RESPONSES.items():
        method, path = key.split(" ", 1)
        operation = schema["paths"].get(path, {}).get(method.lower())
        if operation is None:
            continue
        responses = operation.setdefault("responses", {})
        for code in ("200", "201"):
            if code != str(status):
                responses.pop(code, None)
        responses[str(status)] = {
            "description": "success",
            "content": {"application/json": {"schema": {"$ref": REF.format(model=model.__name__)}}},
        }


def _webhooks(schema: dict[str, Any]) -> None:
    data_models = sorted({m for m, _ in events.EVENTS.values()}, key=lambda m: m.__name__)
    _add_models(schema, data_models)
    hooks: dict[str, Any] = {}
    for event_type, (model, when) in events.EVENTS.items():
        name = "Event_" + event_type.replace(".", "_")
        schema["components"]["schemas"][name] = events.envelope_schema(
            event_type, REF.format(model=model.__name__)
        )
        hooks[event_type] = {
            "post": {
                "summary": f"{event_type}: {when.split(';')[0]}",
                "description": f"Sent when {when}. The service POSTs the event to every "
                "active webhook registered for it (`POST /api/v1/admin/webhooks`), signed "
                "with the webhook's secret. Any 2xx within 10 s counts as delivered; "
                "anything else is retried with full-jitter backoff for 24 h. Delivery is "
                "at least once: dedupe on the body's `id`.",
                "operationId": "webhook_" + event_type.replace(".", "_"),
                "parameters": copy.deepcopy(events.DELIVERY_HEADERS),
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": {"$ref": REF.format(model=name)}}},
                },
                "responses": {
                    "200": {"description": "any 2xx: delivered"},
                    "default": {"description": "anything else: retried later"},
                },
            }
        }
    schema["webhooks"] = hooks


def _operations(schema: dict[str, Any]) -> None:
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            key = f"{method.upper()} {path}"
            doc = operations.OPERATIONS.get(key)
            if doc is None:
                continue  # the document test names it
            operation["summary"] = doc.summary
            operation["description"] = doc.description
            if path.startswith("/api/v1/admin"):
                _admin_errors(key, operation)


def document(schema: dict[str, Any]) -> dict[str, Any]:
    """The generated document, finished for an integrator (see the module docstring)."""
    schema["info"]["description"] = operations.INTRODUCTION
    schema["info"]["title"] = "tillbook API"
    _admin_models(schema)
    _webhooks(schema)
    _operations(schema)
    fields.describe(schema)
    examples.add_examples(schema, operations.OPERATIONS)
    return schema
