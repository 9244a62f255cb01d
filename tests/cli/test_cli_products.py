"""``tillbook product create|list|archive``: the back office's catalog rules from the
command line, with the exit codes and ``--json`` of DESIGN.md §11."""

from __future__ import annotations

from tests.cli.test_cli import Run, as_json, cli, workdir  # noqa: F401  (fixtures)
from tests.factories import Shop
from tests.invariants import check_books
from tillbook.db import Database


async def test_product_create_list_archive(cli: Run, shop: Shop, db: Database) -> None:  # noqa: F811
    company = str(shop.company_id)
    created = as_json(
        cli(
            "product", "create", "--company", company, "--name", "Rye bread",
            "--item-code", "CLI-RYE", "--warehouse", str(shop.warehouse_id),
            "--warehouse", str(shop.other_warehouse_id), "--price", "3.20", "--cost", "1.40",
            "--mrp", "3.50", "--opening-stock", "8", "--barcode", "7001", "--json",
        )
    )  # fmt: skip
    assert created["item_code"] == "CLI-RYE" and created["barcodes"] == ["7001"]
    assert [(li["warehouse_id"], li["current_stock"]) for li in created["listings"]] == [
        (shop.warehouse_id, 8),
        (shop.other_warehouse_id, 8),
    ]
    await check_books(db, shop.company_id)

    # the same rules as the back office: a duplicate item code names the field
    dup = cli(
        "product", "create", "--company", company, "--name", "Again", "--item-code", "CLI-RYE",
        code=1,
    )  # fmt: skip
    assert dup.stderr.strip().splitlines()[-1].startswith("error: item_code:")
    bad = cli(
        "product", "create", "--company", company, "--name", "Neg", "--item-code", "CLI-NEG",
        "--warehouse", str(shop.warehouse_id), "--price", "-1", code=1,
    )  # fmt: skip
    assert "listings.0.sales_price" in bad.stderr

    listed = as_json(cli("product", "list", "--company", company, "--search", "CLI-RYE", "--json"))
    assert [p["id"] for p in listed["data"]] == [created["id"]]
    archived = as_json(
        cli("product", "archive", "--company", company, "--id", str(created["id"]), "--json")
    )
    assert archived["archived"] is True
    after = as_json(cli("product", "list", "--company", company, "--search", "CLI-RYE", "--json"))
    assert after["data"] == []
    # another company's product is not found from this company
    missing = cli("product", "archive", "--company", company, "--id", "999999999", code=1)
    assert "not found" in missing.stderr
