"""The public API's response shapes in the OpenAPI document.

An answer whose service is typed is declared once, as a ``TypedDict`` beside the
code that builds it (``orders/views.py``, ``orders/sales.py``; ``kit/shapes.py``
says how); here it is only put in its envelope, ``Ok[...]`` (``api/envelope.ok``)
or a subclass adding ``status`` (``api/envelope.flat``), under the component name
clients know. The models below that still list fields mirror services not typed
yet (issue 23), field by field; the routers return plain dicts either way (no
response validation at run time). Every shape forbids properties it does not
name, so a field added to a view without being declared fails the schemathesis
run (``tests/robustness/test_openapi_fuzz.py``) instead of going undocumented.

Money in orders is a decimal string with two places; product prices, stock and
quantities of order lines are JSON numbers (spec, DESIGN.md §3).
"""

from __future__ import annotations

from typing import Any, Generic, Literal, TypeVar, Union

from pydantic import BaseModel, ConfigDict

from tillbook.api.body import openapi_body
from tillbook.auth.service import EXAMPLES, SIGNATURE_WINDOW_S
from tillbook.catalog.prices import PriceAdjusted, PriceAdjustmentBatch
from tillbook.catalog.views import (
    Brand,
    BrandChange,
    Category,
    FlatCategory,
    ProductChange,
    ProductDetail,
    ProductListItem,
    TaxChange,
    TaxItem,
    UnitItem,
    Warehouse,
)
from tillbook.giftcards.queries import GiftCardBalanceData
from tillbook.inventory.adjustments import AdjustmentRecorded, StockAdjustment
from tillbook.inventory.transfers import Transfer, TransferStep
from tillbook.kit.changes import Changes
from tillbook.kit.shapes import answer
from tillbook.loyalty.queries import CustomerPointsData
from tillbook.orders.purchases import PurchaseRecorded
from tillbook.orders.returns import ReturnRecorded
from tillbook.orders.sales import SalePreview, SaleRecorded
from tillbook.orders.views import OrderDetail, OrderListItem
from tillbook.orders.voids import SaleVoid
from tillbook.parties.queries import Customer, CustomerChange, Supplier
from tillbook.payments.expenses import Expense, ExpenseRecorded
from tillbook.payments.gift_cards import GiftCardData
from tillbook.payments.reference import ExpenseCategoryItem, PaymentModeChange, PaymentModeItem
from tillbook.payments.service import PaymentRecorded, UserInvoices
from tillbook.payments.terminal_callbacks import CallbackOutcome
from tillbook.payments.till import ShiftHead, ShiftReport
from tillbook.promotions.service import PromotionChange, PromotionItem
from tillbook.registers.service import Cashier, HeartbeatAnswer, RegisterDetails

T = TypeVar("T")


class Shape(BaseModel):
    model_config = ConfigDict(extra="forbid")


# --- errors -------------------------------------------------------------------------


class ErrorBody(Shape):
    """The error envelope of every failed request."""

    status: Literal["error"]
    message: str


class ValidationErrorBody(Shape):
    """422: ``errors`` names each bad field with its problems; a request that is
    well-formed but cannot be honoured (an idempotency token reused with another
    body, an imbalanced journal entry) carries ``message`` only."""

    status: Literal["error"]
    message: str
    errors: dict[str, list[str]] | None = None


class InternalErrorBody(Shape):
    status: Literal["error"]
    message: str
    request_id: str


# --- shared pieces --------------------------------------------------------------------


class Ok(Shape, Generic[T]):
    status: Literal["success"]
    data: T


class Page(Shape, Generic[T]):
    """The spec's pagination envelope."""

    current_page: int
    per_page: int
    total: int
    last_page: int
    data: list[T]


# --- catalog ---------------------------------------------------------------------------


class WarehouseList(Ok[list[Warehouse]]):
    pass


class CustomerPage(Page[Customer]):
    pass


class CustomerList(Ok[CustomerPage]):
    pass


class CustomerCreated(Ok[Customer]):
    pass


class SupplierPage(Page[Supplier]):
    pass


class SupplierList(Ok[SupplierPage]):
    pass


class PaymentModeList(Ok[list[PaymentModeItem]]):
    pass


class TaxList(Ok[list[TaxItem]]):
    pass


class UnitList(Ok[list[UnitItem]]):
    pass


class ExpenseCategoryList(Ok[list[ExpenseCategoryItem]]):
    pass


class ProductPage(Page[ProductListItem]):
    pass


class ProductList(Ok[ProductPage]):
    pass


