"""The products page (``web/products.py``): search as you type, and without script."""

from __future__ import annotations

import httpx

from tests.factories import Shop
from tests.web_helpers import (
    owner_page,
)
from tillbook.db import Database


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
