"""A thin Solr client: pysolr on a retrying requests session, plus query syntax.

Record text never reaches Solr's query parser as syntax. Every value is sent
as a quoted term (only ``"`` and ``\\`` are special inside quotes, and both are
escaped), so quotes, colons, brackets, ``AND`` or ``*`` in a shingle are data.
"""

from __future__ import annotations

import copy
import json
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import takewhile
from typing import Any
from urllib.parse import unquote, urlencode, urlsplit, urlunsplit

import numpy as np
import orjson
import pysolr
import requests
import urllib3
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from ..errors import MissingCore, SolrFailure, SolrUnavailable
from ..parallel import Grouped
from .schema import ID, TEXT

DEFAULT_URL = "http://127.0.0.1:8983/solr/neardup"
# Seconds to wait for one answer, for the library and the command line
# alike. It is there to end a wait on a Solr that hangs, not to cut off a
# busy one: the slowest answers are an update that waits out a segment
# flush and the final commit, which opens a searcher over the whole index.
# It is longer than any answer at a million records took (docs/scale.md).
DEFAULT_TIMEOUT = 120.0
# Retries after connection errors and 5xx answers: with the backoff of 0.5,
# 1 and 2 s a Solr gets 3.5 s to come back from a restart or a full queue.
DEFAULT_RETRIES = 3
# Connections kept per host: more than the requests we ever have in flight
# at once (four updates, two bucket reads, four reference queries).
POOL_SIZE = 16
# Documents read per request (ids looked up, or a cursor's page): as many as
# an index update sends (``writer.BATCH_SIZE``), so an answer is about as
# large as a request Solr already takes.
READ_BATCH = 1000
# The local Solr's handler of bucket members (launcher/BucketsHandler.java).
BUCKETS = "buckets"
# The TLOG.state gauge's value for a core whose transaction log is not being
# replayed: the ordinal of ACTIVE in Solr's UpdateLog.State (REPLAYING,
# BUFFERING, APPLYING_BUFFERED, ACTIVE).
TLOG_ACTIVE = 3
# Seconds a write waits for a core to finish replaying its log. Replaying
# re-applies what the log held at an unclean stop, at indexing speed: a
# log of a few hundred thousand short records, at most tens of seconds.
REPLAY_WAIT = 300.0
REPLAY_POLL = 0.5


def quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def term(field: str, value: str | int) -> str:
    """A query matching ``value`` exactly in ``field``."""
    return f"{field}:{quote(str(value))}"


def overlap_query(field: str, values: Iterable[str | int]) -> str:
    """Matches documents sharing any value; the score is how many they share.

    Each clause scores a constant 1 (``^=1``), so ranking by score ranks by
    overlap, independent of term statistics and thus of the shard layout.
    """
    return " OR ".join(f"{term(field, v)}^=1" for v in values)


class _Backoff(Retry):
    """Waits ``backoff_factor`` x 1, 2, 4, ... before the 1st, 2nd, 3rd retry.

    urllib3 2 retries the first time at once and waits only from the second
    retry on (0, 1, 2 s with a factor of 0.5): a Solr that answered 503 for
    a moment is asked again before it could recover.
    """

    def get_backoff_time(self) -> float:
        errors = len(list(takewhile(lambda attempt: attempt.redirect_location is None, reversed(self.history))))
        if errors == 0:
            return 0.0
        # urllib3's cap on a wait (120 s); an instance attribute from urllib3 2 on.
        cap = getattr(self, "backoff_max", Retry.DEFAULT_BACKOFF_MAX)
        return float(min(cap, self.backoff_factor * 2 ** (errors - 1)))


