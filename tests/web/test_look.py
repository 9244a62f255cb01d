"""The look of daily work: charts with labelled axes and values, stock movements in
words, report filters only where the report takes them, the period-close form
never offering a day inside an open month, a text receipt without the QR payload,
and a Z report that tells supplier payments from refunds."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal

import httpx
from sqlalchemy import select

from tests.factories import Shop
from tests.invariants import check_books
from tests.web_helpers import OWNER_PASSWORD, csrf_of, form_token_of, owner_email, sign_in
from tillbook.db import Database
from tillbook.inventory.reasons import REASONS, movement_reason
from tillbook.models import Shift
from tillbook.reports.periods import suggested_close
from tillbook.web.charts import bar_chart


async def _sell(client: httpx.AsyncClient, shop: Shop) -> str:
    r = await client.post(
        "/sales",
        headers=shop.headers,
        json={
            "user_id": shop.walk_in_id,
            "order_date": dt.date.today().isoformat(),
            "product_items": [{"xid": shop.xid("apple"), "quantity": 1, "unit_price": "3.50"}],
            "all_payments": [{"amount": "3.50", "payment_mode_id": "cash"}],
        },
    )
    assert r.status_code == 200, r.text
    return str(r.json()["order_id"])


def test_a_chart_has_labelled_axes_ticks_and_values() -> None:
    chart = bar_chart(
        [("March 2026", "Mar", Decimal("1200")), ("April 2026", "Apr", Decimal("-300"))],
        title="Net profit by month",
        x_label="Month",
        y_label="Net profit",
    )
    assert [b["value_text"] for b in chart["bars"]] == ["1.2k", "-300"]
    assert [t["label"] for t in chart["ticks"]] == ["2k", "1k", "0", "-250", "-500"]
    assert chart["bars"][1]["loss"] and chart["bars"][1]["y"] == chart["zero"]
    empty = bar_chart([], title="t", x_label="Day", y_label="Sales")
    assert empty["bars"] == [] and empty["ticks"][0]["label"] == "1"


async def test_dashboard_and_profit_chart_are_labelled(
    web: httpx.AsyncClient, client: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    await _sell(client, shop)
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    home = (await web.get("/")).text
    svg = home[home.index('<svg class="chart" id="sales-per-day"') :]
    svg = svg[: svg.index("</svg>")]
    assert 'class="axis-label"' in svg and ">Day</text>" in svg and ">Sales</text>" in svg
    assert 'class="value' in svg and ">3.5</text>" in svg  # today's sales on its bar
    assert 'class="tick"' in svg
    assert "aria-labelledby" in svg
    assert "<caption>Sales per day, last 30 days</caption>" in home
    report = (await web.get("/reports?report=profit-loss")).text
    assert 'id="profit-by-month"' in report and ">Net profit</text>" in report
    assert ">Month</text>" in report


async def test_movements_read_in_words(
    web: httpx.AsyncClient, client: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    await _sell(client, shop)
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    page = (await web.get(f"/stock/products/{shop.products['apple']}")).text
    movements = page[page.index("<h2>Movements</h2>") :]
    assert "<td>Sale" in movements and "<td>Opening stock" in movements
    for code in REASONS:
        assert f"<td>{code}" not in movements
    assert movement_reason("sales_return") == "Customer return"
    assert movement_reason("something_new") == "Something new"


async def test_report_filters_only_where_the_report_takes_them(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    expected = {
        "trial-balance": {"warehouse_id", "date_from", "date_to"},
        "profit-loss": {"warehouse_id", "date_from", "date_to"},
        "balance-sheet": {"warehouse_id", "date_to"},
        "stock-valuation": {"warehouse_id"},
    }
    for report, fields in expected.items():
        page = await web.get(f"/reports?report={report}&date_from=bad&date_to=2026-01-01")
        assert page.status_code in (200, 422), report
        form = page.text[page.text.index('<form class="search"') :]
        form = form[: form.index("</form>")]
        shown = set(re.findall(r'name="(warehouse_id|date_from|date_to)"', form))
        assert shown == fields, report
    # A date the report does not take is not even read: no error for it.
    assert (await web.get("/reports?report=stock-valuation&date_from=bad")).status_code == 200


def test_the_close_form_offers_the_last_open_month_end_only() -> None:
    today = dt.date(2026, 11, 26)
    assert suggested_close(today, None) == dt.date(2026, 10, 31)
    assert suggested_close(today, dt.date(2026, 9, 30)) == dt.date(2026, 10, 31)
    assert suggested_close(today, dt.date(2026, 10, 31)) is None
    assert suggested_close(dt.date(2026, 1, 5), None) == dt.date(2025, 12, 31)


async def test_the_period_close_form_is_not_prefilled_inside_an_open_month(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    page = (await web.get("/reports/periods")).text
    month_end = dt.date.today().replace(day=1) - dt.timedelta(days=1)
    assert f'name="through" type="date" value="{month_end.isoformat()}"' in page
    r = await web.post(
        "/reports/periods/close",
        data={
            "csrf": csrf_of(page),
            "form_token": form_token_of(page),
            "through": month_end.isoformat(),
        },
    )
    assert r.status_code == 303, r.text
    after = (await web.get("/reports/periods")).text
    close_form = after[after.index('action="/reports/periods/close"') :]
    assert 'name="through" type="date" value=""' in close_form[: close_form.index("</form>")]


async def test_a_text_receipt_prints_the_reference_not_the_qr_payload(
    client: httpx.AsyncClient, shop: Shop
) -> None:
    order_id = await _sell(client, shop)
    for width in ("42", "48"):
        r = await client.get(
            f"/sales/{order_id}/receipt",
            params={"format": "text", "width": width},
            headers=shop.headers,
        )
        assert r.status_code == 200, r.text
        assert "INV:" not in r.text and "TOTAL:" not in r.text and "CO:" not in r.text
        ref = [line for line in r.text.splitlines() if line.startswith("Ref")]
        assert len(ref) == 1 and len(ref[0]) <= int(width)
    html = await client.get(
        f"/sales/{order_id}/receipt", params={"format": "html"}, headers=shop.headers
    )
    assert "<svg" in html.text  # the QR code stays where it can be scanned


async def test_the_z_report_tells_supplier_payments_from_refunds(
    web: httpx.AsyncClient, client: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    r = await client.post("/shifts", json={"register": "till-z"}, headers=shop.headers)
    assert r.status_code in (200, 201), r.text
    await _sell(client, shop)
    paid = await client.post(
        "/payments",
        headers=shop.headers,
        json={
            "user_id": shop.supplier_id,
            "payment_type": "out",
            "amount": "2.00",
            "payment_mode_id": shop.cash_mode_id,
            "notes": "milk delivery paid from the till",
        },
    )
    assert paid.status_code == 200, paid.text
    sid = await db.read(
        lambda s: s.scalar(select(Shift.id).where(Shift.company_id == shop.company_id))
    )
    report = (await client.get(f"/shifts/{sid}", headers=shop.headers)).json()["data"]
    cash = next(t for t in report["tenders"] if t["payment_mode_id"] == shop.cash_mode_id)
    assert (cash["taken"], cash["refunded"], cash["paid_to_suppliers"], cash["net"]) == (
        "3.50",
        "0.00",
        "2.00",
        "1.50",
    )
    assert (report["refunds_total"], report["supplier_payments_total"]) == ("0.00", "2.00")
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    page = (await web.get(f"/shifts/{sid}")).text
    assert '<dd id="supplier-payments-total">2.00</dd>' in page
    assert '<dd id="refunds-total">0.00</dd>' in page
    assert "Paid to suppliers" in page and "Refunds to customers" in page
    await check_books(db, shop.company_id)