class ProductResponse(Ok[ProductDetail]):
    pass


class CategoryList(Ok[list[Category]]):
    pass


class CategoryResponse(Ok[Category]):
    pass


class BrandList(Ok[list[Brand]]):
    pass


class BrandResponse(Ok[Brand]):
    pass


# --- orders (sales, purchases, returns) --------------------------------------------------


class OrderPage(Page[OrderListItem]):
    pass


class OrderList(Ok[OrderPage]):
    pass


class OrderResponse(Ok[OrderDetail]):
    pass


@answer
class SaleCreated(SaleRecorded):
    status: Literal["success"]


@answer
class PurchaseCreated(PurchaseRecorded):
    status: Literal["success"]


@answer
class ReturnCreated(ReturnRecorded):
    status: Literal["success"]


class SalePreviewResponse(Ok[SalePreview]):
    pass


@answer
class SaleVoided(SaleVoid):
    status: Literal["success"]


# --- till shifts -------------------------------------------------------------------------


class ShiftResponse(Ok[ShiftReport]):
    pass


class ShiftList(Ok[list[ShiftHead]]):
    pass


# --- registers ---------------------------------------------------------------------------


class RegisterResponse(Ok[RegisterDetails]):
    pass


class CashierList(Ok[list[Cashier]]):
    pass


class HeartbeatResponse(Ok[HeartbeatAnswer]):
    pass


# --- adjustments ---------------------------------------------------------------------------


class StockAdjustmentPage(Page[StockAdjustment]):
    pass


class StockAdjustmentList(Ok[StockAdjustmentPage]):
    pass


@answer
class StockAdjustmentCreated(AdjustmentRecorded):
    status: Literal["success"]


class PriceAdjustmentPage(Page[PriceAdjustmentBatch]):
    pass


class PriceAdjustmentList(Ok[PriceAdjustmentPage]):
    pass


@answer
class PriceAdjustmentCreated(PriceAdjusted):
    status: Literal["success"]


# --- payments and expenses ----------------------------------------------------------------


@answer
class PaymentCreated(PaymentRecorded):
    status: Literal["success"]


class GiftCardSold(Ok[GiftCardData]):
    pass


class GiftCardBalance(Ok[GiftCardBalanceData]):
    pass


class CustomerPoints(Ok[CustomerPointsData]):
    pass


class UserInvoicesResponse(Ok[UserInvoices]):
    pass


class ExpensePage(Page[Expense]):
    pass


class ExpenseList(Ok[ExpensePage]):
    pass


@answer
class ExpenseCreated(ExpenseRecorded):
    status: Literal["success"]


@answer
class CallbackResult(CallbackOutcome):
    status: Literal["success"]


# --- change feeds (offline tills: ``updated_since`` and ``cursor``) ---------------------------


class PromotionList(Ok[list[PromotionItem]]):
    pass


class PromotionChanges(Ok[Changes[PromotionChange]]):
    pass


class ProductChanges(Ok[Changes[ProductChange]]):
    pass


class CategoryChanges(Ok[Changes[FlatCategory]]):
    pass


class BrandChanges(Ok[Changes[BrandChange]]):
    pass


class TaxChanges(Ok[Changes[TaxChange]]):
    pass


class PaymentModeChanges(Ok[Changes[PaymentModeChange]]):
    pass


class CustomerChanges(Ok[Changes[CustomerChange]]):
    pass


# --- stock transfers ------------------------------------------------------------------------


@answer
class TransferWritten(TransferStep):
    status: Literal["success"]


class TransferPage(Page[Transfer]):
    pass


class TransferList(Ok[TransferPage]):
    pass


class TransferResponse(Ok[Transfer]):
    pass


# --- per-endpoint response sets -----------------------------------------------------------

_STRING = {"type": "string"}
_INTEGER_STRING = {"type": "string", "pattern": "^[0-9]+$"}


def _header(description: str, schema: dict[str, Any] = _STRING, *, required: bool = False) -> Any:
    return {"description": description, "required": required, "schema": schema}


_REQUEST_ID = {"X-Request-Id": _header("id of this request, quoted in logs", required=True)}
_RATE_HEADERS = {
    "X-RateLimit-Limit": _header("requests allowed per window", _INTEGER_STRING, required=True),
    "X-RateLimit-Remaining": _header("requests left in this window", _INTEGER_STRING),
    "X-RateLimit-Reset": _header("Unix time the window resets", _INTEGER_STRING, required=True),
}
_RETRY_AFTER = _header("seconds to wait before retrying", _INTEGER_STRING, required=True)

