"""Customer and supplier CSV import and export (DESIGN.md §13): every row checked
before anything is written, every bad row reported, re-import changes nothing,
export → import round-trips; through the admin API and the command line."""

from __future__ import annotations

from decimal import Decimal

import pytest
from sqlalchemy import func, select

from tests.admin_helpers import ADMIN, assert_error, login
from tests.cli_run import cli_run  # noqa: F401 (fixture)
from tests.invariants import check_books, gl_balance
from tillbook.imports import Layout, Problems, check_rows, read_rows, write_csv
from tillbook.imports.csvfile import ImportRejected
from tillbook.models import User
from tillbook.parties.schemas import PartyRow

HEADER = "code,name,phone,email,tax_number,address,opening_balance\n"
GOOD = (
    HEADER
    + 'A1,Anna Alder,555-1,anna@example.com,TX-1,"1 Main St, Town",10.00\n'
    + "A2,Ben Birch,,,,,\n"
    + 'A3,"Cara ""CC"" Cole",,,,,0\n'
)


async def _upload(client, headers, kind, data: bytes):
    return await client.post(
        f"{ADMIN}/import/{kind}", files={"file": (f"{kind}.csv", data, "text/csv")}, headers=headers
    )


async def _count(db, company_id, kind):
    return await db.read(
        lambda s: s.scalar(
            select(func.count())
            .select_from(User)
            .where(User.company_id == company_id, User.user_type == kind)
        )
    )


@pytest.mark.parametrize("kind", ["customers", "suppliers"])
async def test_import_creates_then_reimport_is_unchanged(client, db, shop, kind):
    h = await login(client, db, shop)
    r = await _upload(client, h, kind, ("\ufeff" + GOOD).encode())  # Excel's BOM
    assert r.status_code == 200, r.text
    assert r.json()["data"] == {"created": 3, "updated": 0, "unchanged": 0}
    r = await _upload(client, h, kind, GOOD.encode())
    assert r.json()["data"] == {"created": 0, "updated": 0, "unchanged": 3}

    # one row edited, a column left out keeps its values
    edited = "code,name,phone\nA1,Anna Alder,555-9\nA2,Ben Birch,\n"
    r = await _upload(client, h, kind, edited.encode())
    assert r.json()["data"] == {"created": 0, "updated": 1, "unchanged": 1}
    found = await client.get(f"{ADMIN}/{kind}", params={"search": "A1"}, headers=h)
    anna = found.json()["data"]["data"][0]
    assert anna["phone"] == "555-9" and anna["email"] == "anna@example.com"
    assert anna["address"] == "1 Main St, Town" and anna["version"] == 2
    assert anna["balance"] == "10.00"

    code = "11500" if kind == "customers" else "21100"
    sign = 1 if kind == "customers" else -1
    assert await db.read(lambda s: gl_balance(s, shop.company_id, code)) == sign * Decimal("10")
    await check_books(db, shop.company_id)

    # export → import changes nothing; parties without a code are left out and counted
    r = await client.get(f"{ADMIN}/export/{kind}", headers=h)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")
    assert r.headers["x-skipped-without-code"] == "1"  # the factory's Ada or Sam
    exported = r.content
    assert exported.decode().splitlines()[0] == HEADER.strip()
    assert 'A1,Anna Alder,555-9,anna@example.com,TX-1,"1 Main St, Town",10.00' in r.text
    r = await _upload(client, h, kind, exported)
    assert r.json()["data"] == {"created": 0, "updated": 0, "unchanged": 3}


async def test_a_bad_file_changes_nothing_and_lists_every_bad_row(client, db, shop):
    h = await login(client, db, shop)
    before = await _count(db, shop.company_id, "customer")
    bad = (
        HEADER
        + "B1,Good Row,,,,,\n"
        + ",No Code,,,,,\n"  # line 3
        + "B3,,,,,,\n"  # line 4
        + "B4,Bad Mail,,not-mail,,,\n"  # line 5
        + "B5,Neg,,,,,-3\n"  # line 6
        + "B1,Twice,,,,,\n"  # line 7
        + "B7,Short\n"  # line 8
        + "B8,Nul\x00Name,,,,,\n"  # line 9
        + "B9,"
        + "x" * 201
        + ",,,,,\n"  # line 10
        + "B10,Money,,,,,12,5\n"  # line 11: 8 cells
        + "B11,Money,,,,,1.234\n"  # line 12
    )
    r = await _upload(client, h, "customers", bad.encode())
    body = assert_error(r, 422)
    errors = body["errors"]
    assert set(errors) == {f"line {n}" for n in (3, 4, 5, 6, 7, 8, 9, 10, 11, 12)}, errors
    assert errors["line 3"] == ["code: is required: rows are matched by it"]
    assert errors["line 4"][0].startswith("name:")
    assert errors["line 5"][0].startswith("email: must be an email address")
    assert errors["line 6"][0].startswith("opening_balance:")
    assert errors["line 7"][0] == "code: 'B1' is also on line 2"
    assert errors["line 8"][0].startswith("row: has 2 cells")
    assert "U+0000" in errors["line 9"][0]
    assert errors["line 10"][0].startswith("name:")
    assert errors["line 12"][0].startswith("opening_balance:")
    assert await _count(db, shop.company_id, "customer") == before


