"""Reading, checking and writing import files; see the package's docstring."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from typing_extensions import TypedDict

from tillbook.errors import ValidationFailed
from tillbook.kit import csvcells
from tillbook.kit.shapes import answer
from tillbook.kit.text import quoted

M = TypeVar("M", bound=BaseModel)

# A file larger than this is refused before it is read. The admin API's body cap
# (``TILLBOOK_MAX_BODY_BYTES``, 1 MiB by default) must hold the file and its
# multipart envelope, so the file's own limit stays below it; the command line
# takes the same limit, so that a file imports the same way through either door.
MAX_BYTES = 1_000_000
# Rows of one import: every row is checked, then written, in one transaction.
MAX_ROWS = 10_000
# Problems reported at most: a file of 10 000 bad rows answers the first ones and
# says how many there were, instead of a megabyte of errors.
MAX_PROBLEMS = 1_000
BOM = "\ufeff"

# Called with (rows done, rows in all) while an import writes: the command line
# draws a progress bar with it.
Progress = Callable[[int, int], None]


@dataclass(frozen=True, order=True)
class Problem:
    """One thing wrong with a file: ``line`` 0 is the file as a whole."""

    line: int
    column: str
    why: str

    def __str__(self) -> str:
        if self.line == 0:
            return f"file: {self.why}"
        return f"line {self.line}: {self.column}: {self.why}"

    @property
    def key(self) -> str:
        return "file" if self.line == 0 else f"line {self.line}"

    @property
    def detail(self) -> str:
        return self.why if self.line == 0 else f"{self.column}: {self.why}"


class ImportRejected(ValidationFailed):
    """422: the file, or some of its rows, cannot be imported; nothing was written.

    ``errors`` maps ``line N`` (or ``file``) to that line's ``column: why``
    problems; ``problems`` keeps them in line order for the command line."""

    def __init__(self, problems: Sequence[Problem], total: int | None = None):
        self.problems = sorted(problems)
        total = len(self.problems) if total is None else total
        errors: dict[str, list[str]] = {}
        for problem in self.problems:
            errors.setdefault(problem.key, []).append(problem.detail)
        message = f"{self.problems[0]}; nothing was imported"
        if total > 1:
            message += f" ({total} problems in all)"
        if total > len(self.problems):
            errors["file"] = [
                *errors.get("file", []),
                f"{total - len(self.problems)} more problems not listed",
            ]
        super().__init__(errors, message)

    def lines(self) -> list[str]:
        """``line N: column: why``, one string per problem."""
        return [str(p) for p in self.problems]


@dataclass
class Problems:
    """Every problem of an import, collected before anything is written."""

    found: list[Problem] = field(default_factory=list)
    total: int = 0

    def add(self, line: int, column: str, why: str) -> None:
        self.total += 1
        if len(self.found) < MAX_PROBLEMS:
            self.found.append(Problem(line, column, why))

    def __bool__(self) -> bool:
        return self.total > 0

    def bad_lines(self) -> set[int]:
        return {p.line for p in self.found}

    def raise_if_any(self) -> None:
        if self.total:
            raise ImportRejected(self.found, self.total)


@dataclass(frozen=True)
class Layout:
    """An import file's columns.

    ``required``: columns the header must name; ``key``: the column rows are
    matched to existing records by (never empty); ``unique``: the columns whose
    values together appear at most once in a file (default: the key alone; a
    product file has a row per product *and* warehouse)."""

    columns: tuple[str, ...]
    required: frozenset[str]
    key: str
    max_rows: int = MAX_ROWS
    max_bytes: int = MAX_BYTES
    unique: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        assert self.key in self.required and self.required <= set(self.columns)
        assert set(self.unique) <= set(self.columns)

    @property
    def identity(self) -> tuple[str, ...]:
        return self.unique or (self.key,)


@dataclass(frozen=True)
class Row:
    """One data row: its line in the file (the header is line 1) and its text by
    column. A column the file leaves out is not in ``values``: an import leaves that
    field of an existing record as it is (an empty cell clears it)."""

    line: int
    values: Mapping[str, str]

    @property
    def present(self) -> dict[str, str]:
        """The non-empty cells, for a model whose absent fields keep their default."""
        return {k: v for k, v in self.values.items() if v.strip()}


# What an import did, row by row: the answer of every import, whatever the door.
@answer
class ImportCounts(TypedDict):
    created: int
    updated: int
    unchanged: int


@dataclass
class Counts:
    created: int = 0
    updated: int = 0
    unchanged: int = 0

    def as_dict(self) -> ImportCounts:
        return {"created": self.created, "updated": self.updated, "unchanged": self.unchanged}


def _rejected(why: str) -> ImportRejected:
    return ImportRejected([Problem(0, "", why)])


def _decode(data: bytes) -> str:
    """UTF-8, a leading BOM dropped; bad bytes are named by line and byte."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ImportRejected(
            [
                Problem(
                    line,
                    "file",
                    f"not UTF-8: byte 0x{data[exc.start]:02x} at character {column}; "
                    "save the file as CSV UTF-8",
                )
            ]
        ) from None
    return text[1:] if text.startswith(BOM) else text