_ERRORS: dict[int, tuple[type[BaseModel], str, dict[str, Any]]] = {
    400: (ErrorBody, "malformed JSON or an empty body", {}),
    401: (ErrorBody, "missing or wrong credentials, bad or stale signature", {}),
    403: (ErrorBody, "the company's subscription has expired", {}),
    404: (ErrorBody, "no such record in this warehouse or company", {}),
    409: (
        ErrorBody,
        "another request holds the same records or the same idempotency token",
        {"Retry-After": {**_RETRY_AFTER, "required": False}},
    ),
    415: (ErrorBody, "Content-Type is not application/json", {}),
    422: (ValidationErrorBody, "invalid request: nothing was recorded", {}),
    429: (ErrorBody, "the key's rate limit is exhausted", {"Retry-After": _RETRY_AFTER}),
    500: (InternalErrorBody, "unexpected failure; nothing was half-written", {}),
    503: (ErrorBody, "the database is unavailable", {"Retry-After": _RETRY_AFTER}),
}

KEYED = (401, 403, 429, 500, 503)
"""What any request authenticated with the key headers may answer."""


def _response(model: type[Any], description: str, headers: dict[str, Any]) -> Any:
    return {"model": model, "description": description, "headers": {**_REQUEST_ID, **headers}}


def ok(model: type[Any], *errors: int, keyed: bool = True) -> dict[int | str, Any]:
    """``responses=`` for a route: its 200 ``model`` (a pydantic model or an answer's
    ``TypedDict``) and the error envelopes it can answer."""
    success_headers = dict(_RATE_HEADERS) if keyed else {}
    out: dict[int | str, Any] = {200: _response(model, "success", success_headers)}
    for code in sorted({*errors, *(KEYED if keyed else (500, 503))}):
        body, description, headers = _ERRORS[code]
        out[code] = _response(body, description, headers)
    return out


def document(description: str, *errors: int) -> dict[int | str, Any]:
    """``responses=`` for a route answering a document (a receipt): HTML or text."""
    out = ok(ErrorBody, *errors)
    out[200] = {
        "description": description,
        "headers": {**_REQUEST_ID, **_RATE_HEADERS},
        "content": {
            "text/html": {"schema": {"type": "string"}},
            "text/plain": {"schema": {"type": "string"}},
        },
    }
    return out


def cached(*models: type[BaseModel], errors: tuple[int, ...] = (422,)) -> dict[int | str, Any]:
    """``responses=`` for a catalog read answering any of ``models`` (the plain list,
    or its change feed), with its ``ETag`` and the 304 of ``If-None-Match``."""
    out = ok(models[0], *errors)
    success = out[200]
    if len(models) > 1:
        success["model"] = Union[models]  # noqa: UP007  (a runtime union of classes)
    success["headers"] = {
        **success["headers"],
        "ETag": _header("tag of this answer", required=True),
    }
    out[304] = {
        "description": "unchanged since the If-None-Match tag",
        "headers": {**_REQUEST_ID, "ETag": _header("tag of this answer", required=True)},
    }
    return out


READ = ()
QUERY = (422,)
ONE = (404,)
WRITE = (400, 409, 415, 422)


def write_body(model: type[BaseModel]) -> dict[str, Any]:
    """``openapi_extra`` of a write endpoint: its JSON body and the idempotency header."""
    extra = openapi_body(model)
    extra["parameters"] = [
        {
            "name": "Idempotency-Key",
            "in": "header",
            "required": False,
            "description": "client token; a retry with the same token and body replays "
            "the first response (24 h), another body with it is a 422",
            "schema": {"type": "string", "minLength": 1, "maxLength": 255},
        }
    ]
    return extra


# --- the document --------------------------------------------------------------------------


