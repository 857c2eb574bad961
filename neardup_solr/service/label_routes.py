"""The label routes: ``POST /labels``, ``GET /labels`` and ``GET /labels/gold``."""

from __future__ import annotations


from fastapi import APIRouter, Depends, Request
from fastapi.responses import PlainTextResponse
from starlette.concurrency import run_in_threadpool

from ..results.labels import gold_text, label_rows
from .bodies import LABEL_HINT, MAX_LABEL_BODY, capped_body, json_only, label_of
from .guards import authorized, may_read
from .models import Failure, LABEL_BODY, Label, READ_FAILURES, WRITE_FAILURES
from .shared import Shared


# The labels over the API: POST /labels, GET /labels, GET /labels/gold.
label_routes = APIRouter()


NO_LABELS = {409: {"model": Failure, "description": "the service keeps no labels"}}


@label_routes.post("/labels", response_model=Label, dependencies=[Depends(authorized)],
                   openapi_extra={"requestBody": LABEL_BODY},
                   responses=WRITE_FAILURES | NO_LABELS | {
                       413: {"model": Failure, "description": "the body is too large"},
                       415: {"model": Failure, "description": "the body is not JSON"}})
async def post_label(request: Request, service: Shared):
    """Label a pair of records same or different; labeling a pair again
    replaces its label. The label is in the labels file, synced to the
    disk, before this answers. Ids follow the id rule; they are not looked up."""
    json_only(request, "a label")
    a, b, label = label_of(await capped_body(request, MAX_LABEL_BODY, f"send {LABEL_HINT}"))
    first, second, label = await run_in_threadpool(service.label_store().add, a, b, label)
    return {"a": first, "b": second, "label": label}


@label_routes.get("/labels", response_model=list[Label], dependencies=[Depends(may_read)],
                  responses=READ_FAILURES | NO_LABELS)
def get_labels(service: Shared):
    """Every labeled pair's latest label, smaller id first, in id order."""
    return [{"a": a, "b": b, "label": label} for a, b, label in label_rows(service.label_store().labels())]


@label_routes.get("/labels/gold", response_class=PlainTextResponse, dependencies=[Depends(may_read)],
                  responses=READ_FAILURES | NO_LABELS)
def gold_pairs(service: Shared):
    """The pairs labeled same as a gold-pairs file, `id_a<TAB>id_b` a line
    in id order: what `neardup evaluate --gold` reads."""
    return PlainTextResponse(gold_text(service.label_store().labels()))
