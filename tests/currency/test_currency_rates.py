"""A company's currencies and exchange rates through every door (issue 26, item 1;
DESIGN §16): the service, the admin API, the command line and the back office.

Each door enables a currency, sets and corrects rates and imports a rates file;
bad input is a 422 naming the field with nothing written; a correction keeps the
rate it replaces and ``rate_on`` answers the newest; another company's currencies
and rates are invisible; only the owner changes them."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from tests.admin_helpers import ADMIN, PASSWORD, assert_error, login
from tests.cli_run import Run, cli_run  # noqa: F401  (fixture)
from tests.factories import Shop, make_shop
from tests.web_helpers import (
    OWNER_PASSWORD,
    STAFF_PASSWORD,
    add_staff,
    csrf_of,
    owner_email,
    sign_in,
)
from tests.written import snapshot
from tillbook.auth.actor import Actor
from tillbook.currency import rates
from tillbook.db import Database
from tillbook.errors import NotFound, ValidationFailed
from tillbook.models import AuditEvent, Company, CompanyCurrency, ExchangeRate

D = Decimal
DAY = dt.date(2026, 11, 2)
SYSTEM = Actor.system("test")


async def _rates_of(db: Database, company_id: int) -> list[tuple[str, dt.date, Decimal]]:
    rows = await db.read(
        lambda s: s.execute(
            select(ExchangeRate.currency, ExchangeRate.rate_date, ExchangeRate.rate)
            .where(ExchangeRate.company_id == company_id)
            .order_by(ExchangeRate.id)
        )
    )
    return [(c, d, D(str(r)).normalize()) for c, d, r in rows.all()]


# --------------------------------------------------------------------------- the service


async def test_a_correction_keeps_the_old_rate_and_rate_on_answers_the_newest(
    db: Database, shop: Shop
) -> None:
    cid = shop.company_id
    await db.write(lambda s: rates.enable(s, cid, " eur", SYSTEM))
    await db.write(lambda s: rates.set_rate(s, cid, "EUR", DAY, D("1.08"), SYSTEM))
    await db.write(
        lambda s: rates.set_rate(s, cid, "EUR", DAY + dt.timedelta(days=5), D("1.1"), SYSTEM)
    )
    fixed = await db.write(lambda s: rates.set_rate(s, cid, "eur", DAY, D("1.085"), SYSTEM))
    assert fixed.corrects and fixed.currency == "EUR"

    assert await db.read(lambda s: rates.rate_on(s, cid, "EUR", DAY)) == (DAY, D("1.085"))
    later = DAY + dt.timedelta(days=3)
    assert await db.read(lambda s: rates.rate_on(s, cid, "EUR", later)) == (DAY, D("1.085"))
    assert await db.read(lambda s: rates.rate_on(s, cid, "EUR", DAY - dt.timedelta(days=1))) is None
    # Both entries of the day are kept; the list says which one is in force.
    assert [r[2] for r in await _rates_of(db, cid)] == [D("1.08"), D("1.1"), D("1.085")]
    in_force = await db.read(lambda s: rates.list_rates(s, cid))
    assert [(r.date, rates.rate_text(r.rate), r.corrects) for r in in_force] == [
        (DAY + dt.timedelta(days=5), "1.1", False),
        (DAY, "1.085", True),
    ]
    every = await db.read(lambda s: rates.list_rates(s, cid, currency="EUR", with_corrections=True))
    assert [(rates.rate_text(r.rate), r.superseded, r.corrects) for r in every] == [
        ("1.1", False, False),
        ("1.085", False, True),
        ("1.08", True, False),
    ]
    actions = await db.read(
        lambda s: s.scalars(
            select(AuditEvent.action)
            .where(AuditEvent.company_id == cid, AuditEvent.action.like("rate.%"))
            .order_by(AuditEvent.id)
        )
    )
    assert list(actions) == ["rate.set", "rate.set", "rate.corrected"]


@pytest.mark.parametrize(
    ("code", "rate", "day", "field"),
    [
        ("XYZ", "1", DAY, "currency"),  # not ISO 4217
        ("USD", "1", DAY, "currency"),  # the base currency
        ("GBP", "1", DAY, "currency"),  # ISO, not enabled
        ("EUR", "0", DAY, "rate"),
        ("EUR", "-1.5", DAY, "rate"),
        ("EUR", "1.123456789", DAY, "rate"),  # nine places
        ("EUR", "10000000000", DAY, "rate"),  # beyond NUMERIC(18, 8)
        ("EUR", "1E+400", DAY, "rate"),
        ("EUR", "1", dt.date(1, 1, 1), "date"),
        ("EUR", "1", dt.date.max, "date"),
    ],
)
async def test_bad_rates_are_refused_naming_the_field(
    db: Database, shop: Shop, code: str, rate: str, day: dt.date, field: str
) -> None:
    cid = shop.company_id
    await db.write(lambda s: rates.enable(s, cid, "EUR", SYSTEM))
    with pytest.raises(ValidationFailed) as caught:
        await db.write(lambda s: rates.set_rate(s, cid, code, day, D(rate), SYSTEM))
    assert field in caught.value.errors
    assert await _rates_of(db, cid) == []


async def test_enabling_the_base_or_an_unknown_code_and_disabling(db: Database, shop: Shop) -> None:
    cid = shop.company_id
    for code in ("USD", "usd ", "EURO", "", "X\x00Y"):
        with pytest.raises(ValidationFailed) as caught:
            await db.write(lambda s, c=code: rates.enable(s, cid, c, SYSTEM))
        assert "currency" in caught.value.errors
    with pytest.raises(NotFound):
        await db.write(lambda s: rates.enable(s, cid, "JPY", SYSTEM, on=False))
    row = await db.write(lambda s: rates.enable(s, cid, "jpy", SYSTEM))
    assert (row.code, row.minor_units, row.enabled) == ("JPY", 0, True)
    await db.write(lambda s: rates.enable(s, cid, "JPY", SYSTEM, on=False))
    with pytest.raises(ValidationFailed) as caught:
        await db.write(lambda s: rates.set_rate(s, cid, "JPY", DAY, D("0.0067"), SYSTEM))
    assert "not enabled" in caught.value.errors["currency"][0]
    seen = await db.read(lambda s: rates.overview(s, cid))
    assert seen["base_currency"] == "USD"
    assert seen["currencies"] == [
        {"currency": "JPY", "minor_units": 0, "enabled": False, "latest_rate": None,
         "latest_rate_date": None}
    ]  # fmt: skip


def test_a_rates_file_with_a_bad_row_names_every_one() -> None:
    text = (
        "date,currency,rate\n"
        "2026-11-02,EUR,1.08\n"
        "\n"
        "2026-13-01,EUR,1.08\n"
        "2026-11-03,EURO,1\n"
        "2026-11-04,EUR,０.5\n"
        "2026-11-05,EUR\n"
        "0001-01-01,EUR,1\n"
    )
    with pytest.raises(ValidationFailed) as caught:
        rates.parse_rates_file(text)
    assert set(caught.value.errors) == {
        "rows.4.date", "rows.5.currency", "rows.6.rate", "rows.7", "rows.8.date",
    }  # fmt: skip
    for bad in ("", "when,what,rate\n2026-11-02,EUR,1\n", "date,currency,rate\n", "a" * 200_000):
        with pytest.raises(ValidationFailed) as caught:
            rates.parse_rates_file(bad)
        assert "file" in caught.value.errors
    with pytest.raises(ValidationFailed):
        rates.decode_file(b"date,currency,rate\n2026-11-02,EUR,\xff\n")


# --------------------------------------------------------------------------- the admin API


async def test_the_admin_api_sets_lists_imports_and_refuses(
    client: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    h = await login(client, db, shop)
    r = await client.post(f"{ADMIN}/currencies", json={"currency": "eur"}, headers=h)
    assert r.status_code == 200, r.text
    assert r.json()["data"] == {"currency": "EUR", "minor_units": 2, "enabled": True}
    for body, field in (
        ({"currency": "USD"}, "currency"),
        ({"currency": "ZZZ"}, "currency"),
        ({"currency": 978}, "currency"),
        ({}, "currency"),
    ):
        assert_error(await client.post(f"{ADMIN}/currencies", json=body, headers=h), 422, field)

    before = await snapshot(db, shop)
    good = {"currency": "EUR", "date": DAY.isoformat(), "rate": "1.08"}
    for bad, field in (
        ({"rate": "0"}, "rate"),
        ({"rate": -2}, "rate"),
        ({"rate": "1.000000001"}, "rate"),
        ({"rate": "99999999999"}, "rate"),
        ({"rate": "１"}, "rate"),
        ({"date": "2026-02-30"}, "date"),
        ({"date": "0001-01-01"}, "date"),
        ({"currency": "GBP"}, "currency"),
        ({"currency": "usd"}, "currency"),
    ):
        r = await client.post(f"{ADMIN}/exchange-rates", json={**good, **bad}, headers=h)
        assert_error(r, 422, field)
    assert await snapshot(db, shop) == before

    r = await client.post(f"{ADMIN}/exchange-rates", json=good, headers=h)
    assert r.status_code == 201, r.text
    assert r.json()["data"]["rate"] == "1.08" and not r.json()["data"]["corrects"]
    keyed = {**h, "Idempotency-Key": "rate-fix-1"}
    fix = {**good, "rate": 1.085}
    first = await client.post(f"{ADMIN}/exchange-rates", json=fix, headers=keyed)
    again = await client.post(f"{ADMIN}/exchange-rates", json=fix, headers=keyed)
    assert first.status_code == again.status_code == 201, again.text
    assert again.headers.get("Idempotent-Replayed") == "true"
    assert first.json()["data"]["corrects"] is True
    assert len(await _rates_of(db, shop.company_id)) == 2

    csv = b"date,currency,rate\n2026-11-03,EUR,1.09\n2026-11-04,eur,1.1\n"
    before = await snapshot(db, shop)
    bad_csv = csv + b"2026-11-05,EUR,abc\n2026-11-06,GBP,2\n"
    r = await client.post(
        f"{ADMIN}/exchange-rates/import", files={"file": ("r.csv", bad_csv, "text/csv")}, headers=h
    )
    body = assert_error(r, 422, "rows.4.rate")
    assert "rows.5.currency" not in body["errors"]  # GBP is ISO: checked once the file parses
    r = await client.post(
        f"{ADMIN}/exchange-rates/import",
        files={"file": ("r.csv", csv + b"2026-11-06,GBP,2\n", "text/csv")},
        headers=h,
    )
    assert_error(r, 422, "rows.4.currency")
    assert await snapshot(db, shop) == before
    r = await client.post(
        f"{ADMIN}/exchange-rates/import", files={"file": ("r.csv", csv, "text/csv")}, headers=h
    )
    assert r.status_code == 200 and r.json()["data"] == {"imported": 2}, r.text

    listed = (await client.get(f"{ADMIN}/currencies", headers=h)).json()
    assert listed["base_currency"] == "USD"
    assert listed["data"] == [{"currency": "EUR", "minor_units": 2, "enabled": True,
                               "latest_rate": "1.1", "latest_rate_date": "2026-11-04"}]  # fmt: skip
    in_force = (await client.get(f"{ADMIN}/exchange-rates?currency=eur", headers=h)).json()["data"]
    assert [(x["date"], x["rate"]) for x in in_force] == [
        ("2026-11-04", "1.1"), ("2026-11-03", "1.09"), ("2026-11-02", "1.085"),
    ]  # fmt: skip
    every = await client.get(f"{ADMIN}/exchange-rates", params={"corrections": "true"}, headers=h)
    assert [(x["rate"], x["superseded"]) for x in every.json()["data"]][-2:] == [
        ("1.085", False), ("1.08", True),
    ]  # fmt: skip
    for query, field in (("currency=ZZZ", "currency"), ("corrections=maybe", "corrections")):
        assert_error(await client.get(f"{ADMIN}/exchange-rates?{query}", headers=h), 422, field)

    r = await client.post(f"{ADMIN}/currencies/eur/disable", headers=h)
    assert r.status_code == 200 and r.json()["data"]["enabled"] is False, r.text
    assert_error(await client.post(f"{ADMIN}/currencies/GBP/disable", headers=h), 404)
    assert_error(await client.post(f"{ADMIN}/currencies/E%00R/disable", headers=h), 404)
    r = await client.post(f"{ADMIN}/exchange-rates", json={**good, "rate": "1.2"}, headers=h)
    assert_error(r, 422, "currency")


async def test_another_company_sees_none_of_it(
    client: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    h = await login(client, db, shop)
    assert (
        await client.post(f"{ADMIN}/currencies", json={"currency": "EUR"}, headers=h)
    ).is_success
    body = {"currency": "EUR", "date": DAY.isoformat(), "rate": "1.08"}
    assert (await client.post(f"{ADMIN}/exchange-rates", json=body, headers=h)).is_success
    other = await make_shop(db)
    oh = await login(client, db, other)
    assert (await client.get(f"{ADMIN}/currencies", headers=oh)).json()["data"] == []
    assert (await client.get(f"{ADMIN}/exchange-rates", headers=oh)).json()["data"] == []
    assert_error(await client.post(f"{ADMIN}/currencies/EUR/disable", headers=oh), 404)
    assert_error(
        await client.post(f"{ADMIN}/exchange-rates", json=body, headers=oh), 422, "currency"
    )
    assert await db.read(lambda s: rates.rate_on(s, other.company_id, "EUR", DAY)) is None
    assert await db.read(lambda s: s.get(CompanyCurrency, (shop.company_id, "EUR"))) is not None


@pytest.mark.parametrize("role", ["manager", "accountant", "cashier"])
async def test_only_the_owner_changes_currencies_and_rates(
    client: httpx.AsyncClient, db: Database, shop: Shop, role: str
) -> None:
    owner = await login(client, db, shop)
    await client.post(f"{ADMIN}/currencies", json={"currency": "EUR"}, headers=owner)
    email = await add_staff(db, shop, role)
    r = await client.post(f"{ADMIN}/login", json={"email": email, "password": STAFF_PASSWORD})
    h = {"Authorization": f"Bearer {r.json()['token']}"}
    before = await snapshot(db, shop)
    body = {"currency": "EUR", "date": DAY.isoformat(), "rate": "1.08"}
    csv = b"date,currency,rate\n2026-11-03,EUR,1.09\n"
    for r in (
        await client.post(f"{ADMIN}/currencies", json={"currency": "GBP"}, headers=h),
        await client.post(f"{ADMIN}/currencies/EUR/disable", headers=h),
        await client.post(f"{ADMIN}/exchange-rates", json=body, headers=h),
        await client.post(
            f"{ADMIN}/exchange-rates/import", files={"file": ("r.csv", csv)}, headers=h
        ),
    ):
        assert "'settings.write'" in assert_error(r, 403)["message"]
    assert await snapshot(db, shop) == before
    assert await _rates_of(db, shop.company_id) == []
    reads = [await client.get(f"{ADMIN}/{p}", headers=h) for p in ("currencies", "exchange-rates")]
    assert all(r.status_code == (403 if role == "cashier" else 200) for r in reads), reads


# --------------------------------------------------------------------------- the command line


def test_the_command_line_contract(cli_run: Run, tmp_path: Path) -> None:  # noqa: F811
    made = cli_run(
        "company", "create", "Border shop", "--admin-email", f"fx-{tmp_path.name}@x.example",
        "--admin-password", "long enough", "--base-currency", "eur", "--json",
    ).json()  # fmt: skip
    assert made["base_currency"] == "EUR"
    company = str(made["id"])
    bad = cli_run(
        "company", "create", "No shop", "--admin-email", f"fx2-{tmp_path.name}@x.example",
        "--admin-password", "long enough", "--base-currency", "EURO", code=1,
    )  # fmt: skip
    assert "base_currency" in bad.stderr
    assert cli_run("currency", "enable", "usd", "--company", company, "--json").json() == {
        "currency": "USD", "minor_units": 2, "enabled": True,
    }  # fmt: skip
    assert (
        "base currency" in cli_run("currency", "enable", "EUR", "--company", company, code=1).stderr
    )
    set_ = cli_run(
        "rates", "set", "--company", company, "--currency", "USD", "--date", "2026-11-02",
        "--rate", "0.92", "--json",
    ).json()  # fmt: skip
    assert (set_["currency"], set_["date"], set_["rate"], set_["corrects"]) == (
        "USD", "2026-11-02", "0.92", False,
    )  # fmt: skip
    refused = cli_run(
        "rates", "set", "--company", company, "--currency", "USD", "--date", "2026-11-02",
        "--rate", "0.123456789", code=1,
    )  # fmt: skip
    assert "rate:" in refused.stderr
    cli_run("rates", "set", "--company", company, "--currency", "USD", "--date", "2026-11-02",
            "--rate", "abc", code=2)  # fmt: skip
    file = tmp_path / "rates.csv"
    file.write_text("date,currency,rate\n2026-11-03,USD,0.93\n2026-11-02,USD,0.921\n")
    assert cli_run("rates", "import", str(file), "--company", company, "--json").json() == {
        "imported": 2
    }
    file.write_text("date,currency,rate\n2026-11-04,USD,x\n2026-11-05,JPY,150\n")
    refused = cli_run("rates", "import", str(file), "--company", company, code=1)
    assert "rows.2.rate" in refused.stderr
    listed = cli_run("rates", "list", "--company", company, "--json").json()
    assert [(r["date"], r["rate"], r["corrects"]) for r in listed["rates"]] == [
        ("2026-11-03", "0.93", False), ("2026-11-02", "0.921", True),
    ]  # fmt: skip
    every = cli_run("rates", "list", "--company", company, "--currency", "usd", "--corrections",
                    "--json").json()  # fmt: skip
    assert [r["superseded"] for r in every["rates"]] == [False, False, True]
    assert "USD" in cli_run("currency", "list", "--company", company).stdout
    cli_run("rates", "list", "--company", "999999999", code=1)


# --------------------------------------------------------------------------- the back office


def _token(html: str, action: str) -> str:
    form = html.split(f'action="{action}"', 1)[1]
    found = re.search(r'name="form_token" value="([^"]+)"', form)
    assert found, form[:300]
    return found.group(1)


async def test_the_currencies_page(
    web: httpx.AsyncClient,
    db: Database,
    shop: Shop,
) -> None:
    assert (await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)).status_code == 303
    page = await web.get("/settings/currencies")
    assert page.status_code == 200 and 'href="/settings/currencies"' in page.text
    csrf = csrf_of(page.text)

    async def post(action: str, data: dict[str, str], **kw: Any) -> httpx.Response:
        html = (await web.get("/settings/currencies")).text
        form = {"csrf": csrf, "form_token": _token(html, action), **data}
        return await web.post(action, data=form, **kw)

    bad = await post("/settings/currencies", {"currency": "ZZZ"})
    assert bad.status_code == 422 and 'id="e-currency"' in bad.text
    done = await post("/settings/currencies", {"currency": "eur"})
    assert done.status_code == 303, done.text
    before = await snapshot(db, shop)
    for data, field in (({"rate": "0"}, "rate"), ({"rate": "1,5"}, "rate"),
                        ({"date": "soon"}, "date")):  # fmt: skip
        good = {"currency": "EUR", "date": "2026-11-02", "rate": "1.08"}
        r = await post("/settings/currencies/rates", {**good, **data})
        assert r.status_code == 422, r.text
        assert f'id="e-{field}"' in r.text
    assert await snapshot(db, shop) == before
    html = (await web.get("/settings/currencies")).text
    form = {"csrf": csrf, "form_token": _token(html, "/settings/currencies/rates"),
            "currency": "EUR", "date": "2026-11-02", "rate": "1.08"}  # fmt: skip
    assert (await web.post("/settings/currencies/rates", data=form)).status_code == 303
    assert (await web.post("/settings/currencies/rates", data=form)).status_code == 303  # twice
    assert len(await _rates_of(db, shop.company_id)) == 1
    fixed = await post("/settings/currencies/rates",
                       {"currency": "EUR", "date": "2026-11-02", "rate": "1.085"})  # fmt: skip
    assert fixed.status_code == 303
    bad_file = b"date,currency,rate\n2026-11-03,EUR,1.09\n2026-11-04,EUR,-1\n"
    r = await post("/settings/currencies/import", {},
                   files={"file": ("r.csv", bad_file, "text/csv")})  # fmt: skip
    assert r.status_code == 422 and "rows.3.rate" in r.text
    assert len(await _rates_of(db, shop.company_id)) == 2
    good_file = b"date,currency,rate\n2026-11-03,EUR,1.09\n"
    r = await post("/settings/currencies/import", {},
                   files={"file": ("r.csv", good_file, "text/csv")})  # fmt: skip
    assert r.status_code == 303
    shown = (await web.get("/settings/currencies")).text
    assert "superseded by a correction" in shown and "correction" in shown
    assert "1.085" in shown and "<s>1.08</s>" in shown
    r = await post("/settings/currencies/EUR/disable", {})
    assert r.status_code == 303
    assert "disabled" in (await web.get("/settings/currencies")).text


@pytest.mark.parametrize("role", ["manager", "accountant", "cashier"])
async def test_the_page_refuses_changes_but_to_the_owner(
    web: httpx.AsyncClient,
    db: Database,
    shop: Shop,
    role: str,
) -> None:
    await db.write(lambda s: rates.enable(s, shop.company_id, "EUR", SYSTEM))
    email = await add_staff(db, shop, role)
    assert (await sign_in(web, email, STAFF_PASSWORD)).status_code == 303
    page = await web.get("/settings/currencies")
    assert page.status_code == (403 if role == "cashier" else 200)
    csrf = csrf_of((await web.get("/customers")).text)
    before = await snapshot(db, shop)
    for action, data in (
        ("/settings/currencies", {"currency": "GBP"}),
        ("/settings/currencies/EUR/disable", {}),
        ("/settings/currencies/rates", {"currency": "EUR", "date": "2026-11-02", "rate": "1"}),
    ):
        r = await web.post(action, data={"csrf": csrf, "form_token": f"t-{action}", **data})
        assert r.status_code == 403 and "settings.write" in r.text, (action, r.text[:300])
    if role != "cashier":
        assert "Set a rate" not in page.text and "Disable" not in page.text
    assert await snapshot(db, shop) == before


async def test_the_first_run_page_takes_iso_codes_only(db: Database) -> None:
    """The base currency is an ISO 4217 code wherever a company is made."""
    from tillbook.tenancy import service as tenancy

    with pytest.raises(ValidationFailed) as caught:
        await db.write(
            lambda s: tenancy.create_company(
                s, "Q", admin_email="q-iso@x.example", admin_password=PASSWORD,
                base_currency="ABC",
            )
        )  # fmt: skip
    assert "base_currency" in caught.value.errors
    company, _owner = await db.write(
        lambda s: tenancy.create_company(
            s, "Q", admin_email="q-jpy@x.example", admin_password=PASSWORD, base_currency="jpy"
        )
    )
    stored = await db.read(
        lambda s: s.scalar(select(Company.base_currency).where(Company.id == company.id))
    )
    assert stored == "JPY"
