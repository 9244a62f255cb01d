"""The offline queue for tills: sales, returns and payments written down first,
sent in order when the service answers; through a server stop and start and a
till killed mid-send: no sale lost, none recorded twice, the books balanced."""

from __future__ import annotations

import datetime as dt
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from conftest import Server, books_balanced
from tillbook_client import Client, OfflineQueue

TODAY = dt.date.today().isoformat()
HERE = Path(__file__).parent


def _sale(demo: dict[str, Any], product: Any, n: int = 1) -> dict[str, Any]:
    return {
        "user_id": demo["walk_in_customer_id"],
        "order_date": TODAY,
        "product_items": [{"xid": product.xid, "quantity": n, "unit_price": product.sales_price}],
        "all_payments": [{"amount": product.sales_price * n, "payment_mode_id": "cash"}],
    }


def _sales_with_prefix(client: Client, prefix: str) -> list[str]:
    return [s.invoice_number for s in client.iter_sales() if s.invoice_number.startswith(prefix)]


def test_queue_survives_a_server_outage_and_a_restart(
    tmp_path: Path, server: Server, client: Client, demo: dict[str, Any]
) -> None:
    product = next(p for p in client.iter_products() if p.current_stock > 20)
    customer = demo["customers"][0]["id"]
    queue = OfflineQueue(tmp_path / "till.db", "OUT1")
    first = queue.add_sale(_sale(demo, product))
    assert first.invoice_number == "OUT1-000001" and first.idempotency_key == "OUT1-sale-000001"
    server.stop()
    try:
        queue.add_sale(_sale(demo, product, 2))
        queue.add_payment(
            {"user_id": customer, "payment_type": "in", "amount": "1.00", "payment_mode_id": "cash"}
        )
        down = queue.flush(client)
        assert down.sent == 0 and down.pending == 3 and down.stopped_by
        queue.close()  # the till restarts
        queue = OfflineQueue(tmp_path / "till.db", "OUT1")
        third = queue.add_sales_return(
            {
                "user_id": demo["walk_in_customer_id"],
                "order_date": TODAY,
                "invoice_number": "OUT1-000002",
                "items": [
                    {"product_id": product.id, "quantity": 1, "unit_price": product.sales_price}
                ],
            }
        )
        assert third.invoice_number is None  # a return's number names the original sale
    finally:
        server.start()
    up = queue.flush(client)
    assert (up.sent, up.rejected, up.pending, up.stopped_by) == (4, 0, 0, None)
    assert sorted(_sales_with_prefix(client, "OUT1-")) == ["OUT1-000001", "OUT1-000002"]
    assert [d.kind for d in queue.sent()] == ["sale", "sale", "payment", "sales_return"]
    assert queue.flush(client).sent == 0  # nothing left, nothing twice
    books_balanced(server, demo["id"])


def test_a_refused_document_is_set_aside(
    tmp_path: Path, client: Client, demo: dict[str, Any]
) -> None:
    product = next(p for p in client.iter_products() if p.current_stock > 5)
    queue = OfflineQueue(tmp_path / "till.db", "REJ1")
    queue.add_sale(
        {
            **_sale(demo, product),
            "product_items": [{"xid": "no-such-product", "quantity": 1, "unit_price": 1}],
        }
    )
    queue.add_sale(_sale(demo, product))
    result = queue.flush(client)
    assert (result.sent, result.rejected, result.pending) == (1, 1, 0)
    (refused,) = queue.rejected()
    assert refused.invoice_number == "REJ1-000001" and "product_items" in (refused.error or "")


def test_a_till_killed_mid_send_records_nothing_twice(
    tmp_path: Path, server: Server, client: Client, key: dict[str, Any], demo: dict[str, Any]
) -> None:
    product = next(p for p in client.iter_products() if p.current_stock > 30)
    queue_file = tmp_path / "till.db"
    queue = OfflineQueue(queue_file, "KILL1")
    for _ in range(8):
        queue.add_sale(_sale(demo, product))
    marker = tmp_path / "hung"
    till = subprocess.Popen(
        [
            sys.executable,
            str(HERE / "till_flusher.py"),
            str(queue_file),
            "KILL1",
            server.url,
            key["public_key"],
            key["secret_key"],
            key["hmac_secret"],
            "4",
            str(marker),
        ],
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
        },
    )
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert till.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    till.send_signal(signal.SIGKILL)  # the service recorded sale 4; the till never stored it
    till.wait()
    assert len(queue.sent()) == 3 and len(queue.pending()) == 5
    assert len(_sales_with_prefix(client, "KILL1-")) == 4
    # The restarted till: the killed flush's lock is stale after lock_seconds.
    restarted = OfflineQueue(queue_file, "KILL1", lock_seconds=0)
    result = restarted.flush(client)
    assert (result.sent, result.pending, result.stopped_by) == (5, 0, None)
    numbers = _sales_with_prefix(client, "KILL1-")
    assert sorted(numbers) == [f"KILL1-{n:06d}" for n in range(1, 9)]  # none lost, none twice
    replayed = restarted.get(4).response
    assert replayed is not None and replayed["invoice_number"] == "KILL1-000004"
    books_balanced(server, demo["id"])
