"""Posted journal entries and lines cannot be edited: the database refuses any UPDATE,
DELETE or TRUNCATE of them (triggers of migration 7ea926272366), and the ORM refuses a
changed or deleted entry or line at flush (mapper events in ``models/ledger.py``)."""

from __future__ import annotations

import pytest
from sqlalchemy import exc, text

from tests.factories import by_id
from tests.invariants import check_books
from tillbook.db import Database
from tillbook.models import JournalEntry, JournalLine
from tillbook.models.ledger import JournalIsInsertOnly

REFUSED = "journal entries are insert-only"


async def first_line(db: Database, company_id: int) -> dict:
    """A posted line of the shop (its opening stock) and its entry, as stored."""

    async def read(s):
        row = (
            await s.execute(
                text(
                    "SELECT l.id AS line_id, l.entry_id, l.debit, l.credit, e.narration "
                    "FROM journal_lines l JOIN journal_entries e ON e.id = l.entry_id "
                    "WHERE l.company_id = :c ORDER BY l.id LIMIT 1"
                ),
                {"c": company_id},
            )
        ).one()
        return dict(row._mapping)

    return await db.read(read)


async def count_lines(db: Database, entry_id: int) -> int:
    return await db.read(
        lambda s: s.scalar(
            text("SELECT count(*) FROM journal_lines WHERE entry_id = :e"), {"e": entry_id}
        )
    )


async def refused(db: Database, sql: str, params: dict) -> None:
    """The statement fails in the database with the trigger's message (not a foreign
    key or any other error that would hide a missing trigger)."""
    with pytest.raises(exc.DBAPIError) as caught:
        await db.standalone(lambda s: s.execute(text(sql), params))
    assert REFUSED in str(caught.value)


STATEMENTS = {
    "line debit": ("UPDATE journal_lines SET debit = debit + 1 WHERE id = :line_id", "line_id"),
    "line delete": ("DELETE FROM journal_lines WHERE id = :line_id", "line_id"),
    "entry narration": (
        "UPDATE journal_entries SET narration = 'edited' WHERE id = :entry_id",
        "entry_id",
    ),
    "entry delete": ("DELETE FROM journal_entries WHERE id = :entry_id", "entry_id"),
}


@pytest.mark.parametrize("what", list(STATEMENTS))
async def test_database_refuses_edits(db: Database, shop, what: str) -> None:
    before = await first_line(db, shop.company_id)
    lines_before = await count_lines(db, before["entry_id"])
    sql, key = STATEMENTS[what]
    await refused(db, sql, {key: before[key]})
    assert await first_line(db, shop.company_id) == before
    assert await count_lines(db, before["entry_id"]) == lines_before
    await check_books(db, shop.company_id)


async def test_database_refuses_a_whole_table_delete(db: Database, shop) -> None:
    before = await first_line(db, shop.company_id)
    await refused(db, "DELETE FROM journal_lines WHERE company_id = :c", {"c": shop.company_id})
    assert await first_line(db, shop.company_id) == before


async def test_postgresql_refuses_truncate(db: Database, shop, backend: str) -> None:
    if backend != "postgresql":
        pytest.skip("SQLite has no TRUNCATE")
    before = await first_line(db, shop.company_id)
    for table in ("journal_lines", "journal_entries"):
        # Rolled back whatever happens, so a missing trigger cannot empty the books
        # the other tests of this run share.
        async with db.engine.connect() as conn:
            trans = await conn.begin()
            try:
                with pytest.raises(exc.DBAPIError) as caught:
                    await conn.execute(text(f"TRUNCATE {table} CASCADE"))
            finally:
                await trans.rollback()
        assert REFUSED in str(caught.value)
    assert await first_line(db, shop.company_id) == before


async def test_orm_refuses_a_changed_line_at_flush(db: Database, shop) -> None:
    before = await first_line(db, shop.company_id)

    async def edit(s):
        line = await by_id(s, JournalLine, before["line_id"])
        line.debit = line.debit + 1
        await s.flush()

    with pytest.raises(JournalIsInsertOnly, match="debit changed"):
        await db.standalone(edit)
    assert await first_line(db, shop.company_id) == before


async def test_orm_refuses_a_changed_entry_and_deletes(db: Database, shop) -> None:
    before = await first_line(db, shop.company_id)

    async def narrate(s):
        entry = await by_id(s, JournalEntry, before["entry_id"])
        entry.narration = "edited"
        await s.flush()

    async def delete_line(s):
        await s.delete(await by_id(s, JournalLine, before["line_id"]))
        await s.flush()

    with pytest.raises(JournalIsInsertOnly, match="narration changed"):
        await db.standalone(narrate)
    with pytest.raises(JournalIsInsertOnly, match="deleted"):
        await db.standalone(delete_line)
    assert await first_line(db, shop.company_id) == before


async def test_orm_lets_an_unchanged_object_through(db: Database, shop) -> None:
    """An attribute set to its own value marks the object dirty but emits no UPDATE:
    nothing to refuse."""
    before = await first_line(db, shop.company_id)

    async def touch(s):
        line = await by_id(s, JournalLine, before["line_id"])
        line.debit = line.debit
        await s.flush()

    await db.standalone(touch)
    assert await first_line(db, shop.company_id) == before
