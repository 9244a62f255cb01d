"""The demo data set, for a first look at the API."""

from __future__ import annotations

from rich.table import Table

from tillbook.cli.common import JsonFlag, out, print_json, run


def demo(json_: JsonFlag = False) -> None:
    """Create a demo data set (two companies, stock, keys) and print its ids and keys."""
    from tillbook.demo import create_demo

    data = run(lambda db: db.unit(create_demo))
    if json_:
        print_json(data)
        return
    for company in data["companies"]:
        out.rule(f"[bold]{company['name']}[/] (company id {company['id']})")
        out.print(f"admin email    {company['admin']['email']}")
        out.print(f"admin password {company['admin']['password']}")
        for wh in company["warehouses"]:
            out.print(f"\n[bold]{wh['name']}[/] warehouse id {wh['id']} (xid {wh['xid']})")
            for key in wh["keys"]:
                out.print(f"  X-Service-Public-Key: {key['public_key']}")
                out.print(f"  X-Service-Secret-Key: {key['secret_key']}")
                out.print(f"  hmac_secret:          {key['hmac_secret']}")
                out.print(f"  rate limit:           {key['rate_limit']}")
            table = Table("id", "xid", "item_code", "name", "price", "stock", box=None)
            for p in company["products"]:
                if p["warehouse_id"] == wh["id"]:
                    table.add_row(
                        str(p["id"]),
                        p["xid"],
                        p["item_code"],
                        p["name"],
                        f"{p['sales_price']:.2f}",
                        str(p["current_stock"]),
                    )
            out.print(table)
        customers = ", ".join(f"{c['name']} ({c['id']})" for c in company["customers"])
        suppliers = ", ".join(f"{s['name']} ({s['id']})" for s in company["suppliers"])
        modes = ", ".join(f"{m['code']} ({m['id']})" for m in company["payment_modes"])
        taxes = ", ".join(f"{t['name']} ({t['id']})" for t in company["taxes"])
        out.print(f"\ncustomers: {customers}; walk-in id {company['walk_in_customer_id']}")
        out.print(f"suppliers: {suppliers}")
        out.print(f"payment modes: {modes}; taxes: {taxes}\n")
    key = data["companies"][0]["warehouses"][0]["keys"][0]
    out.print("Try it (after `tillbook serve`):")
    out.print(
        f"  curl -H 'X-Service-Public-Key: {key['public_key']}' "
        f"-H 'X-Service-Secret-Key: {key['secret_key']}' -H 'Accept: application/json' "
        "http://127.0.0.1:8000/api/v1/public/products",
        highlight=False,
    )
    first = data["companies"][0]["admin"]
    out.print(
        "\nThe back office (after `tillbook serve`): open http://127.0.0.1:8000/ and sign "
        f"in as {first['email']} with the password {first['password']}; the register "
        "is at http://127.0.0.1:8000/register (pair it with the same sign-in).",
        highlight=False,
    )
