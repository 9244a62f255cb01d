"""The numbers a database's writes leave for this host's answers (``kit.generations``)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tillbook.db import identity
from tillbook.kit import generations
from tillbook.kit.generations import SLOTS, Generations


def test_a_companys_write_moves_its_stamp_and_no_other(tmp_path: Path) -> None:
    page = Generations(tmp_path / "page")
    one, two = page.stamp(1), page.stamp(2)
    page.written(1)
    assert page.stamp(1)[1] != one[1] and page.stamp(1)[0] == one[0]
    assert page.stamp(2) == two
    assert page.stamp(1 + SLOTS)[1] == page.stamp(1)[1]  # a shared slot: forgotten too
    page.written(None)  # a write of no known company moves every stamp
    assert page.stamp(2)[0] != two[0] and page.stamp(1)[0] != one[0]


def test_two_mappings_of_one_page_see_each_others_writes(tmp_path: Path) -> None:
    mine, theirs = Generations(tmp_path / "page"), Generations(tmp_path / "page")
    assert mine.shared and theirs.shared
    before = mine.stamp(7)
    theirs.written(7)
    assert mine.stamp(7) != before


def test_a_page_that_cannot_be_opened_is_the_process_own(tmp_path: Path) -> None:
    page = Generations(tmp_path / "missing folder" / "page")
    assert not page.shared
    before = page.stamp(3)
    page.written(3)
    assert page.stamp(3) != before


def test_a_database_in_memory_has_a_page_of_its_own() -> None:
    assert identity("sqlite://") is None and identity("sqlite:///:memory:") is None
    assert not generations.of_database(None).shared
    # One file, by whatever relative or absolute path, user or driver it is reached.
    assert identity("sqlite:///./shop.db") == identity("sqlite+aiosqlite:///shop.db")
    assert identity("postgresql://a:b@db:5432/shop") == identity(
        "postgresql+asyncpg://c@db/shop?pooler=pgbouncer"
    )
    assert identity("postgresql://db/shop") != identity("postgresql://db/other")


async def test_a_requests_writes_are_its_companys_and_no_later_ones(tmp_path: Path) -> None:
    page = Generations(tmp_path / "page")

    async def request(company_id: int | None) -> None:
        with generations.request_writes():
            if company_id is not None:
                generations.writing_for(company_id)
            generations.committed(page)

    five, other = page.stamp(5), page.stamp(6)
    await request(5)
    assert page.stamp(5)[0] == five[0] and page.stamp(5)[1] != five[1]
    assert page.stamp(6) == other
    await request(None)  # a request without a key: every company's
    assert page.stamp(6)[0] != other[0]
    # Outside any request (the CLI, a worker's loop): every company's, even when the
    # request before, in the same task, named one.
    await asyncio.gather(request(5), request(5))
    other = page.stamp(6)
    generations.committed(page)
    assert page.stamp(6)[0] != other[0]


def test_every_mapping_of_a_page_bears_its_signature_and_no_other(tmp_path: Path) -> None:
    one, again = Generations(tmp_path / "page"), Generations(tmp_path / "page")
    other = Generations(tmp_path / "other")
    assert one.signature == again.signature != other.signature
    assert one.trusted and not Generations(tmp_path / "missing" / "page").trusted
    assert Generations(None).trusted  # a database in memory: this process is all


def test_a_page_that_is_a_link_or_open_to_others_is_refused(tmp_path: Path) -> None:
    Generations(tmp_path / "real")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert not Generations(tmp_path / "link").shared
    loose = tmp_path / "loose"
    loose.write_bytes(b"")
    loose.chmod(0o644)
    assert not Generations(loose).shared


def test_writes_no_answer_shows_leave_the_numbers_alone(tmp_path: Path) -> None:
    page = Generations(tmp_path / "page")
    before = page.stamp(4)
    with generations.unseen_writes():
        generations.committed(page)
    assert page.stamp(4) == before
    generations.committed(page)
    assert page.stamp(4) != before
