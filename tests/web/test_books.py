"""The books in the back office (``web/books.py``, the reports index): the reports
render and download, and a period is closed once, reopened, by whom the role table
allows."""

from __future__ import annotations

import datetime as dt

import httpx
from sqlalchemy import func, select

from tests.factories import Shop
from tests.web_helpers import (
    OWNER_PASSWORD,
    STAFF_PASSWORD,
    add_staff,
    csrf_of,
    form_token_of,
    owner_email,
    sign_in,
)
from tillbook.db import Database
from tillbook.models import AuditEvent


async def test_the_reports_render_and_download(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    for report, words in (
        ("balance-sheet", "Total liabilities and equity"),
        ("stock-valuation", "Stock at cost"),
        ("profit-loss", "Net profit by month"),
        ("trial-balance", "Total"),
    ):
        r = await web.get(f"/reports?report={report}")
        assert r.status_code == 200 and words in r.text, report
        csv_file = await web.get(f"/reports?report={report}&format=csv")
        assert csv_file.headers["content-type"].startswith("text/csv"), report
    ledger = await web.get("/reports/ledger?account=11700")
    assert ledger.status_code == 200 and "Opening balance" in ledger.text
    assert "Opening stock" in ledger.text
    csv_file = await web.get("/reports/ledger?account=11700&format=csv")
    assert "Closing balance" in csv_file.text
    bad = await web.get("/reports/ledger?account=11700&date_to=yesterday")
    assert bad.status_code == 422 and 'id="e-date_to"' in bad.text


async def test_closing_the_books_once_and_who_may(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:

    await sign_in(web, await add_staff(db, shop, "accountant"), STAFF_PASSWORD)
    page = await web.get("/reports/periods")
    assert page.status_code == 200 and "Close the books" in page.text
    assert "Reopen" not in page.text  # an owner's decision
    through = (dt.date.today() - dt.timedelta(days=1)).isoformat()
    form = {"csrf": csrf_of(page.text), "form_token": form_token_of(page.text)}
    bad = await web.post("/reports/periods/close", data={**form, "through": "soon"})
    assert bad.status_code == 422 and 'id="e-through"' in bad.text
    first = await web.post("/reports/periods/close", data={**form, "through": through})
    assert first.status_code == 303, first.text
    again = await web.post("/reports/periods/close", data={**form, "through": through})
    assert again.status_code == 303
    closes = await db.read(
        lambda s: s.scalar(
            select(func.count())
            .select_from(AuditEvent)
            .where(AuditEvent.company_id == shop.company_id, AuditEvent.action == "period.close")
        )
    )
    assert closes == 1
    shown = await web.get("/reports/periods")
    assert f'id="closed-through">{through}<' in shown.text
    other = await web.post(
        "/reports/periods/close",
        data={"csrf": csrf_of(shown.text), "form_token": "form-2", "through": through},
    )
    assert other.status_code == 409 and "already closed" in other.text
    r = await web.post("/reports/periods/reopen", data={"csrf": csrf_of(shown.text)})
    assert r.status_code == 403