def _signing_description() -> str:
    """How to sign, with the worked examples computed by the service's own ``sign``
    (docs/integrators/signing.md shows the same figures; a test keeps them equal)."""
    examples = "\n\n".join(
        f"Example {i}:\n\n- hmac_secret: `{e.hmac_secret}`\n- timestamp: `{e.timestamp}`\n"
        f"- method: `{e.method}`\n- path: `{e.path}`\n"
        + (f"- body: `{e.body}`\n" if e.body else "- body: empty\n")
        + f"- canonical string: `{e.canonical}`\n- X-Service-Signature: `{e.signature}`"
        for i, e in enumerate(EXAMPLES, 1)
    )
    return (
        "Optional request signing (required for keys created with `--require-signature`). "
        "Send `X-Service-Timestamp` (Unix seconds, ASCII digits 0-9 only) and "
        "`X-Service-Signature`: the lower-case hex HMAC-SHA256 of the canonical string "
        "`TIMESTAMP.METHOD.PATH.BODY`, keyed with the key's `hmac_secret` string "
        "(UTF-8 bytes). METHOD is upper case; PATH is the path and query exactly as "
        "sent on the wire, from the root (`/api/v1/public/products?search=milk%20bottle`: "
        "percent-encoding untouched, no `?` without a query); BODY is the raw request "
        "body (empty for GET). A timestamp more than "
        f"{SIGNATURE_WINDOW_S} seconds from server time is refused (401). A signed write "
        "(POST, PUT, PATCH, DELETE) is accepted once: sign a retry with a new timestamp. "
        "A signed read may be repeated within the window.\n\n" + examples
    )


SECURITY_SCHEMES = {
    "PublicKey": {
        "type": "apiKey",
        "in": "header",
        "name": "X-Service-Public-Key",
        "description": "the key pair's public key; names the warehouse and company",
    },
    "SecretKey": {
        "type": "apiKey",
        "in": "header",
        "name": "X-Service-Secret-Key",
        "description": "the key pair's secret key (backend only)",
    },
    "Timestamp": {
        "type": "apiKey",
        "in": "header",
        "name": "X-Service-Timestamp",
        "description": "signed requests: Unix seconds, digits 0-9 only. " + _signing_description(),
    },
    "Signature": {
        "type": "apiKey",
        "in": "header",
        "name": "X-Service-Signature",
        "description": "signed requests: lower-case hex HMAC-SHA256. " + _signing_description(),
    },
}


# The key pair alone, or the key pair with a signature (DESIGN §9).
KEY_PAIR: list[dict[str, list[str]]] = [
    {"PublicKey": [], "SecretKey": []},
    {"PublicKey": [], "SecretKey": [], "Timestamp": [], "Signature": []},
]
FASTAPI_422 = "#/components/schemas/HTTPValidationError"
ENVELOPE_422 = "#/components/schemas/ValidationErrorBody"


def _bare_refs(operation: dict[str, Any]) -> None:
    """A route annotated ``-> dict[str, Any]`` gets an inferred ``{"type": "object", ...}``
    that FastAPI merges beside our ``$ref``; the ``$ref`` alone is the truth."""
    for response in operation.get("responses", {}).values():
        for media in response.get("content", {}).values():
            schema = media.get("schema", {})
            if "$ref" in schema:
                media["schema"] = {"$ref": schema["$ref"]}


def _fastapi_422(operation: dict[str, Any]) -> dict[str, Any] | None:
    """FastAPI's own 422 (``detail`` list), added to any operation with parameters."""
    response = operation.get("responses", {}).get("422", {})
    schema = response.get("content", {}).get("application/json", {}).get("schema", {})
    return response if schema.get("$ref") == FASTAPI_422 else None


def finish_openapi(schema: dict[str, Any]) -> dict[str, Any]:
    """Finish the generated document.

    - The key headers become security schemes, required by each operation that
      authenticates with the key pair (``ok(keyed=True)``, marked by its rate-limit
      headers); terminal callbacks and the back office authenticate otherwise.
    - Response schemas lose the clutter FastAPI infers beside our ``$ref``.
    - FastAPI's default 422 (a ``detail`` list) is never what the service answers:
      dropped where ``ok()`` listed the real statuses, else replaced by the envelope.
    """
    schema.setdefault("components", {}).setdefault("securitySchemes", {}).update(SECURITY_SCHEMES)
    for item in schema.get("paths", {}).values():
        for operation in item.values():
            headers = operation.get("responses", {}).get("200", {}).get("headers", {})
            documented = "X-Request-Id" in headers
            if "X-RateLimit-Limit" in headers:
                operation["security"] = KEY_PAIR
            default_422 = _fastapi_422(operation)
            if default_422 is not None and documented:
                del operation["responses"]["422"]
            elif default_422 is not None:
                default_422["content"]["application/json"]["schema"] = {"$ref": ENVELOPE_422}
            if documented:
                _bare_refs(operation)
    components = schema["components"].get("schemas", {})
    if FASTAPI_422.rsplit("/", 1)[1] in components and FASTAPI_422 not in str(schema["paths"]):
        components.pop("HTTPValidationError", None)
        components.pop("ValidationError", None)
    return schema