def read_rows(data: bytes, layout: Layout, problems: Problems) -> list[Row]:
    """The data rows of ``data``, by column.

    Refused at once (``ImportRejected``): a file over ``layout.max_bytes`` or
    ``layout.max_rows`` rows, not UTF-8, without a header, with unknown, repeated
    or missing required columns, or a quote left open. A row with the wrong number
    of cells, or without a key or with a key an earlier row has, goes to
    ``problems`` and is left out of the rows returned; blank lines are skipped."""
    if len(data) > layout.max_bytes:
        raise _rejected(
            f"the file is {len(data)} bytes, over the limit of {layout.max_bytes}; "
            "split it into smaller files"
        )
    text = _decode(data)
    if not text.strip():
        raise _rejected(
            f"the file is empty; the first line must name the columns: {_names(layout)}"
        )
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    rows: list[Row] = []
    keys: dict[tuple[str, ...], int] = {}
    try:
        header = _header(next(reader), layout)
        end = reader.line_num
        for cells in reader:
            line, end = end + 1, reader.line_num
            if not any(cell.strip() for cell in cells):
                continue
            if len(rows) >= layout.max_rows:
                raise _rejected(
                    f"more than {layout.max_rows} rows; split the file into smaller files"
                )
            if len(cells) != len(header):
                problems.add(
                    line, "row", f"has {len(cells)} cells, the header names {len(header)} columns"
                )
                continue
            # Undo what the export did to cells that start like a formula.
            values = dict(zip(header, map(csvcells.restore, cells), strict=True))
            key = values[layout.key].strip()
            if not key:
                problems.add(line, layout.key, "is required: rows are matched by it")
                continue
            ident = tuple(values.get(c, "").strip() for c in layout.identity)
            if ident in keys:
                shown = " with ".join(
                    f"{c} {quoted(v)}" if n else quoted(v)
                    for n, (c, v) in enumerate(zip(layout.identity, ident, strict=True))
                    if v or not n
                )
                problems.add(line, layout.key, f"{shown} is also on line {keys[ident]}")
                continue
            keys[ident] = line
            rows.append(Row(line, values))
    except csv.Error as exc:
        raise ImportRejected(
            [Problem(reader.line_num or 1, "file", f"cannot be read as CSV: {exc}")]
        ) from None
    return rows


def _names(layout: Layout) -> str:
    return ",".join(layout.columns)


def _header(cells: list[str], layout: Layout) -> list[str]:
    names = [cell.strip().lower() for cell in cells]
    problems = Problems()
    seen: set[str] = set()
    for name, cell in zip(names, cells, strict=True):
        if name not in layout.columns:
            problems.add(1, quoted(cell, 40), f"unknown column; the columns are {_names(layout)}")
        elif name in seen:
            problems.add(1, name, "named twice")
        seen.add(name)
    for name in layout.columns:
        if name in layout.required and name not in seen:
            problems.add(1, name, "missing column (the first line must name the columns)")
    problems.raise_if_any()
    return names


def check_rows(rows: Sequence[Row], model: type[M], problems: Problems) -> list[tuple[Row, M]]:
    """Each row through ``model`` (its non-empty cells; an empty cell is the field's
    default). Every problem goes to ``problems`` as ``line N: column: why``; the
    rows that pass are returned with their model."""
    good: list[tuple[Row, M]] = []
    for row in rows:
        try:
            good.append((row, model.model_validate(row.present)))
        except ValidationError as exc:
            for err in exc.errors():
                column = str(err["loc"][0]) if err["loc"] else "row"
                problems.add(row.line, column, _message(err))
    return good


def _message(err: Any) -> str:
    message = str(err["msg"])
    if message.startswith("Value error, "):
        message = message[len("Value error, ") :]
    value = err.get("input")
    if err["type"] != "missing" and isinstance(value, str) and repr(value) not in message:
        message += f" (got {quoted(value)})"
    return message


def write_csv(columns: Sequence[str], rows: Iterable[Mapping[str, str]]) -> str:
    """A CSV file (header first, ``\\n`` line ends, quoted where needed, cells that
    start like a formula neutralised: ``kit/csvcells.py``) that ``read_rows`` reads
    back to the same values."""
    out = io.StringIO(newline="")
    writer = csvcells.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([row.get(name, "") for name in columns])
    return out.getvalue()
