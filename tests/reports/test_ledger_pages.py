"""Paged ledgers and statements, their CSV downloads, the streaming journal export
and the CLI commands of closing and reading the books."""

from __future__ import annotations

import base64
import csv
import datetime as dt
import io
import json
import os
import shutil
import subprocess
import sys
from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy import select

from tests.admin_helpers import ADMIN, login
from tests.cli_process import run_cli
from tests.factories import make_shop
from tests.invariants import check_books
from tests.ledger.test_rollups import activity
from tillbook.db import Database
from tillbook.errors import NotFound, ValidationFailed
from tillbook.kit.money import to_money
from tillbook.ledger import rollups
from tillbook.models import Account, JournalEntry, JournalLine
from tillbook.reports import periods
from tillbook.reports.journal import export_journal
from tillbook.reports.ledgers import account_ledger_page, party_statement_page

D = Decimal


async def all_lines(db: Database, company_id: int, code: str, party_id: int | None = None):
    """(date, entry id, line id, debit − credit) of every line of the account,
    in ledger order, straight from the journal."""

    async def run(s):
        q = (
            select(
                JournalEntry.entry_date,
                JournalEntry.id,
                JournalLine.id,
                JournalLine.debit,
                JournalLine.credit,
            )
            .join(JournalLine, JournalLine.entry_id == JournalEntry.id)
            .join(Account, Account.id == JournalLine.account_id)
            .where(JournalEntry.company_id == company_id, Account.code == code)
            .order_by(JournalEntry.entry_date, JournalEntry.id, JournalLine.id)
        )
        if party_id is not None:
            q = q.where(JournalLine.party_id == party_id)
        return [
            (d, e, line, to_money(dr) - to_money(cr))
            for d, e, line, dr, cr in (await s.execute(q)).all()
        ]

    return await db.read(run)


async def walk(db: Database, read) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    first = await db.read(lambda s: read(s, None))
    lines = list(first["lines"])
    cursor = first["next_cursor"]
    while cursor is not None:
        page = await db.read(lambda s, c=cursor: read(s, c))
        assert page["opening_balance"] is None
        assert page["closing_balance"] == first["closing_balance"]
        lines += page["lines"]
        cursor = page["next_cursor"]
    return first, lines


@pytest.mark.parametrize("closed", [False, True])
async def test_ledger_pages_match_a_full_recomputation(client, db, shop, closed):
    await activity(client, shop)
    if closed:
        await periods.close(db, shop.company_id, dt.date(2024, 2, 29))
    truth = await all_lines(db, shop.company_id, "11500")
    for start, end in (
        (None, None),
        (dt.date(2024, 2, 1), dt.date(2024, 4, 30)),
        (dt.date(2024, 1, 31), dt.date(2024, 2, 20)),
        (dt.date(2030, 1, 1), dt.date(2030, 12, 31)),  # wider than the data: empty
    ):
        first, lines = await walk(
            db,
            lambda s, c, a=start, b=end: account_ledger_page(
                s, shop.company_id, "11500", date_from=a, date_to=b, cursor=c, limit=2
            ),
        )
        expected_opening = sum((x[3] for x in truth if start and x[0] < start), D("0.00"))
        in_range = [x for x in truth if (not start or x[0] >= start) and (not end or x[0] <= end)]
        assert first["opening_balance"] == str(expected_opening)
        assert [(line["entry_id"], line["line_id"]) for line in lines] == [
            (x[1], x[2]) for x in in_range
        ]
        running = expected_opening
        for line, x in zip(lines, in_range, strict=True):
            running += x[3]
            assert line["balance"] == str(running)
        assert first["closing_balance"] == str(running)
    # a party's statement: the customer's lines on 11500, what they owe
    truth = await all_lines(db, shop.company_id, "11500", shop.customer_id)
    first, lines = await walk(
        db,
        lambda s, c: party_statement_page(
            s, shop.company_id, shop.customer_id, date_from=dt.date(2024, 2, 1), cursor=c, limit=3
        ),
    )
    opening = sum((x[3] for x in truth if x[0] < dt.date(2024, 2, 1)), D("0.00"))
    assert first["opening_balance"] == str(opening)
    assert D(first["closing_balance"]) == sum((x[3] for x in truth), D("0.00"))
    assert len(lines) == len([x for x in truth if x[0] >= dt.date(2024, 2, 1)])
    await check_books(db, shop.company_id)


