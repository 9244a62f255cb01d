"""Reference data in the back office (``web/reference.py``): the category tree."""

from __future__ import annotations

import re

import httpx

from tests.factories import Shop
from tests.web_helpers import (
    csrf_of,
    owner_page,
)
from tillbook.db import Database


async def test_categories_are_shown_as_a_tree(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    page = await owner_page(web, db, shop, "/reference")
    token = csrf_of(page)
    made = await web.post(
        "/reference/category", data={"csrf": token, "form_token": "form-c1", "name": "Teas"}
    )
    assert made.status_code == 303, made.text
    page = await web.get("/reference")
    parent = re.search(r'<option value="(\d+)">Teas</option>', page.text)
    assert parent is not None
    child = await web.post(
        "/reference/category",
        data={
            "csrf": token,
            "form_token": "form-c2",
            "name": "Green tea",
            "parent_id": parent.group(1),
        },
    )
    assert child.status_code == 303, child.text
    tree = (await web.get("/reference")).text
    assert re.search(r"<li>Teas<ul class=\"plain tree\"><li>Green tea</li></ul></li>", tree)
