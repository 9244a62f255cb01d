"""a company-wide catalog: one product per company, listed per warehouse

Until now a product was a row per warehouse, carrying that warehouse's prices and
stock. A product is now defined once per company (``products``) and listed in the
warehouses that sell it (``listings``: prices, MRP, stock, reorder level, active);
its barcodes are ``product_barcodes``, unique per company (DESIGN.md §13).

Existing data moves forward without changing its meaning:

- the per-warehouse rows of one company that share an item_code become one
  product, the one with the lowest id (its name, category, brand, unit and tax);
  each former row becomes that product's listing in its warehouse, with its own
  prices and stock;
- every reference to a merged row (order items, stock batches, movements,
  adjustments, alerts, price history, additional units) is pointed at the
  surviving product; those rows all carry their own warehouse, so each still
  names the same stock. Journal entries name no product and are not touched
  (they are insert-only), so the trial balance is unchanged; stock valuation per
  warehouse reads the same batches and so is unchanged too (a test checks both);
- barcodes of merged rows are kept, each for one product: where data held one
  barcode on two different products, the older product keeps it.

The API ids of merged-away rows stop resolving (the product is now known by the
surviving id in every warehouse); the catalog of a shop with one warehouse keeps
every id.

Downgrade splits each product back into a row per warehouse (each listing), so an
upgrade after it gives the same books again; the tests go down and up on a shop
with history and compare.

Revision ID: e61c0f3d9a57
Revises: 8b3e5f1a7c42
Create Date: 2026-11-24 07:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "e61c0f3d9a57"
down_revision: str | None = "8b3e5f1a7c42"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
REFERENCING = (
    "order_items",
    "stock_batches",
    "stock_movements",
    "stock_adjustments",
    "stock_alerts",
    "price_history",
    "product_units",
)


def _timestamps() -> list[sa.Column[object]]:
    return [
        sa.Column(
            "created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.Column(
            "updated_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
    ]


def upgrade() -> None:
    op.create_table(
        "listings",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("company_id", BigId, nullable=False),
        sa.Column("warehouse_id", BigId, nullable=False),
        sa.Column("product_id", BigId, nullable=False),
        sa.Column("sales_price", sa.Numeric(18, 4), nullable=False),
        sa.Column("purchase_price", sa.Numeric(18, 4), nullable=False),
        sa.Column("mrp", sa.Numeric(18, 4), nullable=True),
        sa.Column("current_stock", sa.Numeric(18, 4), nullable=False),
        sa.Column("reorder_level", sa.Numeric(18, 4), nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False, server_default="1"),
        sa.Column("archived_at", sa.DateTime(timezone=True), nullable=True),
        *_timestamps(),
        sa.ForeignKeyConstraint(
            ["company_id"], ["companies.id"], name="fk_listings_company_id_companies"
        ),
        sa.ForeignKeyConstraint(
            ["warehouse_id"], ["warehouses.id"], name="fk_listings_warehouse_id_warehouses"
        ),
        sa.ForeignKeyConstraint(
            ["product_id"], ["products.id"], name="fk_listings_product_id_products"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_listings"),
        sa.UniqueConstraint("warehouse_id", "product_id", name="uq_listings_warehouse_product"),
    )
    op.create_index("ix_listings_company_id", "listings", ["company_id"])
    op.create_index("ix_listings_warehouse_id", "listings", ["warehouse_id"])
    op.create_index("ix_listings_product_id", "listings", ["product_id"])
    op.create_table(
        "product_barcodes",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("company_id", BigId, nullable=False),
        sa.Column("product_id", BigId, nullable=False),
        sa.Column("barcode", sa.String(100), nullable=False),
        sa.ForeignKeyConstraint(
            ["company_id"], ["companies.id"], name="fk_product_barcodes_company_id_companies"
        ),
        sa.ForeignKeyConstraint(
            ["product_id"], ["products.id"], name="fk_product_barcodes_product_id_products"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_product_barcodes"),
        sa.UniqueConstraint("company_id", "barcode", name="uq_product_barcodes_company_barcode"),
    )
    op.create_index("ix_product_barcodes_company_id", "product_barcodes", ["company_id"])
    op.create_index("ix_product_barcodes_product_id", "product_barcodes", ["product_id"])

    # Which product each former row becomes: the lowest id of its company and item_code.
    op.create_table(
        "_product_merge",
        sa.Column("old_id", BigId, primary_key=True),
        sa.Column("new_id", BigId, nullable=False),
    )
    op.execute(
        "INSERT INTO _product_merge (old_id, new_id) "
        "SELECT p.id, (SELECT min(q.id) FROM products q "
        "WHERE q.company_id = p.company_id AND q.item_code = p.item_code) FROM products p"
    )
    op.execute(
        "INSERT INTO listings (company_id, warehouse_id, product_id, sales_price, "
        "purchase_price, mrp, current_stock, reorder_level, active, version, created_at, "
        "updated_at) "
        "SELECT p.company_id, p.warehouse_id, m.new_id, p.sales_price, p.purchase_price, "
        "p.mrp, p.current_stock, 0, TRUE, 1, p.created_at, p.updated_at "
        "FROM products p JOIN _product_merge m ON m.old_id = p.id ORDER BY p.id"
    )
    _keep_barcodes()
    op.execute("DELETE FROM _product_merge WHERE old_id = new_id")
    # An additional unit a merged row shares with its survivor is the same unit.
    op.execute(
        "DELETE FROM product_units WHERE id IN (SELECT u.id FROM product_units u "
        "JOIN _product_merge m ON m.old_id = u.product_id "
        "WHERE EXISTS (SELECT 1 FROM product_units s "
        "WHERE s.product_id = m.new_id AND s.unit_id = u.unit_id))"
    )
    for table in REFERENCING:
        op.execute(
            f"UPDATE {table} SET product_id = (SELECT m.new_id FROM _product_merge m "
            f"WHERE m.old_id = {table}.product_id) "
            "WHERE product_id IN (SELECT old_id FROM _product_merge)"
        )
    op.execute("DELETE FROM products WHERE id IN (SELECT old_id FROM _product_merge)")
    op.drop_table("_product_merge")

    with op.batch_alter_table("products") as batch:
        batch.drop_constraint("uq_products_warehouse_item_code", type_="unique")
        batch.drop_index("ix_products_warehouse_name")
        batch.drop_index("ix_products_warehouse_id")
        batch.drop_constraint("fk_products_warehouse_id_warehouses", type_="foreignkey")
        for column in ("warehouse_id", "sales_price", "purchase_price", "mrp", "current_stock"):
            batch.drop_column(column)
        batch.add_column(sa.Column("image", sa.String(500), nullable=True))
        batch.add_column(sa.Column("version", sa.Integer(), nullable=False, server_default="1"))
        batch.add_column(sa.Column("archived_at", sa.DateTime(timezone=True), nullable=True))
        batch.create_unique_constraint("uq_products_company_item_code", ["company_id", "item_code"])
        batch.create_index("ix_products_company_name", ["company_id", "name"])

    # FIFO layers are now read per product *and* warehouse.
    with op.batch_alter_table("stock_batches") as batch:
        batch.drop_index("ix_stock_batches_product_fifo")
        batch.create_index("ix_stock_batches_fifo", ["product_id", "warehouse_id", "id"])


def _keep_barcodes() -> None:
    """Every barcode of a group's rows onto its product; a barcode two different
    products carried stays with the older one. The survivor's own barcode column
    becomes its first barcode."""
    bind = op.get_bind()
    rows = bind.execute(
        sa.text(
            "SELECT p.company_id, m.new_id, p.barcode FROM products p "
            "JOIN _product_merge m ON m.old_id = p.id "
            "WHERE p.barcode IS NOT NULL AND p.barcode <> '' ORDER BY m.new_id, p.id"
        )
    ).all()
    seen: set[tuple[int, str]] = set()
    primary: dict[int, str] = {}
    keep: list[dict[str, object]] = []
    for company_id, product_id, barcode in rows:
        if (company_id, barcode) in seen:
            continue
        seen.add((company_id, barcode))
        primary.setdefault(product_id, barcode)
        keep.append({"c": company_id, "p": product_id, "b": barcode})
    if keep:
        bind.execute(
            sa.text(
                "INSERT INTO product_barcodes (company_id, product_id, barcode) VALUES (:c, :p, :b)"
            ),
            keep,
        )
    survivors = bind.execute(
        sa.text("SELECT id, barcode FROM products WHERE id IN (SELECT new_id FROM _product_merge)")
    ).all()
    fixes = [
        {"id": pid, "b": primary.get(pid)}
        for pid, barcode in survivors
        if barcode != primary.get(pid)
    ]
    if fixes:
        bind.execute(sa.text("UPDATE products SET barcode = :b WHERE id = :id"), fixes)


def downgrade() -> None:
    """Back to a product row per warehouse: each product's first listing keeps the
    product's id, every other listing becomes a copy of the product with a new id,
    and the history of that warehouse (order items through their order, batches,
    movements, adjustments, alerts, price history) moves to the copy; additional
    units are copied with it. A product listed nowhere goes to its company's first
    warehouse at zero prices. Only each product's primary barcode survives (the
    old shape has one)."""
    bind = op.get_bind()
    with op.batch_alter_table("products") as batch:
        batch.drop_constraint("uq_products_company_item_code", type_="unique")
        batch.drop_index("ix_products_company_name")
        batch.add_column(sa.Column("warehouse_id", BigId, nullable=True))
        for column in ("sales_price", "purchase_price", "current_stock"):
            batch.add_column(sa.Column(column, sa.Numeric(18, 4), nullable=True))
        batch.add_column(sa.Column("mrp", sa.Numeric(18, 4), nullable=True))
    listings = bind.execute(
        sa.text(
            "SELECT product_id, warehouse_id, sales_price, purchase_price, mrp, current_stock "
            "FROM listings ORDER BY product_id, id"
        )
    ).all()
    placed: set[int] = set()
    for product_id, warehouse_id, sales, purchase, mrp, stock in listings:
        values = {"w": warehouse_id, "s": sales, "p": purchase, "m": mrp, "c": stock}
        if product_id not in placed:
            placed.add(product_id)
            bind.execute(
                sa.text(
                    "UPDATE products SET warehouse_id = :w, sales_price = :s, "
                    "purchase_price = :p, mrp = :m, current_stock = :c WHERE id = :id"
                ),
                {**values, "id": product_id},
            )
            continue
        copy_id = bind.execute(
            sa.text(
                "INSERT INTO products (company_id, warehouse_id, name, slug, item_code, "
                "barcode, product_type, category_id, brand_id, unit_id, tax_id, sales_price, "
                "purchase_price, mrp, current_stock, description, image, version, "
                "archived_at, created_at, updated_at) "
                "SELECT company_id, :w, name, slug, item_code, barcode, product_type, "
                "category_id, brand_id, unit_id, tax_id, :s, :p, :m, :c, description, image, "
                "version, archived_at, created_at, updated_at FROM products WHERE id = :id "
                "RETURNING id"
            ),
            {**values, "id": product_id},
        ).scalar_one()
        moved = {"new": copy_id, "old": product_id, "w": warehouse_id}
        for table in ("stock_batches", "stock_movements", "stock_adjustments", "stock_alerts"):
            bind.execute(
                sa.text(
                    f"UPDATE {table} SET product_id = :new "
                    "WHERE product_id = :old AND warehouse_id = :w"
                ),
                moved,
            )
        bind.execute(
            sa.text(
                "UPDATE price_history SET product_id = :new "
                "WHERE product_id = :old AND warehouse_id = :w"
            ),
            moved,
        )
        bind.execute(
            sa.text(
                "UPDATE order_items SET product_id = :new WHERE product_id = :old "
                "AND order_id IN (SELECT id FROM orders WHERE warehouse_id = :w)"
            ),
            moved,
        )
        bind.execute(
            sa.text(
                "INSERT INTO product_units (company_id, product_id, unit_id, operator, "
                "operator_value, alternative_price) SELECT company_id, :new, unit_id, operator, "
                "operator_value, alternative_price FROM product_units WHERE product_id = :old"
            ),
            moved,
        )
    bind.execute(
        sa.text(
            "UPDATE products SET warehouse_id = (SELECT min(w.id) FROM warehouses w "
            "WHERE w.company_id = products.company_id), sales_price = 0, purchase_price = 0, "
            "current_stock = 0 WHERE warehouse_id IS NULL"
        )
    )
    op.drop_table("product_barcodes")
    op.drop_table("listings")
    with op.batch_alter_table("stock_batches") as batch:
        batch.drop_index("ix_stock_batches_fifo")
        batch.create_index("ix_stock_batches_product_fifo", ["product_id", "id"])
    with op.batch_alter_table("products") as batch:
        batch.drop_column("archived_at")
        batch.drop_column("version")
        batch.drop_column("image")
        batch.alter_column("warehouse_id", existing_type=BigId, nullable=False)
        for column in ("sales_price", "purchase_price", "current_stock"):
            batch.alter_column(column, existing_type=sa.Numeric(18, 4), nullable=False)
        batch.create_foreign_key(
            "fk_products_warehouse_id_warehouses", "warehouses", ["warehouse_id"], ["id"]
        )
        batch.create_index("ix_products_warehouse_id", ["warehouse_id"])
        batch.create_index("ix_products_warehouse_name", ["warehouse_id", "name"])
        batch.create_unique_constraint(
            "uq_products_warehouse_item_code", ["warehouse_id", "item_code"]
        )