def _session(url: str, retries: int, auth: tuple[str, str] | None, verify: bool | str) -> requests.Session:
    # Every request we send is idempotent (queries; adds, deletes and commits
    # by id), so all methods and read errors are retried too.
    session = requests.Session()
    # What requests reads from the environment on every request (proxies, a
    # CA bundle) is read once here: per request it slowed every single-record query (docs/scale.md).
    session.trust_env = False
    session.proxies = requests.utils.get_environ_proxies(url)
    # Answers uncompressed: Solr's gzip and our gunzip cost more than the
    # bytes they save on any link but a slow one (docs/scale.md).
    session.headers["Accept-Encoding"] = "identity"
    if verify is True:
        verify = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE") or True
    retry = _Backoff(
        total=retries,
        connect=retries,
        read=retries,
        status=retries,
        backoff_factor=0.5,
        status_forcelist=(500, 502, 503, 504),
        allowed_methods=None,
        raise_on_status=False,
    )
    session.mount("http://", HTTPAdapter(max_retries=retry, pool_maxsize=POOL_SIZE))
    session.mount("https://", _Verifying(verify, max_retries=retry, pool_maxsize=POOL_SIZE))
    session.auth = auth
    return session


class _Verifying(HTTPAdapter):
    """Checks certificates against a given CA file even where REQUESTS_CA_BUNDLE
    is set (requests lets that variable override a session's own setting)."""

    def __init__(self, verify: bool | str, **kwargs: Any):
        self._verify = verify
        super().__init__(**kwargs)

    def send(self, request, **kwargs):
        if isinstance(self._verify, str):
            kwargs["verify"] = self._verify
        return super().send(request, **kwargs)


