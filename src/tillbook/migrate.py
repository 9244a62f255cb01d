"""Apply Alembic migrations programmatically (``tillbook migrate`` and first runs)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config

from tillbook.db import async_url, identity
from tillbook.kit import generations

MIGRATIONS = Path(__file__).parent / "migrations"


def alembic_config(database_url: str) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.set_main_option("sqlalchemy.url", async_url(database_url).replace("%", "%%"))
    # NN: the revision's place among the day's files, set by hand (alembic.ini).
    cfg.set_main_option("file_template", "%%(year)d_%%(month).2d_%%(day).2d_NN_%%(rev)s_%%(slug)s")
    return cfg


def upgrade(database_url: str) -> None:
    """Blocking; runs its own event loop, so call it outside a running loop
    (or from a worker thread)."""
    command.upgrade(alembic_config(database_url), "head")
    # A data migration may change any answer a worker of this host keeps.
    generations.of_database(identity(database_url)).written(None)
