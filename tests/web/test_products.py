"""The products page (``web/products.py``): search as you type, and without script."""

from __future__ import annotations

import httpx
from sqlalchemy.ext.asyncio import AsyncSession

from tests.factories import Shop
from tests.web_helpers import (
    owner_page,
)
from tillbook.db import Database
from tillbook.models import ProductBarcode


async def test_the_products_page_searches_as_you_type_and_without_javascript(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    page = await owner_page(web, db, shop, "/products")
    assert '<script src="/static/search.js" defer></script>' in page
    assert 'data-live="results"' in page and 'id="results"' in page
    script = await web.get("/static/search.js")
    assert script.status_code == 200 and "DOMParser" in script.text
    found = await web.get("/products", params={"q": "apple"})
    assert found.status_code == 200
    results = found.text.split('id="results"')[1]
    assert "Apple juice" in results and "Still water" not in results
    # A second barcode of the water, exactly, as a scanner sends it; and any
    # product whose name holds the text, beside it.
    code = f"M6-{shop.company_id}"

    async def multipack(session: AsyncSession) -> None:
        session.add(
            ProductBarcode(
                company_id=shop.company_id, product_id=shop.products["water"], barcode=code
            )
        )

    await db.write(multipack)
    scanned = await web.get("/products", params={"q": code})
    results = scanned.text.split('id="results"')[1]
    assert "Still water" in results and "Apple juice" not in results
    assert (
        "Still water"
        not in (await web.get("/products", params={"q": code[:-1]})).text.split('id="results"')[1]
    )