async def test_bad_ledger_requests(client, db, shop):
    cid = shop.company_id
    with pytest.raises(ValidationFailed) as caught:
        await db.read(
            lambda s: account_ledger_page(
                s, cid, "11101", date_from=dt.date(2024, 3, 1), date_to=dt.date(2024, 2, 1)
            )
        )
    assert "date_from" in caught.value.errors

    def forged(*values: object) -> str:
        raw = json.dumps(values)
        return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")

    forgeries = (
        forged("2024-01-01", 2**70, 1, "0", "0"),
        forged("2024-01-01", 1, 2**70, "0", "0"),
        '["2024-01-01", 1e999, 1, "0", "0"]',  # raw: json.loads makes it inf
        forged("1970-01-01", 0, 0, "Infinity", "0"),
        forged("1970-01-01", 0, 0, "NaN", "0"),
        forged("1970-01-01", 0, 0, "0", "sNaN"),
        forged("1970-01-01", 0, 0, "1e999999", "0"),
        forged("1970-01-01", 0, -1, "0", "0"),
    )
    encoded = [
        f if not f.startswith("[") else base64.urlsafe_b64encode(f.encode()).decode()
        for f in forgeries
    ]
    for cursor in ("garbage", "e30", "", *encoded):
        with pytest.raises(ValidationFailed):
            await db.read(lambda s, c=cursor: account_ledger_page(s, cid, "11101", cursor=c))
    with pytest.raises(ValidationFailed):
        await db.read(lambda s: account_ledger_page(s, cid, "11101", limit=0))
    with pytest.raises(NotFound):
        await db.read(lambda s: account_ledger_page(s, cid, "99999"))
    with pytest.raises(NotFound):
        await db.read(lambda s: party_statement_page(s, cid, 10**12))
    auth = await login(client, db, shop)
    for query, field in (
        ("account=11101&from=2024-03-01&to=2024-02-01", "from"),
        ("account=11101&from=2024-02-30", "from"),
        ("account=11101&format=xml", "format"),
        ("account=11101&limit=abc", "limit"),
        ("account=11101&cursor=zzz", "cursor"),
        ("", "account"),
    ):
        r = await client.get(f"{ADMIN}/reports/ledger?{query}", headers=auth)
        assert r.status_code == 422 and field in r.json()["errors"], (query, r.text)
    r = await client.get(f"{ADMIN}/reports/ledger?account=99999", headers=auth)
    assert r.status_code == 404
    r = await client.get(f"{ADMIN}/reports/statement?party_id=999999999", headers=auth)
    assert r.status_code == 404


def _edit(cursor: str, **at: object) -> str:
    """A cursor the report gave with fields of its position replaced (0: day,
    1: entry, 2: line, 3: running balance, 4: closing balance), its signature kept."""
    raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
    position = json.loads(raw[32:])
    for index, value in at.items():
        position[int(index[1:])] = value
    edited = raw[:32] + json.dumps(position).encode()
    return base64.urlsafe_b64encode(edited).decode().rstrip("=")


async def test_a_ledger_cursor_is_read_back_only_as_given(client, db, shop):
    await activity(client, shop)
    other = await make_shop(db)
    auth = await login(client, db, shop)
    url = f"{ADMIN}/reports/ledger?account=11500&from=2024-01-01&limit=1"
    r = await client.get(url, headers=auth)
    cursor = r.json()["data"]["next_cursor"]
    assert cursor
    r = await client.get(f"{url}&cursor={cursor}", headers=auth)
    assert r.status_code == 200 and r.json()["data"]["lines"]
    statement = f"{ADMIN}/reports/statement?party_id={shop.customer_id}&limit=1"
    theirs = (await client.get(statement, headers=auth)).json()["data"]["next_cursor"]
    assert theirs

    async def first_cursor(company_id: int, **kw: Any) -> str:
        page = await db.read(lambda s: account_ledger_page(s, company_id, "11500", limit=1, **kw))
        return str(page["next_cursor"])

    refused = {
        "running balance edited": _edit(cursor, p3="1000000.00"),
        "closing balance edited": _edit(cursor, p4="0.00"),
        "day ten years ahead": _edit(cursor, p0="2034-01-01"),
        "line id edited": _edit(cursor, p2=1),
        "truncated": cursor[:-2],
        "a statement's": theirs,
        "another range's": await first_cursor(shop.company_id, date_from=dt.date(2024, 2, 1)),
        "another warehouse's": await first_cursor(shop.company_id, warehouse_id=shop.warehouse_id),
    }
    await activity(client, other)
    refused["another company's"] = await first_cursor(other.company_id)
    for case, forged in refused.items():
        r = await client.get(f"{url}&cursor={forged}", headers=auth)
        assert r.status_code == 422, (case, r.text)
        assert list(r.json()["errors"]) == ["cursor"], (case, r.text)
    # the statement refuses the ledger's cursor
    r = await client.get(f"{statement}&cursor={cursor}", headers=auth)
    assert r.status_code == 422 and list(r.json()["errors"]) == ["cursor"], r.text


