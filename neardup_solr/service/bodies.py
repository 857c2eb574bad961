"""What a request may send: bodies capped as they are read (413 past the
cap, the rest unread), JSON only where JSON is asked for, records and
labels checked by the command line's own rules, a form's fields."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs

import anyio
from fastapi import Request

from ..records.objects import as_record
from ..errors import InputError, NeardupError
from ..results.labels import label_problem
from ..records.record import MAX_LINE_BYTES, Record, checked_source, field_problem, size_problem
from .models import ServiceError


# A label is small; its body has no reason to be larger than this.
MAX_LABEL_BODY = 64 * 1024
# A page's form carries the page's state, whose text may be a whole record
# (1 MiB), percent-encoded in up to three bytes a byte.
MAX_FORM_BODY = 4 * 1024 * 1024
LABEL_HINT = '{"a": id, "b": id, "label": "same" or "different"}'
RECORDS_HINT = '{"id": ..., "text": ...} or a list of them'


def checked_sources(*sources: str) -> None:
    """Each of ``sources`` keeps the source rule, or the request is a 400."""
    for source in sources:
        try:
            checked_source(source)
        except NeardupError as err:
            raise ServiceError(400, err.message, err.hint) from None


def _json_of(body: bytes, shape: str) -> Any:
    """A request body's JSON; ``shape`` says in the hint what to send.

    Raises:
        InputError: the body is not UTF-8, or not JSON.
    """
    try:
        return json.loads(body)
    except UnicodeDecodeError:
        raise InputError("the body is not UTF-8", hint="send JSON in UTF-8") from None
    except ValueError as err:
        raise InputError(f"the body is not JSON: {err}", hint=f"send {shape}") from None


def records_of(body: bytes) -> list[Record]:
    """The records of a request body: a JSON object or a list of them, each
    checked by the rules a records file's are, with the command line's
    reasons: the text as a JSON Lines field's (no NUL or other control
    characters, no lone surrogates: ``record.field_problem``), at most
    ``MAX_LINE_BYTES`` of it, then the id rule and some letters or digits
    (:func:`~neardup_solr.records.objects.as_record`). Costs a JSON parse of the body.

    Raises:
        InputError: the body is not JSON, holds no record, or a record is bad.
    """
    data = _json_of(body, RECORDS_HINT)
    items = data if isinstance(data, list) else [data]
    if not items:
        raise InputError("the body holds no records", hint=f"send {RECORDS_HINT}")
    records = []
    for number, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            raise InputError(f"record {number}: a record is a JSON object with id and text, not {item!r:.60}")
        try:
            records.append(as_record(_checked_text(item)))
        except InputError as err:
            raise InputError(f"record {number}: {err.message}", hint=err.hint) from None
    return records


def _checked_text(item: dict[str, Any]) -> dict[str, Any]:
    """``item`` when its text (if it is a string) keeps the rules a records
    file's text field does, which :func:`as_record` does not check.

    Raises:
        InputError: a control character, a lone surrogate, or more than ``MAX_LINE_BYTES``.
    """
    text = item.get("text")
    if not isinstance(text, str):
        return item
    if problem := field_problem("field", "text", text):
        raise InputError(problem, hint="send text without control characters, in UTF-8")
    if problem := size_problem(text):
        raise InputError(problem, hint=f"a record's text is at most {MAX_LINE_BYTES} bytes, as a line of a records file")
    return item


def label_of(body: bytes) -> tuple[str, str, str]:
    """The ``(a, b, label)`` of a request body ``{"a", "b", "label"}``; ids
    may be strings or whole numbers, as a record's.

    Raises:
        InputError: the body is not JSON, not one such object, or breaks the rules of a label.
    """
    data = _json_of(body, LABEL_HINT)
    if not isinstance(data, dict):
        raise InputError(f"a label is a JSON object with a, b and label, not {data!r:.60}", hint=f"send {LABEL_HINT}")
    if missing := [name for name in ("a", "b", "label") if name not in data]:
        raise InputError(f"the label lacks {' and '.join(missing)}", hint=f"send {LABEL_HINT}")
    values = []
    for name in ("a", "b", "label"):
        value = data[name]
        if name != "label" and isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str):
            raise InputError(f"{name} is {type(value).__name__}, not a string", hint=f"send {LABEL_HINT}")
        values.append(value)
    if problem := label_problem(*values):
        raise InputError(problem, hint=f"send {LABEL_HINT}")
    return values[0], values[1], values[2]


def _media_type(request: Request) -> str:
    """The type of the request's body, without its parameters ("" when it has none)."""
    return request.headers.get("content-type", "").split(";")[0].strip().lower()


def json_only(request: Request, what: str) -> None:
    """Refuse (415) a write whose body is not declared JSON: another site's
    page can post text or a form here unasked, but not JSON (the browser asks
    first), so without a token this is what keeps such a page from writing."""
    kind = _media_type(request)
    if kind != "application/json":
        raise ServiceError(415, f"{what} must come as JSON, not {kind or 'a body without a type'}",
                           hint="send it with `Content-Type: application/json`")


def form_fields(request: Request, body: bytes) -> dict[str, str]:
    """The fields of a form post (URL-encoded, as the page's forms send
    them), the first value of each.

    Raises:
        InputError: not a URL-encoded form in UTF-8, or too many fields.
    """
    kind = _media_type(request)
    if kind != "application/x-www-form-urlencoded":
        raise InputError(f"this takes the review page's forms, not {kind or 'a body without a type'}",
                         hint=f"send labels as JSON to POST /labels: {LABEL_HINT}")
    try:
        # The page's forms send at most eight fields; a few more are allowed for what browsers add.
        parsed = parse_qs(body.decode("utf-8"), keep_blank_values=True, strict_parsing=False, max_num_fields=16)
    except (UnicodeDecodeError, ValueError) as err:
        raise InputError(f"the form is not one the review page sends: {err}", hint="reload the page") from None
    return {name: values[0] for name, values in parsed.items()}


async def capped_body(request: Request, limit: int, hint: str) -> bytes:
    """The request's body, read as it arrives; refused (413, with ``hint``)
    as soon as it is known to be over ``limit`` bytes, by its declared
    length or by what came, without reading the rest; and refused (408,
    the connection closed) when the client pauses in it for longer than
    the service's client timeout. A client that hangs up in the middle
    ends the request (:class:`ClientDisconnect`, answered to no one)."""
    size = f"{limit / 2**20:g} MiB" if limit >= 2**20 else f"{limit / 2**10:g} KiB"
    too_large = ServiceError(413, f"the body is over {size}", hint=hint)
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise too_large
    wait = request.app.state.service.client_timeout
    chunks, length = [], 0
    stream = request.stream().__aiter__()
    while True:
        with anyio.move_on_after(wait) as waited:
            try:
                chunk = await stream.__anext__()
            except StopAsyncIteration:
                break
        if waited.cancelled_caught:
            raise ServiceError(408, f"the body stopped coming for {wait:g} s", hint="send the whole body at once")
        length += len(chunk)
        if length > limit:
            raise too_large
        chunks.append(chunk)
    return b"".join(chunks)
