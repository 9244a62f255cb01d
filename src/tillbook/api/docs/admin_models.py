"""The back office's answers attached to their operations in the OpenAPI document.

Each answer's shape is declared once, as a ``TypedDict`` beside the code that
builds it (``catalog/reference.py``, ``catalog/products.py``, ``parties/service.py``,
``tenancy/staff.py``, ``tenancy/warehouses.py``, ``payments/setup.py``,
``registers/service.py``, ``currency/rates.py``, ``auth/admin.py``,
``imports/csvfile.py``; ``kit/shapes.py`` says how); the admin routers put it in the
envelope with ``api/envelope.py``. Here it is only put in the same envelope, under
the component name clients know: ``_one`` for ``envelope.ok``, ``_flat`` for
``envelope.flat``, ``_list`` for the editable families' page flat beside ``status``,
``Page[...]`` for a page in ``data``. Every shape forbids properties it does not
name, so ``tests/api/test_openapi_document.py`` (which validates real answers of
every documented admin route against the document) fails when a view sends a field
its type does not declare.

They are attached to their operations by ``ADMIN_RESPONSES`` (method and path to
status and model), in one place, rather than by each route's decorator.
"""

from __future__ import annotations

from typing import Any, Literal, get_type_hints

from pydantic import BaseModel, ConfigDict, create_model

from tillbook.api.public.openapi import Page
from tillbook.auth.admin import SessionEnded, SessionOpened
from tillbook.catalog.products import AdminListing, AdminProduct, OpeningStock
from tillbook.catalog.reference import AdminBrand, AdminCategory, AdminTax, AdminUnit
from tillbook.currency.rates import (
    AdminCurrency,
    AdminExchangeRate,
    CurrencyList,
    RatesImported,
)
from tillbook.imports import ImportCounts
from tillbook.parties.service import AdminParty
from tillbook.payments.setup import AdminExpenseCategory, AdminPaymentMode
from tillbook.registers.service import AdminRegister, PairableBranch, PairedRegister
from tillbook.tenancy.staff import StaffMember
from tillbook.tenancy.warehouses import AdminWarehouse


class _Shape(BaseModel):
    model_config = ConfigDict(extra="forbid")


# --- pages in the success envelope (``api/envelope.ok`` of ``kit/pagination.paged``) ---


class AdminProductPage(Page[AdminProduct]):
    pass


class AdminPartyPage(Page[AdminParty]):
    pass


class StaffPage(Page[StaffMember]):
    pass


# --- envelopes ------------------------------------------------------------------------------


def _one(name: str, model: type[Any]) -> type[BaseModel]:
    """``{"status": "success", "data": <model>}`` under its own component name."""
    return create_model(
        name,
        __base__=_Shape,
        __doc__=f"One {model.__name__} in the success envelope.",
        status=(Literal["success"], ...),
        data=(model, ...),
    )


def _flat(name: str, shape: type[Any]) -> type[BaseModel]:
    """``status`` beside the fields of ``shape``, first, as ``envelope.flat`` sends
    them."""
    fields: dict[str, Any] = {
        field: (kind, ...) for field, kind in get_type_hints(shape, include_extras=True).items()
    }
    return create_model(name, __base__=_Shape, status=(Literal["success"], ...), **fields)


def _list(name: str, model: type[Any]) -> type[BaseModel]:
    """The flat page envelope of the editable families (``api/admin/editing.py``:
    ``envelope.flat`` of ``kit/pagination.paged``): ``status`` beside the page."""
    return create_model(
        name,
        __base__=_Shape,
        __doc__=f"A page of {model.__name__} records.",
        status=(Literal["success"], ...),
        current_page=(int, ...),
        per_page=(int, ...),
        total=(int, ...),
        last_page=(int, ...),
        data=(list[model], ...),  # type: ignore[valid-type]
    )


EDITABLE: dict[str, type[Any]] = {
    "units": AdminUnit,
    "categories": AdminCategory,
    "brands": AdminBrand,
    "taxes": AdminTax,
    "payment-modes": AdminPaymentMode,
    "expense-categories": AdminExpenseCategory,
    "warehouses": AdminWarehouse,
}

A = "/api/v1/admin"