class Solr:
    """One Solr core or collection at ``url`` (``http://host:port/solr/name``).

    Connection errors, timeouts and 5xx answers are retried ``retries`` times
    with exponential backoff (0.5 s, 1 s, 2 s, ...); 4xx answers are not.
    ``auth`` is (user, password) for basic authentication; credentials in
    the URL are used the same way and never shown in messages. TLS
    certificates are verified (``verify`` may name a CA bundle).
    """

    def __init__(
        self,
        url: str = DEFAULT_URL,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        retries: int = DEFAULT_RETRIES,
        auth: tuple[str, str] | None = None,
        verify: bool | str = True,
    ):
        parts = urlsplit(url.rstrip("/"))
        if parts.username is not None and auth is None:
            auth = (unquote(parts.username), unquote(parts.password or ""))
        self.url = urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))
        self.timeout = timeout
        self.session = _session(self.url, retries, auth, verify)
        self._client = pysolr.Solr(self.url, timeout=timeout, session=self.session, auth=auth)
        self._soft_commits = Grouped(self._soft_commit)

    @property
    def name(self) -> str:
        return urlsplit(self.url).path.rstrip("/").rsplit("/", 1)[-1]

    def at(self, name: str) -> Solr:
        """A client of the core or collection ``name`` on the same node, with
        this one's session (credentials, TLS, retries) and timeout. No request."""
        other = copy.copy(self)
        other.url = f"{self.base_url}/{name}"
        other._client = pysolr.Solr(other.url, timeout=self.timeout, session=self.session, auth=self.session.auth)
        other._soft_commits = Grouped(other._soft_commit)
        return other

    def instance(self) -> str:
        """The name of the folder the core lives in (its instance dir), which
        a swap of cores does not change, from the core's own system
        information (one request, with the permission that reads its config)."""
        folder = self.get("admin/system").get("core", {}).get("directory", {}).get("instance", "")
        return folder.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]

    def cloud(self) -> bool:
        """Whether the node runs SolrCloud (one request)."""
        return self.get(self.admin_url("info/system")).get("mode") == "solrcloud"

    def core_admin(self, action: str, **params: Any) -> dict[str, Any]:
        """One CoreAdmin request to the node (a standalone Solr's cores)."""
        return self.get(self.admin_url("cores"), action=action, **params)

    def _call(self, what: str, fn, *args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except pysolr.SolrError as err:
            raise self._failure(what, err.__context__, _first_line(str(err))) from None
        except requests.RequestException as err:
            # What pysolr lets through (it wraps timeouts and refused connections only): Solr gone in the
            # middle of an answer, for one.
            raise self._failure(what, err, _first_line(str(err))) from None

    def _failure(self, what: str, cause: BaseException | None, message: str) -> SolrUnavailable | SolrFailure:
        """The typed error for a request that failed: ``cause`` is the
        transport's exception (if any), ``message`` what Solr or it said."""
        if isinstance(cause, requests.exceptions.SSLError):
            return SolrUnavailable(
                f"the TLS certificate of {self.url} could not be verified",
                hint="give its CA certificate", remedy="ca_cert",
            )
        if _timed_out(cause):
            return SolrUnavailable(
                f"Solr at {self.url} did not answer within {self.timeout:g} s",
                hint="allow a longer timeout if Solr is busy", remedy="timeout",
            )
        if isinstance(cause, (requests.ConnectionError, requests.Timeout, requests.exceptions.ChunkedEncodingError)):
            return _unreachable(self.url)
        if "(HTTP 401)" in message or "(HTTP 403)" in message:
            return SolrFailure(
                f"Solr refused the credentials at {self.url}: {message}",
                hint="check the user and the password", remedy="credentials",
            )
        if "(HTTP 404)" in message and (missing := self._missing()) is not None:
            return missing
        if "servers hosting shard" in message or "SolrServerException" in message:
            # What a node answers when another node, holding a shard, is gone.
            return SolrFailure(
                f"Solr {what} failed at {self.url}: a shard did not answer: {message}",
                hint="no partial answers are used; bring the node back (`neardup solr status` shows which) "
                "and run the command again",
            )
        return SolrFailure(f"Solr {what} failed at {self.url}: {message}")

    def _missing(self) -> MissingCore | None:
        """After a 404: a MissingCore when the node holds no core or
        collection of this name (one or two requests), else ``None`` (it
        does, so something else was not found, or the node does not say)."""
        held = self.held_names()
        return None if held is None or self.name in held else MissingCore(self.name, self.base_url, held)

    def held_names(self) -> list[str] | None:
        """The collections of the node (SolrCloud) or its cores, sorted;
        ``None`` when it does not say (no rights to ask, say)."""
        # A standalone node refuses to list collections (400); a SolrCloud node lists its replicas as cores.
        for api, params, names in (("collections", {"action": "LIST"}, lambda found: found["collections"]),
                                   ("cores", {"action": "STATUS", "indexInfo": "false"},
                                    lambda found: list(found["status"]))):
            try:
                answer = self.session.get(self.admin_url(api), params={"wt": "json", **params}, timeout=self.timeout)
                if answer.status_code == 200:
                    return sorted(names(answer.json()))
            except (requests.RequestException, ValueError, KeyError, TypeError):
                return None
        return None

    def ping(self) -> None:
        self._call("ping", self._client.ping)

    def replaying(self) -> bool:
        """Whether the core is still replaying its transaction log, as it does
        for a while after answering its first ping when it was stopped
        uncleanly: until it is done, the log's old updates (a delete of
        everything among them) land on top of new ones. A collection (whose
        name is no core's) and a user not allowed Solr's metrics count as
        done.

        Raises:
            SolrUnavailable: Solr could not be reached.
        """
        try:
            answer = self.get(self.admin_url("metrics"), group="core", prefix="TLOG.state")
        except SolrFailure:
            return False
        return log_replaying(answer, self.name)

    def wait_until_replayed(self, wait: float = REPLAY_WAIT) -> None:
        """Return once the core is not replaying its log (:meth:`replaying`).

        Raises:
            SolrFailure: it still was after ``wait`` seconds.
            SolrUnavailable: Solr could not be reached.
        """
        deadline = time.monotonic() + wait
        while self.replaying():
            if time.monotonic() >= deadline:
                raise SolrFailure(f"Solr at {self.url} was still replaying its transaction log after {wait:.0f} s",
                                  hint="it was stopped uncleanly and is re-applying old updates; "
                                  "run the command again when it is done")
            time.sleep(REPLAY_POLL)

    def add(self, docs: Sequence[dict[str, Any]] | bytes) -> None:
        """Send documents, or an update body :func:`update_body` made of them
        (in a worker process, say), to be indexed at the next commit."""
        body = docs if isinstance(docs, bytes) else update_body(docs)
        self.post("update", body, "application/json; charset=utf-8", what="update")

    def commit(self, soft: bool = False) -> None:
        """Make what was sent visible to the next search, and wait for it.
        A hard commit also writes it into the index's files; a ``soft`` one
        only opens a new searcher (milliseconds, not a flush), what it made
        visible kept by Solr's update log until its next automatic hard
        commit (``solrconfig.xml``'s ``autoCommit``): a crash or ``kill
        -9`` loses none of it, Solr replaying the log when it starts.

        Soft commits of this client's threads are grouped (:class:`~neardup_solr.parallel.Grouped`):
        one returns once a commit that started after the call has ended, so
        threads that commit at once share one, and Solr opens one searcher
        (and makes one segment) for them all."""
        if soft:
            self._soft_commits.run()
        else:
            self._call("commit", self._client.commit, softCommit=False, waitSearcher=True)

    def _soft_commit(self) -> None:
        self._call("commit", self._client.commit, softCommit=True, waitSearcher=True)

    def delete_ids(self, ids: Sequence[str]) -> None:
        self._call("delete", self._client.delete, id=list(ids), commit=False)

    def delete_all(self) -> None:
        self._call("delete", self._client.delete, q="*:*", commit=False)

    def search(self, q: str, **params: Any) -> pysolr.Results:
        found = self._call("query", self._client.search, q, **params)
        if found.raw_response.get("responseHeader", {}).get("partialResults"):
            # Only when asked for (shards.tolerant); a missing shard is an error otherwise.
            raise SolrFailure(f"Solr answered from only some shards of {self.url}",
                              hint="check `neardup solr status` or the cluster's shards; every shard needs a live replica")
        return found

    def texts(self, ids: Sequence[str], batch: int = READ_BATCH,
              progress: Callable[[int], Any] | None = None) -> dict[str, str]:
        """The stored text of each of ``ids`` that is indexed; ``progress`` is
        told how many ids each batch looked up."""
        found: dict[str, str] = {}
        for start in range(0, len(ids), batch):
            chunk = ids[start : start + batch]
            docs = self.search(f"{{!terms f={ID} separator=$sep}}" + "\n".join(chunk), sep="\n",
                               fl=f"{ID},{TEXT}", rows=len(chunk)).docs
            found.update((d[ID], d[TEXT]) for d in docs)
            if progress is not None:
                progress(len(chunk))
        return found

    def pin(self) -> Snapshot | None:
        """A snapshot of the index as it is now, for :meth:`buckets` and
        :meth:`records` to read in as many requests as they need, whatever
        is written meanwhile; ``None`` where it cannot be had: a collection
        of SolrCloud (the handler refuses there: a shard holds part of a
        bucket) or a Solr started by an earlier launcher. Let go by
        :meth:`unpin`, or by Solr once unused for ten minutes (at the
        handler's next request) or when the core closes."""
        try:
            answer = self.session.post(f"{self.url}/{BUCKETS}", params={"wt": "json"}, timeout=self.timeout,
                                       data={"action": "open"})
        except requests.RequestException as err:
            raise self._failure("request", err, _first_line(str(err))) from None
        if answer.status_code != 200 or "snapshot" not in (found := orjson.loads(answer.content)):
            return None
        return Snapshot(found["snapshot"], found["maxDoc"])

    def unpin(self, snapshot: Snapshot) -> None:
        """Let ``snapshot`` go (the index files it held may then be merged away)."""
        self._form({"action": "close", "snapshot": snapshot.name})

    def buckets(self, snapshot: Snapshot, field: str, part: str | tuple[int, int], *, max_bucket: int | None = None,
                after: str | None = None, members: int | None = None
                ) -> tuple[np.ndarray, np.ndarray, int, int, str | None]:
        """The documents holding each key of ``field`` in ``part`` that two
        or more documents hold, as their numbers in ``snapshot``: each
        bucket's size, and their members one bucket after another (int32).
        The keys held by more than ``max_bucket`` (if given) are left out:
        how many, and the largest count among them. One request to the local
        Solr's ``/buckets`` handler, which reads no stored field.

        A field of terms: ``part`` is a prefix, the terms are walked in
        index order from the term dictionary and the postings (those after
        ``after``, if given), and a count, as the terms component's,
        includes documents deleted but not yet merged away. With
        ``members``, the walk stops once its buckets hold that many
        documents, and the last term read is returned for the next
        request's ``after`` (else ``None``). A field of points (the band
        keys): ``part`` is the smallest and largest value, read whole, and a
        count is of live documents."""
        form: dict[str, object] = {"snapshot": snapshot.name, "f": field, "max": max_bucket, "after": after,
                                   "members": members}
        if isinstance(part, str):
            form["prefix"] = part
        else:
            form["lo"], form["hi"] = part
        answer = self._form(form)
        return (np.array(answer["sizes"], np.int64), np.array(answer["docs"], np.int32), answer["skipped"],
                answer["largest"], answer["next"])

    def records(self, snapshot: Snapshot, docs: np.ndarray, field: str = TEXT) -> tuple[list[str | None], list]:
        """The id and stored ``field`` of each document ``docs`` numbers in
        ``snapshot`` (``None`` for one not live in it), in that order; read
        in the documents' order, which neighbours share stored blocks in."""
        answer = self._form({"action": "records", "snapshot": snapshot.name, "fl": field,
                             "docs": ",".join(map(str, docs.tolist()))})
        return answer["ids"], answer["values"]

    def _form(self, form: dict[str, object]) -> dict[str, Any]:
        """One form POST to the ``/buckets`` handler, fields without a value left out."""
        body = urlencode({name: value for name, value in form.items() if value is not None}).encode()
        return self.post(BUCKETS, body, "application/x-www-form-urlencoded")

    def count(self, q: str = "*:*") -> int:
        return self.search(q, rows=0).hits

    def count_starting(self, field: str, start: str) -> int:
        """How many documents hold a value of ``field`` starting with
        ``start`` (the prefix parser reads it raw: nothing to escape)."""
        return self.search(f"{{!prefix f={field} v=$starting}}", rows=0, starting=start).hits

    def iter_docs(self, fields: Sequence[str], q: str = "*:*", batch: int = READ_BATCH) -> Iterator[dict[str, Any]]:
        """Every matching document, in id order, with a cursor (no deep paging)."""
        cursor = "*"
        while True:
            page = self.search(q, fl=",".join(fields), sort=f"{ID} asc", rows=batch, cursorMark=cursor)
            yield from page.docs
            if page.nextCursorMark in (None, cursor):
                return
            cursor = page.nextCursorMark

    def terms(self, field: str, *, prefix: str = "", only: Sequence[str] | None = None,
              mincount: int = 1) -> tuple[int, list[tuple[str, int]]]:
        """The terms component: the number of live documents, and (term,
        documents holding it) for every term of ``field`` starting with
        ``prefix`` held by at least ``mincount`` documents, in index order;
        with ``only``, just those terms (which must not contain commas;
        absent ones are left out). One request.

        It reads the term dictionary alone, so the field needs no docValues.
        The counts are document frequencies summed over every shard (each
        shard sends all its terms and ``mincount`` applies to the sums):
        what Solr's own BM25 uses, including records replaced but not yet
        merged away. Reading them costs a lookup per term, not a pass over
        the documents.
        """
        params = {"terms.fl": field, "terms.limit": -1, "terms.mincount": mincount, "terms.sort": "index"}
        if prefix:
            params["terms.prefix"] = prefix
        if only is not None:
            params["terms.list"] = ",".join(only)
        found = self.search("*:*", rows=0, terms="true", **params)
        flat = found.raw_response.get("terms", {}).get(field, [])
        return found.hits, list(zip(flat[::2], flat[1::2]))

    def term_counts(self, field: str, terms: Sequence[str] | None = None) -> tuple[int, dict[str, int]]:
        """The number of live documents, and how many hold each term of
        ``field``: every term, or just ``terms`` (see :meth:`terms`)."""
        documents, counts = self.terms(field, only=terms)
        return documents, dict(counts)

    def user_properties(self) -> dict[str, str]:
        """Properties kept in the core's (or collection's) config overlay."""
        return self.get("config/overlay").get("overlay", {}).get("userProps", {})

    def set_user_properties(self, values: dict[str, str]) -> None:
        self.post("config", json.dumps({"set-user-property": values}).encode(), "application/json")

    @property
    def base_url(self) -> str:
        """The Solr node's root (``http://host:port/solr``), where its admin APIs live."""
        return self.url.rsplit("/", 1)[0]

    def admin_url(self, api: str) -> str:
        """The URL of a node-wide admin API (``collections``, ``configs``, ``info/system``)."""
        return f"{self.base_url}/admin/{api}"

    def get(self, path: str, **params: Any) -> dict[str, Any]:
        """A GET on ``url/path`` (config and schema endpoints of the core) or
        on a URL from :meth:`admin_url`, decoded from JSON."""
        return self._request("get", path, params)

    def post(self, path: str, body: bytes, content_type: str, *, what: str = "request",
             **params: Any) -> dict[str, Any]:
        """A POST of ``body`` to ``url/path`` or an :meth:`admin_url` (uploads,
        config commands, updates), decoded from JSON; ``what`` names it in
        an error."""
        return self._request("post", path, params, what, data=body, headers={"Content-type": content_type})

    def _request(self, method: str, path: str, params: dict[str, Any], what: str = "request", **kwargs: Any
                 ) -> dict[str, Any]:
        url = path if "://" in path else f"{self.url}/{path}"
        try:
            answer = self.session.request(method, url, params={"wt": "json", **params}, timeout=self.timeout,
                                          **kwargs)
        except requests.RequestException as err:
            raise self._failure(what, err, _first_line(str(err))) from None
        if answer.status_code != 200:
            message = f"Solr responded with an error (HTTP {answer.status_code}): {_reason(answer)}"
            raise self._failure(what, None, _first_line(message))
        return orjson.loads(answer.content)


@dataclass(frozen=True)
class Snapshot:
    """A snapshot of a core's index that the ``/buckets`` handler holds
    (:meth:`Solr.pin`), and how many documents it numbers (deleted ones
    too)."""

    name: str
    max_doc: int


def update_body(docs: Iterable[dict[str, Any]]) -> bytes:
    """The JSON body of an update request adding ``docs``, fields without a
    value (``None``, ``""``) left out: compact UTF-8, control characters
    escaped, as JSON escapes them (by orjson: encoding these bodies was the
    largest share of an index's own time with the standard library)."""
    return orjson.dumps([{k: v for k, v in doc.items() if v is not None and v != ""} for doc in docs])


def log_replaying(metrics: Any, core: str) -> bool:
    """Whether an answer of Solr's metrics API (``group=core``,
    ``prefix=TLOG.state``) says ``core`` is replaying its transaction log;
    an answer that does not name the core says no."""
    try:
        state = metrics["metrics"][f"solr.core.{core}"]["TLOG.state"]
    except (KeyError, TypeError):
        return False
    return state != TLOG_ACTIVE


def _timed_out(error: BaseException | None) -> bool:
    """A read timeout, raised as such or (after urllib3's retries) wrapped in a
    connection error whose reason is one."""
    if isinstance(error, requests.ReadTimeout):
        return True
    reason = getattr(error.args[0], "reason", None) if isinstance(error, requests.ConnectionError) and error.args else None
    return isinstance(reason, urllib3.exceptions.ReadTimeoutError)


def _reason(answer: requests.Response) -> str:
    """What Solr said was wrong: its JSON error message, else the body's
    start (of an HTML page, as Jetty answers for a core that is not there,
    its text without the markup)."""
    try:
        return str(answer.json()["error"]["msg"])
    except (ValueError, KeyError, TypeError):
        text = answer.text
        if text.lstrip().startswith("<"):
            title = re.search(r"<title>(.*?)</title>", text, re.S | re.I)
            text = title[1] if title else re.sub(r"<[^>]*>", " ", text)
        return " ".join(text.split())[:MESSAGE_CHARS] or answer.reason


# An error message is one line on a terminal; Solr's own can run to a stack trace.
MESSAGE_CHARS = 300


def _first_line(text: str) -> str:
    return " ".join(text.split())[:MESSAGE_CHARS]


def local_port(url: str) -> int | None:
    """The port of a Solr ``url`` on this machine (Solr's own default,
    8983, when it names none); ``None`` when it names another host."""
    try:
        parts = urlsplit(url)
        return (parts.port or 8983) if parts.hostname in ("127.0.0.1", "localhost", "::1") else None
    except ValueError:  # a port that is no number
        return None


def _unreachable(url: str) -> SolrUnavailable:
    message = f"Solr is not reachable at {url}"
    port = local_port(url)
    if port is not None:
        return SolrUnavailable(message, hint=f"start a local Solr on port {port}", remedy="start_local", port=port)
    return SolrUnavailable(message, hint="check the Solr URL and that the server is up", remedy="solr_url")
