"""What the service answers: its response models and request bodies as
OpenAPI shows them, and an error as its HTTP status and one line of JSON
(``{"error": ..., "hint": ...}``)."""

from __future__ import annotations

from typing import Any, Literal

from fastapi.responses import JSONResponse
from pydantic import BaseModel

from ..errors import IndexBeingReplaced, InputError, NeardupError, SolrFailure, SolrUnavailable
from ..modes.text_search import Match


DEFAULT_LIMIT = 10


class ServiceError(Exception):
    """An answer other than 200, with the one line and hint it carries."""

    def __init__(self, status: int, message: str, hint: str | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.hint = hint


class Duplicate(BaseModel):
    id: str
    similarity: float | None = None  # None for records of fields, compared field by field
    probability: float | None = None
    distance: int
    text: str


class RecordDuplicates(BaseModel):
    id: str
    duplicates: list[Duplicate]


class Added(BaseModel):
    added: int
    # The posted ids that were indexed already: their new text replaced the old.
    replaced: list[str] = []
    records: list[RecordDuplicates]


class Asked(BaseModel):
    id: str | None = None
    text: str


class Found(BaseModel):
    query: Asked
    matches: list[Duplicate]


class Deleted(BaseModel):
    deleted: list[str]


class Health(BaseModel):
    solr: str
    url: str
    records: int
    built: bool
    settings: dict[str, Any] | None
    version: str


class Failure(BaseModel):
    error: str
    hint: str | None = None


class Label(BaseModel):
    a: str
    b: str
    label: Literal["same", "different"]


RECORDS_BODY = {
    "required": True,
    "content": {"application/json": {"schema": {
        "oneOf": [{"$ref": "#/components/schemas/NewRecord"},
                  {"type": "array", "items": {"$ref": "#/components/schemas/NewRecord"}}]},
        "example": [{"id": "1", "text": "Art's Deli 12224 Ventura Blvd. Studio City"},
                    {"id": "2", "text": "Arts Deli, 12224 Ventura Boulevard, Studio City"}]}},
}

NEW_RECORD_SCHEMA = {
    "type": "object",
    "required": ["id", "text"],
    "properties": {"id": {"type": "string", "description": "1-128 of A-Z a-z 0-9 . _ : -, starting with a letter or digit"},
                   "text": {"type": "string", "description": "the record's text: some letters or digits"}},
}

FAILURES = {status: {"model": Failure, "description": what} for status, what in (
    (400, "bad JSON, a bad record or a bad parameter"), (502, "Solr answered with an error"),
    (503, "Solr could not be reached"))}

WRITE_FAILURES = FAILURES | {401: {"model": Failure, "description": "a token is configured and was not given"}}
# A read: its 401 only when the service takes reads with its token alone.
READ_FAILURES = FAILURES | {401: {"model": Failure, "description": "reads need the token, which was not given"}}
LABEL_BODY = {
    "required": True,
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Label"},
                                     "example": {"a": "1", "b": "534", "label": "same"}}},
}


def answer_of(match: Match) -> dict[str, Any]:
    return {"id": match.id, "similarity": None if match.similarity is None else round(match.similarity, 4),
            "probability": None if match.probability is None else round(match.probability, 4),
            "distance": match.distance, "text": match.text}


SOURCE_HELP = "the source the records belong to (answered as source/id; default: none)"
AGAINST_HELP = "only duplicates of this source (default: every record)"
CUT_HELP = "smallest similarity (default: the match model's cut)"
OLD_CUT_HELP = "the old name of cut, kept for a release"


def failure(status: int, message: str, hint: str | None = None) -> JSONResponse:
    headers = {401: {"WWW-Authenticate": "Bearer"}, 408: {"Connection": "close"}}.get(status)
    return JSONResponse({"error": message} | ({"hint": hint} if hint else {}), status_code=status, headers=headers)


def error_status(err: Exception) -> int:
    return err.status if isinstance(err, ServiceError) else status_of(err)


def status_of(err: NeardupError) -> int:
    """The HTTP status of a typed error."""
    if isinstance(err, (SolrUnavailable, IndexBeingReplaced)):
        return 503
    if isinstance(err, SolrFailure):
        return 502
    return 400 if isinstance(err, InputError) else 500