def _responses() -> dict[str, tuple[int, type[BaseModel]]]:
    out: dict[str, tuple[int, type[BaseModel]]] = {}
    for prefix, model in EDITABLE.items():
        single = _one(f"{model.__name__}Answer", model)
        out[f"GET {A}/{prefix}"] = (200, _list(f"{model.__name__}List", model))
        out[f"POST {A}/{prefix}"] = (201, single)
        out[f"GET {A}/{prefix}/{{record_id}}"] = (200, single)
        out[f"PATCH {A}/{prefix}/{{record_id}}"] = (200, single)
        out[f"POST {A}/{prefix}/{{record_id}}/archive"] = (200, single)
    product = _one("AdminProductAnswer", AdminProduct)
    listing = _one("AdminListingAnswer", AdminListing)
    out[f"GET {A}/products"] = (200, _one("AdminProductList", AdminProductPage))
    out[f"POST {A}/products"] = (201, product)
    out[f"GET {A}/products/{{product_id}}"] = (200, product)
    out[f"PATCH {A}/products/{{product_id}}"] = (200, product)
    out[f"POST {A}/products/{{product_id}}/archive"] = (200, product)
    out[f"POST {A}/products/{{product_id}}/listings"] = (201, listing)
    out[f"PATCH {A}/products/{{product_id}}/listings/{{warehouse_id}}"] = (200, listing)
    out[f"POST {A}/products/{{product_id}}/listings/{{warehouse_id}}/opening-stock"] = (
        200,
        _one("OpeningStockAnswer", OpeningStock),
    )
    counts = _one("ImportAnswer", ImportCounts)
    out[f"POST {A}/import/products"] = (200, counts)
    party = _one("AdminPartyAnswer", AdminParty)
    party_list = _one("AdminPartyList", AdminPartyPage)
    for segment in ("customers", "suppliers"):
        out[f"GET {A}/{segment}"] = (200, party_list)
        out[f"POST {A}/{segment}"] = (200, party)
        out[f"GET {A}/{segment}/{{party_id}}"] = (200, party)
        out[f"PATCH {A}/{segment}/{{party_id}}"] = (200, party)
        out[f"POST {A}/{segment}/{{party_id}}/archive"] = (200, party)
        out[f"POST {A}/import/{segment}"] = (200, counts)
    staff = _one("StaffAnswer", StaffMember)
    out[f"GET {A}/staff"] = (200, _one("StaffList", StaffPage))
    out[f"POST {A}/staff"] = (200, staff)
    out[f"GET {A}/staff/{{staff_id}}"] = (200, staff)
    out[f"PATCH {A}/staff/{{staff_id}}"] = (200, staff)
    out[f"POST {A}/staff/{{staff_id}}/archive"] = (200, staff)
    out[f"PUT {A}/staff/{{staff_id}}/pin"] = (200, staff)
    out[f"GET {A}/registers/branches"] = (200, _one("PairableBranches", list[PairableBranch]))
    out[f"GET {A}/registers"] = (200, _one("AdminRegisterList", list[AdminRegister]))
    out[f"POST {A}/registers"] = (201, _one("PairedRegisterAnswer", PairedRegister))
    out[f"POST {A}/registers/{{register_id}}/revoke"] = (
        200,
        _one("AdminRegisterAnswer", AdminRegister),
    )
    currency = _one("AdminCurrencyAnswer", AdminCurrency)
    out[f"GET {A}/currencies"] = (200, _flat("AdminCurrencyList", CurrencyList))
    out[f"POST {A}/currencies"] = (200, currency)
    out[f"POST {A}/currencies/{{code}}/disable"] = (200, currency)
    out[f"GET {A}/exchange-rates"] = (200, _one("AdminExchangeRateList", list[AdminExchangeRate]))
    out[f"POST {A}/exchange-rates"] = (201, _one("AdminExchangeRateAnswer", AdminExchangeRate))
    out[f"POST {A}/exchange-rates/import"] = (200, _one("RatesImportAnswer", RatesImported))
    out[f"POST {A}/login"] = (200, _flat("LoginAnswer", SessionOpened))
    out[f"POST {A}/logout"] = (200, _flat("LogoutAnswer", SessionEnded))
    return out


ADMIN_RESPONSES = _responses()
"""``"METHOD /path"`` → (success status, model) of the admin routes typed here."""