async def test_admin_ledger_pages_and_csv_download(client, db, shop):
    await activity(client, shop)
    await periods.close(db, shop.company_id, dt.date(2024, 1, 31))
    auth = await login(client, db, shop)
    pages = []
    url = f"{ADMIN}/reports/ledger?account=11101&from=2024-01-15&limit=2"
    r = await client.get(url, headers=auth)
    assert r.status_code == 200, r.text
    pages.append(r.json()["data"])
    while pages[-1]["next_cursor"]:
        r = await client.get(f"{url}&cursor={pages[-1]['next_cursor']}", headers=auth)
        pages.append(r.json()["data"])
    lines = [line for page in pages for line in page["lines"]]
    assert len(pages) > 1 and lines
    r = await client.get(
        f"{ADMIN}/reports/ledger?account=11101&from=2024-01-15&format=csv", headers=auth
    )
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")
    assert "attachment" in r.headers["content-disposition"]
    rows = list(csv.DictReader(io.StringIO(r.text)))
    assert rows[0]["narration"] == "Opening balance"
    assert rows[0]["balance"] == pages[0]["opening_balance"]
    assert rows[-1]["narration"] == "Closing balance"
    assert rows[-1]["balance"] == pages[0]["closing_balance"]
    assert [(row["entry_id"], row["balance"]) for row in rows[1:-1]] == [
        (str(line["entry_id"]), line["balance"]) for line in lines
    ]
    r = await client.get(
        f"{ADMIN}/reports/statement?party_id={shop.customer_id}&format=csv", headers=auth
    )
    assert r.status_code == 200 and "Closing balance" in r.text
    for path in ("profit-loss?from=2024-01-01&to=2024-03-31", "balance-sheet", "check-rollups"):
        r = await client.get(f"{ADMIN}/reports/{path}", headers=auth)
        assert r.status_code == 200, (path, r.text)
    assert r.json()["data"]["ok"]


def old_export(rows: list[tuple[Any, ...]], accounts: dict[int, Account], company, fmt: str) -> str:
    """The export as it was before it streamed (every row loaded at once), from
    the same rows: the streaming one must write the same text."""
    from tillbook.reports.journal import _text, account_name

    out = [f"; tillbook journal of company {company.id} ({_text(company.name)})"]
    if fmt == "beancount":
        out.append(f'option "operating_currency" "{company.base_currency}"')
    out.append("")
    first = min(r[1] for r in rows)
    for account in sorted(accounts.values(), key=lambda a: a.code):
        if account.is_posting:
            name = account_name(account.code, account.name, account.type)
            out.append(
                f"{first.isoformat()} open {name} {company.base_currency}"
                if fmt == "beancount"
                else f"account {name}"
            )
    out.append("")
    current = None
    for entry_id, day, narration, source_type, account_id, debit, credit in rows:
        if entry_id != current:
            if current is not None:
                out.append("")
            current = entry_id
            text = _text(narration) or source_type
            if fmt == "beancount":
                out += [f'{day.isoformat()} * "{text}"', f'  entry: "{entry_id}"']
            else:
                out.append(f"{day.isoformat()} * {text}  ; entry:{entry_id}")
        a = accounts[account_id]
        amount = to_money(debit) - to_money(credit)
        out.append(f"  {account_name(a.code, a.name, a.type)}  {amount} {company.base_currency}")
    out.append("")
    return "\n".join(out) + "\n"


async def test_streaming_export_equals_the_old_one_and_checks_clean(client, db, shop, monkeypatch):
    from tillbook.models import Company
    from tillbook.reports import journal

    monkeypatch.setattr(journal, "EXPORT_PAGE", 3)  # many pages on a small journal
    await activity(client, shop)
    await periods.close(db, shop.company_id, dt.date(2024, 12, 31))  # a year-end entry too

    async def reference(s):
        company = await s.get(Company, shop.company_id)
        accounts = {
            a.id: a
            for a in (
                await s.execute(select(Account).where(Account.company_id == shop.company_id))
            ).scalars()
        }
        rows = (
            await s.execute(
                select(
                    JournalEntry.id,
                    JournalEntry.entry_date,
                    JournalEntry.narration,
                    JournalEntry.source_type,
                    JournalLine.account_id,
                    JournalLine.debit,
                    JournalLine.credit,
                )
                .join(JournalLine, JournalLine.entry_id == JournalEntry.id)
                .where(JournalEntry.company_id == shop.company_id)
                .order_by(JournalEntry.entry_date, JournalEntry.id, JournalLine.id)
            )
        ).all()
        return {fmt: old_export(rows, accounts, company, fmt) for fmt in ("beancount", "ledger")}

    expected = await db.read(reference)

    async def collect(fmt, **kw):
        async def run(s):
            return [line async for line in export_journal(s, shop.company_id, fmt, **kw)]

        return "\n".join(await db.read(run)) + "\n"

    assert await collect("beancount") == expected["beancount"]
    assert await collect("ledger") == expected["ledger"]
    assert await collect("hledger") == expected["ledger"]
    loader = pytest.importorskip("beancount.loader")
    for kw in ({}, {"date_from": dt.date(2024, 2, 15), "date_to": dt.date(2024, 4, 30)}):
        text = await collect("beancount", **kw)
        _entries, errors, _options = loader.load_string(text)
        assert errors == [], errors
    ranged = await collect("beancount", date_from=dt.date(2024, 2, 15))
    assert '"Opening balances"' in ranged and "2024-01-05" not in ranged.split("Opening")[1]


