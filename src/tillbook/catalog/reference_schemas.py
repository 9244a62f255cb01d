"""Request bodies of the back office's catalog reference data: units, categories,
brands and taxes.

A create names every required field; an edit (PATCH) names only the fields it
changes, and the version it is based on (``version`` here or ``If-Match``). Limits
as stored (``fields.py``, ``kit/bounds.py``): a rate from 0 to 100 with at most 4
decimal places, names without control characters.
"""

from __future__ import annotations

from pydantic import StrictBool

from tillbook.fields import ImageUrl, Name, Name100, Ref, ShortName, Slug, Strict, Version
from tillbook.kit.bounds import Percent


class UnitIn(Strict):
    name: Name100
    short_name: ShortName


class UnitPatch(Strict):
    name: Name100 | None = None
    short_name: ShortName | None = None
    version: Version | None = None


class CategoryIn(Strict):
    name: Name
    slug: Slug | None = None
    parent_id: Ref | None = None
    image: ImageUrl | None = None


class CategoryPatch(Strict):
    """``parent_id: null`` makes the category a root; leaving it out keeps its place."""

    name: Name | None = None
    slug: Slug | None = None
    parent_id: Ref | None = None
    image: ImageUrl | None = None
    version: Version | None = None


class BrandIn(Strict):
    name: Name
    slug: Slug | None = None
    image: ImageUrl | None = None


class BrandPatch(Strict):
    name: Name | None = None
    slug: Slug | None = None
    image: ImageUrl | None = None
    version: Version | None = None


class TaxIn(Strict):
    name: Name100
    rate: Percent
    inclusive: StrictBool = False


class TaxPatch(Strict):
    name: Name100 | None = None
    rate: Percent | None = None
    inclusive: StrictBool | None = None
    version: Version | None = None
