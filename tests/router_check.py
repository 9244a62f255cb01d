"""Router queries: every statement the application sends names one tenant.

Distributed by ``company_id`` (Citus, DESIGN.md §17), a statement that names one
company's ``company_id`` for every tenant table it touches is routed to the one
node holding that company; any other runs on every shard. This module is the
test-time check of that rule over everything the test suite makes the service
send, on PostgreSQL (the SQL the SQLite run sends differs only in dialect).

What is observed: every statement through any SQLAlchemy engine of this process
(``before_cursor_execute`` on the ``Engine`` class, so the sync engine under every
async one, the app's and the tests' alike) and every statement the unit of work
sends on the asyncpg driver itself (``tillbook.unit.statement_observers``, which
SQLAlchemy's events do not see). Each distinct SQL text is analysed once
(``RouterAnalyser``, with sqlglot); only statements that break the rule cost more.

Which statements are the service's: the check walks the Python stack of a
statement that breaks the rule (through SQLAlchemy's greenlets into the awaiting
coroutines) to the nearest frame in ``src/tillbook`` (outside ``db.py``, the
transaction plumbing) or in ``tests/``. A test's or fixture's own SQL (setup,
invariant checks over a company's books, a deliberate cross-company probe) is
written in ``tests/`` and exempt; a service a test calls directly is still the
service. Recording only while a request or unit is active was the other way: it
would miss the service's reads (``Database.read``) and would not tell a test's own
statement inside ``db.unit`` from the service's.

Deliberately cross-tenant work (the outbox worker claiming rows of every company,
migrations, the operator's listings) runs inside ``tillbook.db.cross_tenant(name)``,
whose names and reasons are the one list ``tillbook.db.CROSS_TENANT``: on Citus
those are multi-shard statements, allowed because they are chosen.

``TILLBOOK_TEST_ROUTER_CHECK``: ``strict`` (the default: a violation fails the
test that sent it, at its teardown), ``report`` (violations are listed at the end of the run),
``off``. Not observed: processes the tests start (the CLI's subprocesses, the
live server of the browser tests).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

import greenlet
import sqlglot
from sqlalchemy import Engine, event
from sqlglot import exp

import tillbook
import tillbook.models
from tillbook import db as tillbook_db
from tillbook import unit as tillbook_unit
from tillbook.models import distribution
from tillbook.models.base import Base


def tenant_tables() -> frozenset[str]:
    """The tables distributed by ``company_id``: the schema's one list
    (``tillbook.models.distribution``), so a coordinator table such as the staff
    logins or the seen signatures is not held to the rule."""
    return frozenset(distribution.tenant_tables(Base.metadata))


VALUES = "(values)"
_QUERIES = (exp.Select, exp.Update, exp.Delete, exp.Insert, exp.SetOperation)


class RouterAnalyser:
    """Which tenant tables a statement leaves without a single ``company_id``.

    The rule, per query (each SELECT, UPDATE, DELETE, INSERT, CTE and subquery on
    its own): a tenant table is constrained by a top-level ``AND`` term of its
    WHERE or a JOIN's ON that sets its ``company_id`` equal to one value (a
    parameter or a literal, possibly cast; ``IN`` with one value), or equal to the
    ``company_id`` of a table so constrained (in this query or an enclosing one).
    An INSERT names ``company_id`` in its columns, and an INSERT … SELECT takes it
    from one value or a constrained table. A term under ``OR`` constrains nothing;
    ``= ANY(array)`` names several values."""

    def __init__(self, tenants: frozenset[str]):
        self.tenants = tenants
        self._cache: dict[str, tuple[str, ...]] = {}
        self._names = re.compile(r"\b(" + "|".join(sorted(tenants)) + r")\b", re.IGNORECASE)

    def problems(self, sql: str) -> tuple[str, ...]:
        found = self._cache.get(sql)
        if found is None:
            found = self._cache[sql] = self._analyse(sql)
        return found

    def _analyse(self, sql: str) -> tuple[str, ...]:
        if not self._names.search(sql):
            return ()
        head = sql.lstrip().split(None, 1)[0].upper() if sql.strip() else ""
        if head not in {"SELECT", "INSERT", "UPDATE", "DELETE", "WITH", "("}:
            return ()
        try:
            trees = sqlglot.parse(sql, read="postgres")
        except sqlglot.errors.SqlglotError as exc:
            return (f"not understood by the check: {str(exc).splitlines()[0]}",)
        problems: list[str] = []
        for tree in trees:
            if tree is not None:
                problems.extend(self._query(tree, {}))
        return tuple(dict.fromkeys(problems))

    # -- one query

    def _query(self, node: exp.Expression, outer: dict[str, bool]) -> list[str]:
        problems: list[str] = []
        with_ = node.args.get("with_")
        ctes = set()
        if isinstance(with_, exp.With):
            for cte in with_.expressions:
                ctes.add(cte.alias_or_name)
                problems.extend(self._query(cte.this, {}))
        if isinstance(node, exp.SetOperation):
            problems.extend(self._query(node.left, outer))
            problems.extend(self._query(node.right, outer))
            return problems
        if isinstance(node, exp.Insert):
            return problems + self._insert(node, outer, ctes)
        sources = self._sources(node, ctes)
        constrained = self._constrained(node, sources, outer)
        for alias, table in sources.items():
            if table in self.tenants and not constrained.get(alias):
                problems.append(f"{table} without one company_id")
        inner = {**outer, **constrained}
        for child in self._children(node):
            problems.extend(self._query(child, inner))
        return problems

    def _insert(self, node: exp.Insert, outer: dict[str, bool], ctes: set[str]) -> list[str]:
        problems: list[str] = []
        target = node.this
        columns: list[str] = []
        if isinstance(target, exp.Schema):
            columns = [c.name for c in target.expressions]
            target = target.this
        name = target.name if isinstance(target, exp.Table) else ""
        source = node.expression
        is_tenant = name in self.tenants
        if is_tenant and "company_id" not in columns:
            problems.append(f"INSERT INTO {name} without company_id")
        if isinstance(source, _QUERIES):
            problems.extend(self._query(source, outer))
            if is_tenant and "company_id" in columns and isinstance(source, exp.Select):
                position = columns.index("company_id")
                if position < len(source.expressions):
                    value = source.expressions[position]
                    sources = self._sources(source, ctes)
                    constrained = self._constrained(source, sources, outer)
                    if not self._one_value(value, sources, constrained):
                        problems.append(f"INSERT INTO {name} … SELECT with several company_id")
        elif source is not None:
            for child in self._children(source):
                problems.extend(self._query(child, outer))
        for part in ("conflict", "returning", "where"):
            sub = node.args.get(part)
            if sub is not None:
                for child in self._children(sub):
                    problems.extend(self._query(child, outer))
        return problems

    def _one_value(
        self, value: exp.Expression, sources: dict[str, str | None], constrained: dict[str, bool]
    ) -> bool:
        value = _unwrap(value)
        if _is_value(value):
            return True
        alias = self._company_column(value, sources)
        if alias is not None:
            return bool(constrained.get(alias))
        # a row of a VALUES list: one row, one value, as INSERT … VALUES
        if not isinstance(value, exp.Column):
            return False
        owner = value.table or (next(iter(sources)) if len(sources) == 1 else "")
        return sources.get(owner) == VALUES

    def _sources(self, node: exp.Expression, ctes: set[str]) -> dict[str, str | None]:
        """The tables this query reads or writes by alias: the table's name, else
        None (CTEs, derived tables, functions) or ``VALUES``."""
        tables: list[exp.Expression] = []
        if isinstance(node, exp.Update | exp.Delete):
            tables.append(node.this)
        for part in ("from_", "using"):
            sub = node.args.get(part)
            if isinstance(sub, exp.From):
                tables.append(sub.this)
            elif isinstance(sub, list):
                tables.extend(sub)
            elif sub is not None:
                tables.append(sub)
        for join in node.args.get("joins") or ():
            tables.append(join.this)
        sources: dict[str, str | None] = {}
        for table in tables:
            if isinstance(table, exp.Table) and table.name:
                sources[table.alias_or_name] = None if table.name in ctes else table.name
            elif isinstance(table, exp.Values) or (
                isinstance(table, exp.Subquery) and isinstance(table.this, exp.Values)
            ):
                sources[table.alias_or_name] = VALUES
            elif isinstance(table, exp.Expression):
                sources[table.alias_or_name] = None
        return sources

    def _constrained(
        self, node: exp.Expression, sources: dict[str, str | None], outer: dict[str, bool]
    ) -> dict[str, bool]:
        terms: list[exp.Expression] = []
        where = node.args.get("where")
        if isinstance(where, exp.Where):
            terms.extend(_conjuncts(where.this))
        for join in node.args.get("joins") or ():
            on = join.args.get("on")
            if on is not None:
                terms.extend(_conjuncts(on))
        constrained = {alias: False for alias in sources}
        edges: list[tuple[str, str]] = []
        for term in terms:
            term = _unwrap(term)
            if isinstance(term, exp.EQ):
                left, right = _unwrap(term.this), _unwrap(term.expression)
                a = self._company_column(left, sources)
                b = self._company_column(right, sources)
                if a is not None and b is not None:
                    edges.append((a, b))
                elif a is not None and _is_value(right):
                    constrained[a] = True
                elif b is not None and _is_value(left):
                    constrained[b] = True
            elif isinstance(term, exp.In) and not term.args.get("query"):
                a = self._company_column(_unwrap(term.this), sources)
                values = term.expressions
                if a is not None and len(values) == 1 and _is_value(_unwrap(values[0])):
                    constrained[a] = True
        known = {**outer, **{k: v for k, v in constrained.items() if v}}
        changed = True
        while changed:
            changed = False
            for a, b in edges:
                if known.get(a) and not known.get(b):
                    known[b] = changed = True
                elif known.get(b) and not known.get(a):
                    known[a] = changed = True
        return {alias: bool(known.get(alias)) for alias in sources}

    def _company_column(self, node: exp.Expression, sources: dict[str, str | None]) -> str | None:
        """The alias whose company a column is: a ``company_id``, or ``companies.id``."""
        if not isinstance(node, exp.Column) or node.name not in {"company_id", "id"}:
            return None
        alias = self._owner(node, sources)
        if alias is None:
            return None
        if node.name == "company_id" or sources.get(alias) == "companies":
            return alias
        return None

    def _owner(self, column: exp.Column, sources: dict[str, str | None]) -> str | None:
        """The alias a column belongs to: its qualifier, or the one table of the query
        that has such a column (an unqualified ``company_id`` with two would be
        ambiguous SQL)."""
        if column.table:
            return column.table
        owners = [
            alias
            for alias, table in sources.items()
            if table in self.tenants or (table == "companies" and column.name == "id")
        ]
        return owners[0] if len(owners) == 1 else None

    @staticmethod
    def _children(node: exp.Expression) -> Iterator[exp.Expression]:
        """The queries nested directly in ``node`` (not in its nested queries, and not
        its own CTEs, which ``_query`` checks on their own)."""
        stack = [child for child in _args(node)]
        while stack:
            current = stack.pop()
            if isinstance(current, exp.With):
                continue
            if isinstance(current, _QUERIES):
                yield current
                continue
            stack.extend(_args(current))


def _args(node: exp.Expression) -> list[exp.Expression]:
    found: list[exp.Expression] = []
    for value in node.args.values():
        if isinstance(value, exp.Expression):
            found.append(value)
        elif isinstance(value, list):
            found.extend(v for v in value if isinstance(v, exp.Expression))
    return found


def _unwrap(node: exp.Expression) -> exp.Expression:
    while isinstance(node, exp.Cast | exp.Paren | exp.Alias):
        node = node.this
    return node


def _is_value(node: exp.Expression) -> bool:
    return isinstance(node, exp.Placeholder | exp.Parameter | exp.Literal)


def _conjuncts(node: exp.Expression) -> list[exp.Expression]:
    node = _unwrap(node) if isinstance(node, exp.Paren) else node
    if isinstance(node, exp.And):
        return _conjuncts(node.this) + _conjuncts(node.expression)
    return [node]


# ------------------------------------------------------------------ recording

SRC = Path(tillbook.__file__).resolve().parent
TESTS = Path(__file__).resolve().parent
PLUMBING = {str(SRC / "db.py")}
UNIT = str(SRC / "unit.py")
MODE = os.environ.get("TILLBOOK_TEST_ROUTER_CHECK", "strict")
if MODE not in {"strict", "report", "off"}:
    raise RuntimeError("TILLBOOK_TEST_ROUTER_CHECK is one of strict, report, off")


@dataclass(frozen=True)
class Violation:
    sql: str
    problems: tuple[str, ...]
    where: str

    def describe(self) -> str:
        return f"{'; '.join(self.problems)}\n    at {self.where}\n    {self.sql}"


def _frames() -> Iterator[FrameType]:
    """This statement's stack, from the innermost frame out, continued through each
    SQLAlchemy greenlet into the coroutine that awaits it."""
    frame: FrameType | None = sys._getframe(1)
    current: Any = greenlet.getcurrent()
    while True:
        while frame is not None:
            yield frame
            frame = frame.f_back
        current = current.parent
        if current is None:
            return
        frame = current.gr_frame


def _origin() -> tuple[str, str]:
    """``("app", place)`` for a statement the service sends, ``("test", place)`` for
    one a test or fixture writes itself, ``("other", "")`` when neither is on the
    stack (a library's own, a statement at connect)."""
    unit = ""
    for frame in _frames():
        path = frame.f_code.co_filename
        place = f"{path}:{frame.f_lineno} {frame.f_code.co_name}()"
        if path.startswith(str(TESTS)) and path != __file__:
            return ("app", unit) if unit else ("test", place)
        if path.startswith(str(SRC)) and path not in PLUMBING:
            if path != UNIT:
                return "app", f"{place} (through the unit of work)" if unit else place
            # the unit's own statement: named by the service that queued or ran it
            unit = unit or place
    return ("app", unit) if unit else ("other", "")


class Recorder:
    """The statements that broke the rule since the last ``take``."""

    def __init__(self, analyser: RouterAnalyser):
        self.analyser = analyser
        self.found: list[Violation] = []
        self.everything: dict[tuple[str, tuple[str, ...]], Violation] = {}
        self.statements = 0

    def observe(self, sql: str) -> None:
        self.statements += 1
        problems = self.analyser.problems(sql)
        if not problems or tillbook_db.crossing_tenants() is not None:
            return
        origin, where = _origin()
        if origin != "app":
            return
        violation = Violation(sql, problems, where)
        self.found.append(violation)
        self.everything.setdefault((sql, problems), violation)

    def take(self) -> list[Violation]:
        found, self.found = self.found, []
        return found

    def _before_cursor_execute(self, conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if conn.dialect.name == "postgresql":
            self.observe(statement)

    def install(self) -> None:
        event.listen(Engine, "before_cursor_execute", self._before_cursor_execute)
        tillbook_unit.statement_observers.append(self.observe)

    def uninstall(self) -> None:
        event.remove(Engine, "before_cursor_execute", self._before_cursor_execute)
        tillbook_unit.statement_observers.remove(self.observe)
