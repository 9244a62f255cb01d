"""What PostgreSQL's generic plan of a prebuilt statement reads (``EXPLAIN ANALYZE``),
for the tests that pin a read's shape: the service runs every statement with
``plan_cache_mode = force_generic_plan`` (``tillbook.db``), so a plan chosen for
the values at hand would not be the one a till gets."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import asyncpg
from sqlalchemy.dialects.postgresql.asyncpg import dialect as asyncpg_dialect
from sqlalchemy.sql import Executable

from tillbook.db import split_pooler
from tillbook.unit import driver_sql


def _literal(value: Any) -> str:
    if isinstance(value, bool | int):
        return str(value).lower()
    if isinstance(value, dt.datetime):
        return f"'{value.isoformat()}'"
    if isinstance(value, list):
        return f"ARRAY[{', '.join(_literal(v) for v in value)}]::bigint[]"
    raise TypeError(value)


def rows_read(plan: dict[str, Any], relation: str) -> int:
    """The rows of ``relation`` a plan's nodes returned, in all."""
    own = plan["Actual Rows"] * plan["Actual Loops"] if plan.get("Relation Name") == relation else 0
    return own + sum(rows_read(child, relation) for child in plan.get("Plans", []))


def rows_examined(plan: dict[str, Any], relation: str) -> int:
    """The rows of ``relation`` a plan's nodes looked at: those they returned and
    those their filters removed."""
    own = 0
    if plan.get("Relation Name") == relation:
        seen = (
            plan["Actual Rows"]
            + plan.get("Rows Removed by Filter", 0)
            + plan.get("Rows Removed by Index Recheck", 0)
        )
        own = seen * plan["Actual Loops"]
    return own + sum(rows_examined(child, relation) for child in plan.get("Plans", []))


async def generic_plan(
    database_url: str,
    statement: Executable,
    values: dict[str, Any],
    *,
    analyze: tuple[str, ...] = (),
) -> dict[str, Any]:
    """The executed generic plan of ``statement`` with ``values`` (by name), on a
    connection of its own; ``analyze`` names the tables to ``ANALYZE`` first (what
    autovacuum keeps)."""
    url, _pooler = split_pooler(database_url)
    conn = await asyncpg.connect(url.set(drivername="postgresql").render_as_string(False))
    keys = tuple(values)
    try:
        for table in analyze:
            await conn.execute(f"ANALYZE {table}")
        await conn.execute("SET plan_cache_mode = force_generic_plan")
        compiled = driver_sql(statement, keys, asyncpg_dialect())  # type: ignore[no-untyped-call]
        # PREPARE and EXECUTE, as the service's prepared statements run: an EXPLAIN
        # with bound values plans with the values at hand instead
        await conn.execute(f"PREPARE pinned AS {compiled.sql}")
        given = ", ".join(_literal(v) for v in compiled.args(values))
        explained = await conn.fetchval(f"EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE pinned({given})")
    finally:
        await conn.close()
    plan: dict[str, Any] = json.loads(explained)[0]["Plan"]
    return plan


def outline(plan: dict[str, Any], depth: int = 0) -> str:
    """The plan as an indented list of its nodes: what a failed assertion shows."""
    line = (
        f"{'  ' * depth}{plan['Node Type']} {plan.get('Relation Name', '')} "
        f"{plan.get('Index Name', '')} rows={plan['Actual Rows']}x{plan['Actual Loops']}"
        f" {plan.get('Index Cond', '')} {plan.get('Filter', '')}"
    )
    return "\n".join([line, *(outline(c, depth + 1) for c in plan.get("Plans", []))])
