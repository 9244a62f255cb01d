"""CSV import and export, the part every import shares (DESIGN.md §13).

A domain import (customers, suppliers, products) is four steps, of which only the
third is the domain's own:

1. ``read_rows``: the file as rows of text, by column (UTF-8 with or without a BOM,
   a header row naming known columns, every row as wide as the header, a key that
   is present and unique in the file); a file the service cannot read at all is
   refused at once.
2. ``check_rows``: each row through a Pydantic model (the same field types as the
   API's bodies), every problem of every row collected as ``line N: column: why``.
3. The domain, inside one unit of work: match each row to an existing record by
   its key, add row problems the database decides (a code taken elsewhere),
   ``problems.raise_if_any()`` before the first write, then write every row and
   count it in ``Counts``.
4. ``write_csv``: the export, in the same columns, so that export → import
   changes nothing. A cell that starts like a spreadsheet formula (``=HYPERLINK…``)
   is written with a ``'`` in front and ``read_rows`` drops it again: the rule is
   ``kit/csvcells.py``, which every CSV the service writes goes through.

A rejected import raises ``ImportRejected`` (a 422 whose ``errors`` are keyed by
``line N``) and nothing is written.
"""

from tillbook.imports.csvfile import (
    MAX_BYTES,
    MAX_ROWS,
    Counts,
    ImportCounts,
    ImportRejected,
    Layout,
    Problem,
    Problems,
    Progress,
    Row,
    check_rows,
    read_rows,
    write_csv,
)

__all__ = [
    "MAX_BYTES",
    "MAX_ROWS",
    "Counts",
    "ImportCounts",
    "ImportRejected",
    "Layout",
    "Problem",
    "Problems",
    "Progress",
    "Row",
    "check_rows",
    "read_rows",
    "write_csv",
]
