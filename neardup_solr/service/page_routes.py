"""The review page's routes: ``GET /`` (a search box, a text's or a
record's near duplicates, the clusters of a pair file) and its forms
(``POST /labels/form``, ``POST /sign-in``)."""

from __future__ import annotations

import re
from typing import Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.security import HTTPAuthorizationCredentials
from starlette.concurrency import run_in_threadpool

from ..api import NearDuplicates
from ..errors import InputError, NeardupError
from .review import CSP, LABEL_ACTION, SIGN_IN_ACTION, Labeling, State, render_review
from ..text.normalize import is_blank
from .bodies import MAX_FORM_BODY, capped_body, form_fields
from .guards import BEARER, PAGE_COOKIE, check_origin, page_key, page_open, same_secret, signed_in
from .models import DEFAULT_LIMIT, ServiceError, error_status
from .shared import Shared, indexed_record


# Where a label's redirect may return on the page: an element id the page gives a row.
ANCHOR = re.compile(r"(?:pair|match)-[A-Za-z0-9._:/~!-]{1,1600}")


def _html(page: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(page, status_code=status,
                        headers={"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff"})


def _looked_up(nd: NearDuplicates, state: State, limit: int) -> dict[str, Any]:
    """What the page shows of its search: the index's size, and the near
    duplicates of the record ``state.id`` or of the text ``state.text``."""
    shown: dict[str, Any] = {"records": nd.solr.count()}
    if state.id:
        record = indexed_record(nd, state.id)
        shown["asked"] = record.text
        shown["matches"] = nd.query(record if record.fields else record.text, exclude=state.id, limit=limit)
    elif state.text.strip():
        if is_blank(state.text):
            raise InputError("the text has no letters or digits", hint="give some text to look up")
        shown["matches"] = nd.query(state.text, limit=limit)
    return shown


# Pairs the page explains at most: each costs Solr two or three requests.
MAX_EXPLAINED = 100


def _why(nd: NearDuplicates, state: State, shown: dict[str, Any]) -> dict[frozenset[str], str]:
    """Why each pair the page shows has its probability, in brief (a
    record's matches, and the clusters' pairs: the pair file's own
    explanations where it has them), at most ``MAX_EXPLAINED`` asked of Solr."""
    wanted: list[tuple[str, str]] = [(state.id, m.id) for m in shown.get("matches") or () if state.id]
    why: dict[frozenset[str], str] = {}
    page = shown.get("clusters")
    for pairs in (page.pairs.values() if page is not None else ()):
        for pair in pairs:
            if pair.explanation:
                why[pair.key] = pair.explanation
            elif pair.probability is not None:
                wanted.append((pair.a, pair.b))
    for a, b in wanted[:MAX_EXPLAINED]:
        try:
            found = nd.explain(a, b)
        except NeardupError:
            continue  # a record gone from the index: its pair is shown without
        if found.probability is not None:
            why[frozenset((a, b))] = found.brief()
    return why


# The review page (GET /), then its forms: a label (POST /labels/form) and
# the token (POST /sign-in), each answered by a redirect back to the page.
page_routes = APIRouter()


@page_routes.get("/", response_class=HTMLResponse, include_in_schema=False)
def review(request: Request, service: Shared, limit: int = Query(DEFAULT_LIMIT, ge=1, le=1000),
           credentials: HTTPAuthorizationCredentials | None = Depends(BEARER)):
    """The review page for the state its address holds; what cannot be
    shown (Solr down, no such record) is said on it. Where reads need the
    token and this client has not given it, only the form that takes it."""
    state = State.of(request.query_params)
    if service.token_for_reads and not page_open(request, service.token, credentials):
        return _html(render_review(state, closed=True), 401)
    shown: dict[str, Any] = {}
    failures: list[Exception] = []
    pairs = service.pairs
    parts = [lambda: _looked_up(service.current(), state, limit)]
    if pairs is not None:
        parts.append(lambda: {"clusters": pairs.page(state, service.reader.texts)})
    for part in parts:
        try:
            shown.update(part())
        except (ServiceError, NeardupError) as err:
            failures.append(err)
    if failures:
        shown.update(error=failures[0].message, hint=failures[0].hint)
    else:
        shown["why"] = _why(service.reader, state, shown)  # the reader current() just checked
    writable = signed_in(request, service.token)
    labeling = None if service.labels is None else Labeling(service.labels.labels(), writable=writable,
                                                             sign_in=not writable)
    return _html(render_review(state, labeling=labeling, **shown), error_status(failures[0]) if failures else 200)


@page_routes.post(LABEL_ACTION, include_in_schema=False)
async def label_form(request: Request, service: Shared):
    """A label from the page's buttons; back to where it was given."""
    fields: dict[str, str] = {}
    try:
        fields = form_fields(request, await capped_body(request, MAX_FORM_BODY, "reload the page"))
        check_origin(request, service.hosts)
        if not signed_in(request, service.token):
            raise ServiceError(401, "labels on the page need the service's token", hint="sign in on the page")
        store = service.label_store()
        await run_in_threadpool(store.add, fields.get("a", ""), fields.get("b", ""), fields.get("label", ""))
    except (ServiceError, NeardupError) as err:
        return _form_failure(State.of(fields), err)
    anchor = fields.get("anchor", "")
    return RedirectResponse(State.of(fields).url(anchor if ANCHOR.fullmatch(anchor) else ""), status_code=303)


@page_routes.post(SIGN_IN_ACTION, include_in_schema=False)
async def sign_in(request: Request, service: Shared):
    """The token from the page's sign-in form: a cookie that opens its forms."""
    fields: dict[str, str] = {}
    token = service.token
    try:
        fields = form_fields(request, await capped_body(request, MAX_FORM_BODY, "reload the page"))
        check_origin(request, service.hosts)
        if token is not None and not same_secret(fields.get("token", ""), token):
            raise ServiceError(401, "that is not the service's token", hint="give the token it was started with")
    except (ServiceError, NeardupError) as err:
        return _form_failure(State.of(fields), err)
    answer = RedirectResponse(State.of(fields).url(), status_code=303)
    if token is not None:
        answer.set_cookie(PAGE_COOKIE, page_key(token), httponly=True, samesite="strict", path="/")
    return answer


def _form_failure(state: State, err: Exception) -> HTMLResponse:
    """A page saying why a form's post failed, with the way back."""
    return _html(render_review(state, error=err.message, hint=err.hint, back=state.url()), error_status(err))
