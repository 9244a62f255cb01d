"""Migration files are named so that ``ls`` shows the chain in order:
``YYYY_MM_DD_NN_<revision>_<slug>.py``, with NN the revision's place among the
day's files. Alembic follows ``down_revision`` whatever the names; this is for the
reader, and fails when a new revision keeps the template's ``NN`` or a merge
re-chains revisions without renaming them."""

from __future__ import annotations

import re
from pathlib import Path

import tillbook.migrations

VERSIONS = Path(tillbook.migrations.__file__).parent / "versions"
NAME = re.compile(r"^(\d{4}_\d{2}_\d{2})_(\d{2})_([0-9a-f]+)_\w+\.py$")


def _chain() -> list[tuple[str, str]]:
    """(file name, revision) from the base to the head, following down_revision."""
    parent: dict[str, str | None] = {}
    name_of: dict[str, str] = {}
    for path in VERSIONS.glob("[0-9]*.py"):
        text = path.read_text()
        rev = re.search(r'^revision[^=]*= "(\w+)"', text, re.M)
        down = re.search(r'^down_revision[^=]*= (?:None|"(\w+)")', text, re.M)
        assert rev and down, path.name
        parent[rev.group(1)] = down.group(1)
        name_of[rev.group(1)] = path.name
    child = {down: rev for rev, down in parent.items()}
    assert len(child) == len(parent), "the revisions branch: one chain expected"
    chain, rev = [], child.get(None)
    while rev is not None:
        chain.append((name_of[rev], rev))
        rev = child.get(rev)
    assert len(chain) == len(parent), "some revisions are not on the chain"
    return chain


def test_file_names_sort_in_chain_order() -> None:
    chain = _chain()
    names = [name for name, _ in chain]
    assert names == sorted(names), "rename the files so that ls shows the chain"
    for name, rev in chain:
        match = NAME.match(name)
        assert match, f"{name}: expected YYYY_MM_DD_NN_<revision>_<slug>.py"
        assert match.group(3) == rev, f"{name}: the name's revision is not {rev}"


def test_ordinals_count_up_within_a_day() -> None:
    seen: dict[str, int] = {}
    for name, _ in _chain():
        match = NAME.match(name)
        assert match
        day, ordinal = match.group(1), int(match.group(2))
        assert ordinal == seen.get(day, 0) + 1, f"{name}: expected {seen.get(day, 0) + 1:02d}"
        seen[day] = ordinal