async def test_an_existing_partys_opening_balance_cannot_change(client, db, shop):
    h = await login(client, db, shop)
    r = await _upload(client, h, "suppliers", (HEADER + "S1,Sup One,,,,,5.00\n").encode())
    assert r.status_code == 200
    r = await _upload(client, h, "suppliers", (HEADER + "S1,Sup One,,,,,6.00\n").encode())
    body = assert_error(r, 422)
    assert "already exists with an opening balance of 5.00" in body["errors"]["line 2"][0]
    # 5.00 or 5 or empty are all the same opening balance
    for cell in ("5", "", "5.00"):
        r = await _upload(client, h, "suppliers", (HEADER + f"S1,Sup One,,,,,{cell}\n").encode())
        assert r.json()["data"] == {"created": 0, "updated": 0, "unchanged": 1}, r.text
    await check_books(db, shop.company_id)


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        (b"", "the file is empty"),
        (b"name,phone\nX,1\n", "line 1: code: missing column"),
        (b"code,name,colour\nA,B,red\n", "unknown column"),
        (b"code,name,name\nA,B,C\n", "named twice"),
        (b"code,name\nA,\xff\xfeB\n", "line 2: file: not UTF-8"),
        (b'code,name\nA,"open quote\n', "cannot be read as CSV"),
        (b"code,name\n" + b"A,B\n" * 0 + b"x" * 1_000_001, "over the limit"),
    ],
)
async def test_unreadable_files_are_clear_errors(client, db, shop, data, needle):
    h = await login(client, db, shop)
    body = assert_error(await _upload(client, h, "customers", data), 422)
    assert needle in (body["message"] + str(body["errors"])), body


async def test_upload_mistakes(client, db, shop):
    h = await login(client, db, shop)
    r = await client.post(f"{ADMIN}/import/customers", json={"file": "x"}, headers=h)
    assert_error(r, 415)
    r = await client.post(
        f"{ADMIN}/import/customers", files={"other": ("a.csv", b"code,name\n")}, headers=h
    )
    assert_error(r, 422, "file")
    r = await client.post(
        f"{ADMIN}/import/customers",
        content=b"--x\r\nbroken",
        headers={**h, "Content-Type": "multipart/form-data; boundary=x"},
    )
    assert r.status_code in (400, 422), r.text
    assert r.json()["status"] == "error"
    assert (await client.post(f"{ADMIN}/import/customers")).status_code == 401
    # over the party file's limit (imports take larger bodies than other requests,
    # TILLBOOK_MAX_IMPORT_BYTES): a 422 naming the file, nothing written
    r = await _upload(client, h, "customers", b"x" * (1024 * 1024 + 10))
    assert_error(r, 422, "file")


def test_framework_limits_and_round_trip():
    layout = Layout(
        columns=("code", "name", "phone", "email", "tax_number", "address", "opening_balance"),
        required=frozenset({"code", "name"}),
        key="code",
        max_rows=3,
    )
    problems = Problems()
    rows = read_rows(b"code,name\n\n1,a\n2,b\n\n3,c\n", layout, problems)
    assert [r.line for r in rows] == [3, 4, 6] and not problems
    with pytest.raises(ImportRejected, match="more than 3 rows"):
        read_rows(b"code,name\n1,a\n2,b\n3,c\n4,d\n", layout, Problems())
    values = [
        {"code": "Q1", "name": 'Quote "q", comma', "address": "two\nlines", "phone": ""},
    ]
    text = write_csv(layout.columns, values)
    back = read_rows(text.encode(), layout, problems)
    checked = check_rows(back, PartyRow, problems)
    assert not problems
    assert checked[0][1].name == 'Quote "q", comma' and checked[0][1].address == "two\nlines"


@pytest.mark.parametrize("kind", ["customers", "suppliers"])
async def test_cli_import_export(shop, cli_run, tmp_path, kind):  # noqa: F811
    run = cli_run
    company = str(shop.company_id)
    path = tmp_path / "in.csv"
    path.write_text(GOOD, encoding="utf-8")
    r = run("import", kind, str(path), "--company", company, "--json")
    assert r.json() == {"created": 3, "updated": 0, "unchanged": 0}
    r = run("import", kind, str(path), "--company", company, "--json")
    assert r.json() == {"created": 0, "updated": 0, "unchanged": 3}
    exported = run("export", kind, "--company", company)
    assert exported.stdout.splitlines()[0] == HEADER.strip()
    assert "left out" in exported.stderr  # the factory's party without a code
    path.write_text(exported.stdout, encoding="utf-8")
    r = run("import", kind, str(path), "--company", company, "--json")
    assert r.json() == {"created": 0, "updated": 0, "unchanged": 3}

    path.write_text(HEADER + "Z1,,,,,,\nZ2,Ok,,bad,,,\n", encoding="utf-8")
    bad = run("import", kind, str(path), "--company", company, "--json", code=1)
    assert bad.stdout == ""
    lines = bad.stderr.strip().splitlines()
    assert any(line.startswith("error: line 2: name:") for line in lines), lines
    assert any(line.startswith("error: line 3: email:") for line in lines), lines
    run("import", kind, str(tmp_path / "missing.csv"), "--company", company, code=1)
    run("import", kind, str(path), "--company", "999999999", code=1)
    run("export", kind, "--company", "999999999", code=1)
