async def test_warehouses(client, shop):
    r = await client.get("/warehouses", headers=shop.headers)
    assert r.status_code == 200, r.text
    assert r.json()["data"][0]["id"] == shop.warehouse_id
    assert r.headers["x-ratelimit-limit"] == "100000"


async def test_missing_keys(client):
    r = await client.get("/warehouses")
    assert r.status_code == 401
    assert r.json() == {
        "status": "error",
        "message": "authentication failed; both key headers are required",
    }
