"""The OpenAPI document an integrator reads (issue 17): valid OpenAPI 3.1 by an
independent validator; every operation with a summary, a description, examples
and its error responses; every property and parameter described; every event in
``webhooks``; the signing worked examples recomputed; the back office's answers
match their documented models; ``/docs`` without a CDN.

A new route or field fails here until it is described in ``src/tillbook/api/docs``
(see that package's docstring)."""

from __future__ import annotations

import hashlib
import hmac
import re
from typing import Any

import jsonschema
import pytest
from openapi_spec_validator import validate

from tests.admin_helpers import ADMIN, login
from tillbook.api.docs.admin_models import ADMIN_RESPONSES
from tillbook.app import create_app
from tillbook.config import Settings
from tillbook.events.outbox import EVENT_TYPES

METHODS = ("get", "post", "put", "patch", "delete")


@pytest.fixture(scope="module")
def doc() -> dict[str, Any]:
    return create_app(Settings(database_url="sqlite:///:memory:")).openapi()


def operations(doc: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [
        (f"{method.upper()} {path}", op)
        for path, item in doc["paths"].items()
        for method, op in item.items()
        if method in METHODS
    ]


def validator(doc: dict[str, Any], schema: dict[str, Any]) -> jsonschema.Draft202012Validator:
    """Refs like ``#/components/schemas/X`` resolve against a root that holds them."""
    return jsonschema.Draft202012Validator(
        {**schema, "components": doc["components"]},
        format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER,
    )


def test_an_independent_validator_accepts_the_document(doc: dict[str, Any]) -> None:
    assert doc["openapi"].startswith("3.1")
    validate(doc)  # openapi-spec-validator, OpenAPI 3.1 rules and schema dialect


def test_every_operation_is_described_with_examples_and_errors(doc: dict[str, Any]) -> None:
    problems = []
    for key, op in operations(doc):
        if not op.get("summary") or not op.get("description"):
            problems.append(f"{key}: no summary or description (api/docs/operations.py)")
        body = op.get("requestBody", {}).get("content", {}).get("application/json")
        if body is not None and "example" not in body:
            problems.append(f"{key}: no request example")
        ok = [c for c in op["responses"] if c.startswith("2")]
        if not ok:
            problems.append(f"{key}: no success response")
        for code in ok:
            media = op["responses"][code].get("content", {}).get("application/json")
            if media is not None and "example" not in media:
                problems.append(f"{key}: no {code} example")
        if key != "GET /health" and not any(c.startswith(("4", "5")) for c in op["responses"]):
            problems.append(f"{key}: no error responses")
    assert not problems, "\n".join(problems)


def test_every_property_and_parameter_is_described(doc: dict[str, Any]) -> None:
    missing = []

    def walk(owner: str, schema: dict[str, Any]) -> None:
        for name, sub in (schema.get("properties") or {}).items():
            if not sub.get("description"):
                missing.append(f"{owner}.{name}")
            walk(owner, sub)
        for branch in schema.get("anyOf", []) + schema.get("oneOf", []):
            walk(owner, branch)

    for name, schema in doc["components"]["schemas"].items():
        walk(name, schema)
    for key, op in operations(doc):
        missing += [
            f"{key} parameter {p['name']}"
            for p in op.get("parameters", [])
            if not p.get("description")
        ]
    assert not missing, "undescribed (add to api/docs/fields.py): " + ", ".join(missing)


def test_user_id_and_quantities_say_what_they_are(doc: dict[str, Any]) -> None:
    schemas = doc["components"]["schemas"]
    assert "customer" in schemas["SaleIn"]["properties"]["user_id"]["description"]
    assert "supplier" in schemas["PurchaseIn"]["properties"]["user_id"]["description"]
    assert "base unit" in schemas["OrderLine"]["properties"]["quantity"]["description"] or (
        "unit" in schemas["OrderLine"]["properties"]["quantity"]["description"]
    )
    assert "decimal string" in schemas["OrderDetail"]["properties"]["total"]["description"]


def test_every_example_matches_its_schema(doc: dict[str, Any]) -> None:
    bad = []
    for key, op in operations(doc):
        media = [("request", op.get("requestBody", {}).get("content", {}).get("application/json"))]
        media += [
            (code, r.get("content", {}).get("application/json"))
            for code, r in op["responses"].items()
        ]
        for where, m in media:
            if m is None or "example" not in m:
                continue
            errors = list(validator(doc, m["schema"]).iter_errors(m["example"]))
            bad += [f"{key} {where}: {e.message}" for e in errors[:2]]
    for event, hook in doc["webhooks"].items():
        m = hook["post"]["requestBody"]["content"]["application/json"]
        bad += [
            f"{event}: {e.message}" for e in validator(doc, m["schema"]).iter_errors(m["example"])
        ]
    assert not bad, "\n".join(bad)


def test_every_event_is_in_the_webhooks_section(doc: dict[str, Any]) -> None:
    assert set(doc["webhooks"]) == set(EVENT_TYPES)
    for hook in doc["webhooks"].values():
        headers = {p["name"] for p in hook["post"]["parameters"]}
        assert {"X-Service-Signature", "Authorization", "X-Service-Event"} <= headers


async def test_product_updated_is_sent_as_documented_from_every_door(client, db, shop, doc) -> None:
    """``product.updated`` from each door that changes what a till lists (a product
    made, edited, listed, repriced, deactivated or archived through the admin API; a
    till's price adjustment; a CSV import creating and changing products and
    listings; a category or brand change) matches the documented event, whose
    listing form has every field required: one payload, whatever the door."""
    import json

    from sqlalchemy import select

    from tillbook.models import OutboxEvent

    h = await login(client, db, shop)
    wh, wh2 = shop.warehouse_id, shop.other_warehouse_id
    listing = {"warehouse_id": wh, "sales_price": "3.00", "purchase_price": "1.50", "mrp": "4"}
    body = {"name": "Door product", "item_code": "DOOR-1", "barcodes": ["990001"],
            "listings": [listing]}  # fmt: skip
    made = await client.post(f"{ADMIN}/products", json=body, headers=h)
    assert made.status_code in (200, 201), made.text
    pid = made.json()["data"]["id"]
    steps = [
        await client.patch(
            f"{ADMIN}/products/{pid}", json={"name": "Door product 2", "version": 1}, headers=h
        ),
        await client.post(
            f"{ADMIN}/products/{pid}/listings",
            json={"warehouse_id": wh2, "sales_price": "3.10", "purchase_price": "1.50"},
            headers=h,
        ),
        await client.patch(
            f"{ADMIN}/products/{pid}/listings/{wh}",
            json={"sales_price": "3.20", "active": False, "version": 1},
            headers=h,
        ),
        await client.post(
            "/price-adjustments",
            json={"product_id": shop.products["apple"], "new_sales_price": "4.10"},
            headers=shop.headers,
        ),
        await client.post(
            f"{ADMIN}/import/products",
            files={
                "file": (
                    "p.csv",
                    b"item_code,name,sales_price,warehouse\n"
                    + f"DOOR-2,Imported door,5.00,{wh}\n".encode()
                    + f"DOOR-1,Door product 3,3.30,{wh2}\n".encode(),
                    "text/csv",
                )
            },
            headers=h,
        ),
        await client.post(f"{ADMIN}/products/{pid}/archive", headers={**h, "If-Match": '"3"'}),
        await client.patch(
            f"{ADMIN}/categories/{shop.child_category_id}",
            json={"name": "Door juice", "version": 1},
            headers=h,
        ),
    ]
    for r in steps:
        assert r.status_code in (200, 201), r.text
    rows = await db.read(
        lambda s: s.execute(
            select(OutboxEvent.payload)
            .where(OutboxEvent.company_id == shop.company_id, OutboxEvent.type == "product.updated")
            .order_by(OutboxEvent.id)
        )
    )
    events = [json.loads(payload) for (payload,) in rows.all()]
    check = validator(doc, {"$ref": "#/components/schemas/Event_product_updated"})
    bad = [f"{e['data']}: {err.message}" for e in events for err in check.iter_errors(e)]
    assert not bad, "\n".join(bad)
    required = set(doc["components"]["schemas"]["ProductListingEventData"]["required"])
    assert {"id", "name", "item_code", "sales_price", "current_stock", "active"} <= required
    listed = [e["data"] for e in events if "id" in e["data"]]
    assert all(set(d) == required for d in listed)
    mine = [d for d in listed if d["id"] == pid]
    # created (1), renamed (1), listed in wh2 (1), repriced and deactivated (1),
    # imported change of name (2 listings) and new wh2 price (1), archived (2)
    assert len(mine) == 9, mine
    assert [d["active"] for d in mine[-2:]] == [False, False]  # archived: sold nowhere
    assert mine[3]["sales_price"] == 3.2 and mine[3]["active"] is False
    assert mine[0]["barcode"] == "990001" and mine[0]["mrp"] == 4
    imported = [d for d in listed if d["item_code"] == "DOOR-2"]
    assert len(imported) == 1 and imported[0]["sales_price"] == 5 and imported[0]["active"]
    apple = [d for d in listed if d["id"] == shop.products["apple"]]
    assert apple and apple[-1]["sales_price"] == 4.1
    assert any(e["data"].get("reason") == "category.updated" for e in events)


def test_signing_worked_examples_recompute(doc: dict[str, Any]) -> None:
    """The canonical strings and signatures the document shows, recomputed here with
    hmac alone from the secret it shows."""
    text = doc["components"]["securitySchemes"]["Signature"]["description"]
    secrets_ = re.findall(r"hmac_secret: `([^`]+)`", text)
    canonicals = re.findall(r"canonical string: `([^`]+)`", text)
    signatures = re.findall(r"X-Service-Signature: `([0-9a-f]{64})`", text)
    assert len(canonicals) == len(signatures) >= 2
    for secret, canonical, signature in zip(secrets_, canonicals, signatures, strict=True):
        assert (
            hmac.new(secret.encode(), canonical.encode(), hashlib.sha256).hexdigest() == signature
        )
    assert "TIMESTAMP.METHOD.PATH.BODY" in text


async def test_docs_need_no_cdn(client) -> None:
    page = await client.get("http://testserver/docs")
    assert page.status_code == 200
    assert "cdn" not in page.text.lower() and "https://" not in page.text
    src = re.search(r'src="([^"]+swagger-ui-bundle\.js)"', page.text)
    assert src is not None
    asset = await client.get(f"http://testserver{src.group(1)}")
    assert asset.status_code == 200 and len(asset.content) > 100_000
    redoc = await client.get("http://testserver/redoc")
    assert redoc.status_code == 200 and "fonts.googleapis" not in redoc.text


async def test_admin_answers_match_their_models(client, db, shop, doc) -> None:
    """One real request per typed admin route, validated against the document."""
    h = await login(client, db, shop)
    seen: set[str] = set()

    def check(method: str, template: str, r: Any) -> dict[str, Any]:
        key = f"{method} /api/v1/admin{template}"
        status, _model = ADMIN_RESPONSES[key]
        assert r.status_code == status, (key, r.text)
        schema = doc["paths"][f"/api/v1/admin{template}"][method.lower()]["responses"][str(status)]
        body = r.json()
        errors = list(
            validator(doc, schema["content"]["application/json"]["schema"]).iter_errors(body)
        )
        assert not errors, (key, [e.message for e in errors[:3]], body)
        seen.add(key)
        return body

    bodies = {
        "units": {"name": "Crate", "short_name": "cr"},
        "categories": {"name": "Drinks doc"},
        "brands": {"name": "Brand doc"},
        "taxes": {"name": "Doc tax", "rate": 5, "inclusive": False},
        "payment-modes": {"code": "doc", "name": "Doc mode", "account_code": "11105"},
        "expense-categories": {"name": "Doc expense", "account_code": "52100"},
        "warehouses": {"name": "Doc branch"},
    }
    for prefix, body in bodies.items():
        check("GET", f"/{prefix}", await client.get(f"{ADMIN}/{prefix}", headers=h))
        made = check(
            "POST", f"/{prefix}", await client.post(f"{ADMIN}/{prefix}", json=body, headers=h)
        )
        rid = made["data"]["id"]
        check(
            "GET",
            f"/{prefix}/{{record_id}}",
            await client.get(f"{ADMIN}/{prefix}/{rid}", headers=h),
        )
        edited = await client.patch(
            f"{ADMIN}/{prefix}/{rid}", json={"name": body["name"] + " 2", "version": 1}, headers=h
        )
        check("PATCH", f"/{prefix}/{{record_id}}", edited)
        archived = await client.post(
            f"{ADMIN}/{prefix}/{rid}/archive", json={"version": 2}, headers=h
        )
        check("POST", f"/{prefix}/{{record_id}}/archive", archived)

    for segment in ("customers", "suppliers"):
        check("GET", f"/{segment}", await client.get(f"{ADMIN}/{segment}", headers=h))
        made = check(
            "POST",
            f"/{segment}",
            await client.post(f"{ADMIN}/{segment}", json={"name": f"Doc {segment}"}, headers=h),
        )
        pid = made["data"]["id"]
        check(
            "GET",
            f"/{segment}/{{party_id}}",
            await client.get(f"{ADMIN}/{segment}/{pid}", headers=h),
        )
        check(
            "PATCH",
            f"/{segment}/{{party_id}}",
            await client.patch(
                f"{ADMIN}/{segment}/{pid}", json={"phone": "555", "version": 1}, headers=h
            ),
        )
        check(
            "POST",
            f"/{segment}/{{party_id}}/archive",
            await client.post(f"{ADMIN}/{segment}/{pid}/archive", headers={**h, "If-Match": '"2"'}),
        )
        csv = f"code,name\nDOC-{segment},Imported {segment}\n".encode()
        check(
            "POST",
            f"/import/{segment}",
            await client.post(
                f"{ADMIN}/import/{segment}", files={"file": ("p.csv", csv, "text/csv")}, headers=h
            ),
        )

    check("GET", "/products", await client.get(f"{ADMIN}/products", headers=h))
    made = check(
        "POST",
        "/products",
        await client.post(
            f"{ADMIN}/products", json={"name": "Doc product", "item_code": "DOC-1"}, headers=h
        ),
    )
    pid = made["data"]["id"]
    check("GET", "/products/{product_id}", await client.get(f"{ADMIN}/products/{pid}", headers=h))
    check(
        "PATCH",
        "/products/{product_id}",
        await client.patch(
            f"{ADMIN}/products/{pid}", json={"name": "Doc product 2", "version": 1}, headers=h
        ),
    )
    wh = shop.warehouse_id
    listing = {"warehouse_id": wh, "sales_price": 2, "purchase_price": 1}
    check(
        "POST",
        "/products/{product_id}/listings",
        await client.post(f"{ADMIN}/products/{pid}/listings", json=listing, headers=h),
    )
    check(
        "PATCH",
        "/products/{product_id}/listings/{warehouse_id}",
        await client.patch(
            f"{ADMIN}/products/{pid}/listings/{wh}",
            json={"reorder_level": 3, "version": 1},
            headers=h,
        ),
    )
    check(
        "POST",
        "/products/{product_id}/listings/{warehouse_id}/opening-stock",
        await client.post(
            f"{ADMIN}/products/{pid}/listings/{wh}/opening-stock",
            json={"quantity": 4, "unit_cost": 1},
            headers=h,
        ),
    )
    csv = b"item_code,name\nDOC-2,Imported product\n"
    check(
        "POST",
        "/import/products",
        await client.post(
            f"{ADMIN}/import/products", files={"file": ("p.csv", csv, "text/csv")}, headers=h
        ),
    )
    check(
        "POST",
        "/products/{product_id}/archive",
        await client.post(f"{ADMIN}/products/{pid}/archive", headers={**h, "If-Match": '"2"'}),
    )

    check("GET", "/staff", await client.get(f"{ADMIN}/staff", headers=h))
    staff = {
        "name": "Doc",
        "email": f"doc-{shop.company_id}@example.com",
        "role": "cashier",
        "password": "long enough",
    }
    sid = check("POST", "/staff", await client.post(f"{ADMIN}/staff", json=staff, headers=h))[
        "data"
    ]["id"]
    check("GET", "/staff/{staff_id}", await client.get(f"{ADMIN}/staff/{sid}", headers=h))
    check(
        "PATCH",
        "/staff/{staff_id}",
        await client.patch(f"{ADMIN}/staff/{sid}", json={"name": "Doc 2", "version": 1}, headers=h),
    )
    check(
        "PUT",
        "/staff/{staff_id}/pin",
        await client.put(f"{ADMIN}/staff/{sid}/pin", json={"pin": "1234"}, headers=h),
    )
    check(
        "POST",
        "/staff/{staff_id}/archive",
        await client.post(f"{ADMIN}/staff/{sid}/archive", headers=h),
    )
    check("GET", "/registers/branches", await client.get(f"{ADMIN}/registers/branches", headers=h))
    paired = check(
        "POST",
        "/registers",
        await client.post(
            f"{ADMIN}/registers", json={"warehouse_id": shop.warehouse_id, "name": "Doc"}, headers=h
        ),
    )["data"]
    await client.post(
        "/register/heartbeat",
        json={"queued": 1, "attention": [{"key": "k", "kind": "sale", "reason": "no"}]},
        headers={
            "X-Service-Public-Key": paired["public_key"],
            "X-Service-Secret-Key": paired["secret_key"],
        },
    )
    check("GET", "/registers", await client.get(f"{ADMIN}/registers", headers=h))
    check(
        "POST",
        "/registers/{register_id}/revoke",
        await client.post(f"{ADMIN}/registers/{paired['id']}/revoke", headers=h),
    )
    check(
        "POST",
        "/currencies",
        await client.post(f"{ADMIN}/currencies", json={"currency": "EUR"}, headers=h),
    )
    rate = {"currency": "EUR", "date": "2026-11-02", "rate": "1.085"}
    made_rate = await client.post(f"{ADMIN}/exchange-rates", json=rate, headers=h)
    check("POST", "/exchange-rates", made_rate)
    rates_csv = b"date,currency,rate\n2026-11-03,EUR,1.09\n"
    check(
        "POST",
        "/exchange-rates/import",
        await client.post(
            f"{ADMIN}/exchange-rates/import",
            files={"file": ("r.csv", rates_csv, "text/csv")},
            headers=h,
        ),
    )
    check("GET", "/currencies", await client.get(f"{ADMIN}/currencies", headers=h))
    check(
        "GET",
        "/exchange-rates",
        await client.get(f"{ADMIN}/exchange-rates?corrections=true", headers=h),
    )
    check(
        "POST",
        "/currencies/{code}/disable",
        await client.post(f"{ADMIN}/currencies/EUR/disable", headers=h),
    )
    check("POST", "/logout", await client.post(f"{ADMIN}/logout", headers=h))
    seen.add("POST /api/v1/admin/login")  # login() above asserted its 200; shape below
    assert set(ADMIN_RESPONSES) == seen, sorted(set(ADMIN_RESPONSES) - seen)


# --- the document says what the service does (issue 22, item 8) -------------------------

ROOT = "http://testserver"
# ``"`a` (...) or `b`"``: a description that offers a choice of values
OFFERS = re.compile(r"`[^`]+`[^`]*\bor `[^`]+`")
TOKEN = re.compile(r"`([A-Za-z0-9_]+)`")


def _resolve(doc: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = doc["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def test_enums_are_the_codes_literals_and_descriptions_name_them(doc: dict[str, Any]) -> None:
    """A query parameter from a fixed set is documented with the values the code
    checks (its ``Literal``); no description offers values its enum lacks (a
    description copied from another field, by name, fails here)."""
    from typing import get_args

    from tillbook.api.docs.fields import CHOICES

    problems = []
    for (path, name), choices in CHOICES.items():
        found = [p for op in doc["paths"][path].values() for p in op.get("parameters", [])]
        (param,) = [p for p in found if p["name"] == name and p["in"] == "query"]
        if param["schema"].get("enum") != list(get_args(choices)):
            problems.append(f"{path} {name}: enum {param['schema'].get('enum')}")
    for key, op in operations(doc):
        for param in op.get("parameters", []):
            text, enum = param.get("description", ""), param["schema"].get("enum")
            if enum is None and OFFERS.search(text):
                problems.append(f"{key} {param['name']}: offers values but has no enum: {text}")
            if enum is not None and not set(TOKEN.findall(text)) <= set(enum):
                problems.append(f"{key} {param['name']}: {text!r} names values not in {enum}")
    for name, schema in doc["components"]["schemas"].items():
        for prop, sub in (schema.get("properties") or {}).items():
            enum = sub.get("enum") if isinstance(sub, dict) else None
            if enum is None:
                continue
            offered = set(TOKEN.findall(sub.get("description", "")))
            if not offered <= {str(v) for v in enum}:
                problems.append(f"{name}.{prop}: {sub.get('description')!r} vs enum {enum}")
    assert not problems, "\n".join(problems)


def test_every_request_example_is_parsed_by_its_endpoint(doc: dict[str, Any]) -> None:
    """Each documented request body, parsed with the model its endpoint parses with."""
    import json

    from tillbook.api.body import BODY_MODELS, parse_bytes
    from tillbook.errors import ValidationFailed

    problems, parsed = [], 0
    for key, op in operations(doc):
        media = op.get("requestBody", {}).get("content", {}).get("application/json", {})
        ref = media.get("schema", {}).get("$ref", "")
        model = BODY_MODELS.get(ref.rsplit("/", 1)[-1])
        if model is None or "example" not in media:
            continue
        try:
            parse_bytes(json.dumps(media["example"]).encode(), model)
            parsed += 1
        except ValidationFailed as exc:
            problems.append(f"{key}: {exc.errors}")
    assert parsed > 20 and not problems, "\n".join(problems)


async def _sale_and_return(client, shop) -> tuple[int, int]:
    line = {"xid": shop.xid("apple"), "quantity": 1, "unit_price": "3.50"}
    r = await client.post(
        "/sales",
        json={"user_id": shop.customer_id, "order_date": "2026-11-20", "product_items": [line]},
        headers=shop.headers,
    )
    assert r.status_code == 200, r.text
    sale = r.json()
    r = await client.post(
        "/sales-returns",
        json={
            "user_id": shop.customer_id,
            "order_date": "2026-11-20",
            "invoice_number": sale["invoice_number"],
            "items": [{"product_id": shop.products["apple"], "quantity": 1, "unit_price": 3.5}],
        },
        headers=shop.headers,
    )
    assert r.status_code == 200, r.text
    return sale["order_id"], r.json()["return_id"]


async def test_documented_values_are_accepted(client, db, shop) -> None:
    """GET /openapi.json walked: every enum value and example of a query parameter
    is accepted by its route (no 422 naming it), and a value outside the enum is
    refused by name: the documented set is what the code takes."""
    live = (await client.get(f"{ROOT}/openapi.json")).json()
    sale_id, return_id = await _sale_and_return(client, shop)
    admin = await login(client, db, shop)
    needs = {  # what else a route needs to answer
        "/api/v1/admin/reports/ledger": {"account": "11101"},
        "/api/v1/admin/reports/statement": {"party_id": str(shop.customer_id)},
    }
    ids = {"order_id": {"/sales/": sale_id, "/sales-returns/": return_id}}
    checked = 0
    for path, item in live["paths"].items():
        for method, op in item.items():
            if method != "get":
                continue
            url = ROOT + path
            for name, by_prefix in ids.items():
                for prefix, value in by_prefix.items():
                    if "{" + name + "}" in url and prefix in path:
                        url = url.replace("{" + name + "}", str(value))
            if "{" in url:
                continue
            headers = admin if path.startswith("/api/v1/admin") else shop.headers
            for param in op.get("parameters", []):
                if param["in"] != "query":
                    continue
                values = list(param["schema"].get("enum", []))
                values += [param[k] for k in ("example",) if k in param]
                for value in values:
                    query = {**needs.get(path, {}), param["name"]: value}
                    r = await client.get(url, params=query, headers=headers)
                    refused = r.status_code == 422 and param["name"] in r.json()["errors"]
                    assert not refused, (path, param["name"], value, r.text)
                    checked += 1
                if "enum" in param["schema"]:
                    query = {**needs.get(path, {}), param["name"]: "not-one-of-them"}
                    r = await client.get(url, params=query, headers=headers)
                    assert r.status_code == 422, (path, param["name"], r.text)
                    assert param["name"] in r.json()["errors"], (path, r.text)
    assert checked >= 20


async def test_list_answers_have_their_documented_shape(client, db, shop) -> None:
    """Each GET without a path parameter, called with the test shop: the answer's
    ``data`` is an array where the document says array and a pagination envelope
    where it says envelope, and a description promising an envelope documents one."""
    live = (await client.get(f"{ROOT}/openapi.json")).json()
    admin = await login(client, db, shop)
    await _sale_and_return(client, shop)
    r = await client.post("/shifts", json={"opening_float": "10.00"}, headers=shop.headers)
    assert r.status_code == 200, r.text
    shapes = 0
    problems = []
    for path, item in live["paths"].items():
        op = item.get("get")
        if op is None or "{" in path or not path.startswith("/api/v1/"):
            continue
        media = op["responses"].get("200", {}).get("content", {}).get("application/json")
        if media is None:
            continue
        data = _resolve(live, media["schema"]).get("properties", {}).get("data")
        if data is None:
            continue
        data = _resolve(live, data)
        if "anyOf" in data:  # a list or its change feed: the plain list is the first
            data = _resolve(live, data["anyOf"][0])
        documented = "array" if data.get("type") == "array" else "object"
        envelope = "current_page" in data.get("properties", {})
        if "pagination envelope" in op.get("description", "") and not envelope:
            problems.append(f"GET {path}: described as a pagination envelope, documented as not")
        headers = admin if path.startswith("/api/v1/admin") else shop.headers
        r = await client.get(ROOT + path, headers=headers)
        if r.status_code != 200:
            continue  # it needs a parameter the test does not guess
        answer = r.json()["data"]
        actual = "array" if isinstance(answer, list) else "object"
        if actual != documented or (envelope and "current_page" not in answer):
            problems.append(f"GET {path}: answers {actual}, documented {documented}")
        shapes += 1
    assert shapes >= 20 and not problems, "\n".join(problems)
