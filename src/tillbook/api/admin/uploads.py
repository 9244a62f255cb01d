"""Reading an uploaded file from a multipart body (the back office's CSV imports)."""

from __future__ import annotations

from fastapi import Request
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.formparsers import MultiPartException

from tillbook.errors import BadRequest, UnsupportedMediaType, invalid
from tillbook.kit.text import quoted


async def uploaded_file(request: Request, max_bytes: int) -> bytes:
    """The bytes of the multipart field ``file`` (a file part or a plain field), at
    most ``max_bytes`` plus one (so that the import names the file as too large)."""
    ctype = request.headers.get("content-type", "")
    if ctype.split(";")[0].strip().lower() != "multipart/form-data":
        raise UnsupportedMediaType(
            "Content-Type must be multipart/form-data with the CSV in a field named 'file', "
            f"got {quoted(ctype or 'none')}"
        )
    try:
        form = await request.form(max_files=1, max_fields=5, max_part_size=max_bytes)
    except (MultiPartException, StarletteHTTPException) as exc:
        detail = getattr(exc, "detail", None) or getattr(exc, "message", str(exc))
        raise BadRequest(f"malformed multipart body: {detail}") from None
    part = form.get("file")
    if part is None:
        raise invalid("file", "is required: the CSV file, as a multipart field named 'file'")
    if isinstance(part, UploadFile):
        data = await part.read(max_bytes + 1)
        await part.close()
        return data
    return part.encode()