def _run(args: list[str], env: dict[str, str], code: int = 0) -> subprocess.CompletedProcess[str]:
    result = run_cli(args, env=env)
    assert result.returncode == code, (args, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    return result


async def test_cli_period_reports_and_export(client, db, shop, database_url, tmp_path):
    await activity(client, shop)
    env = {**os.environ, "TILLBOOK_DATABASE_URL": database_url}
    cid = str(shop.company_id)
    closed = json.loads(
        _run(["period", "close", "--company", cid, "--through", "2024-03-31", "--json"], env).stdout
    )
    # every month due is rolled up, closed or not
    due = str(rollups.due_through(dt.date.today()))
    assert closed["closed_through"] == "2024-03-31" and closed["rolled_up_through"] == due
    again = _run(["period", "close", "--company", cid, "--through", "2024-03-31"], env, code=1)
    assert "already closed" in again.stderr
    _run(["period", "close", "--company", cid, "--through", "2024-03-3"], env, code=2)
    status = json.loads(_run(["period", "status", "--company", cid, "--json"], env).stdout)
    assert status["closed_through"] == "2024-03-31"
    check = json.loads(_run(["report", "check-rollups", "--company", cid, "--json"], env).stdout)
    assert check["ok"] and check["rollups"] > 0
    page = json.loads(
        _run(
            ["report", "ledger", "--company", cid, "--account", "11500", "--limit", "2", "--json"],
            env,
        ).stdout
    )
    assert len(page["lines"]) == 2 and page["next_cursor"]
    more = _run(
        [
            "report",
            "ledger",
            "--company",
            cid,
            "--account",
            "11500",
            "--cursor",
            page["next_cursor"],
        ],
        env,
    )
    assert "Closing balance" in more.stdout
    csv_text = _run(
        ["report", "ledger", "--company", cid, "--account", "11500", "--csv"], env
    ).stdout
    rows = list(csv.DictReader(io.StringIO(csv_text)))
    assert rows[-1]["balance"] == page["closing_balance"]
    statement = _run(
        ["report", "statement", "--company", cid, "--party", str(shop.customer_id), "--from",
         "2024-02-01", "--json"], env,
    ).stdout  # fmt: skip
    assert json.loads(statement)["party"]["account"] == "11500"
    _run(["report", "ledger", "--company", cid, "--account", "11500", "--cursor", "x"], env, 1)
    for report in ("trial-balance", "profit-loss"):
        _run(
            ["report", report, "--company", cid, "--from", "2024-02-01", "--to", "2024-02-29"], env
        )
    reopened = json.loads(
        _run(
            ["period", "reopen", "--company", cid, "--through", "2024-01-31", "--json"], env
        ).stdout
    )
    assert reopened["closed_through"] == "2024-01-31"
    _run(["period", "reopen", "--company", cid], env, code=2)
    exported = _run(
        ["export", "journal", "--company", cid, "--format", "beancount", "--from", "2024-02-01"],
        env,
    ).stdout
    bean_check = shutil.which("bean-check", path=os.path.dirname(sys.executable))
    if bean_check is not None:
        path = tmp_path / "books.beancount"
        path.write_text(exported)
        checked = subprocess.run([bean_check, str(path)], capture_output=True, text=True)
        assert checked.returncode == 0, checked.stdout + checked.stderr
    hledger = shutil.which("hledger")
    if hledger is not None:
        path = tmp_path / "books.journal"
        path.write_text(
            _run(["export", "journal", "--company", cid, "--format", "hledger"], env).stdout
        )
        checked = subprocess.run(
            [hledger, "-f", str(path), "check"], capture_output=True, text=True
        )
        assert checked.returncode == 0, checked.stdout + checked.stderr
