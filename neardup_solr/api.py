"""The public API: one object for one Solr core or collection.

::

    nd = NearDuplicates("http://127.0.0.1:8983/solr/neardup")
    nd.index([("1", "Art's Deli 12224 Ventura Blvd."), ("2", "Arts Deli 12224 Ventura Boulevard")])
    for pair in nd.pairs():
        print(pair.a, pair.b, pair.similarity, pair.probability)

Records are ``(id, text)`` pairs (a tuple, a list: any two-item sequence),
``{"id": ..., "text": ...}`` dicts or :class:`~neardup_solr.records.record.Record`;
:meth:`NearDuplicates.index` and :meth:`~NearDuplicates.add` take a pandas
or polars DataFrame or a pyarrow Table too (``id=`` and ``text=`` name its
columns; :mod:`neardup_solr.records.tables`, with the extras ``[pandas]``,
``[polars]``, ``[parquet]``), and pairs convert with ``.to_pandas()`` and
``.to_arrow()``. Errors are exceptions of
``errors.py`` (``NeardupError`` and its kinds); progress goes to an optional
callable ``progress(stage, done, total)``, or to a bar with
``progress=True`` (``progress.py``); nothing else is printed. What a call
did is logged to the logger ``neardup_solr`` (at INFO); what it skipped is
a :class:`~neardup_solr.errors.NeardupWarning` unless ``warn=`` is given.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence, Sized
from dataclasses import replace
from itertools import chain, islice

from .lsh.bands import MAX_BUCKET, Choice
from .modes.text_report import Verified, lsh_pairs
from .match.candidates import MINHASH, SHINGLES
from .results.clusters import Clusters, Entities, cluster_pairs, clusters_of_groups
from .errors import IndexBeingReplaced, InputError, NeardupError, NeardupWarning
from .index.replacement import Heartbeats, kept_since, replace_index, replan_index, writable
from .index.writer import BATCH_SIZE, index_records
from .modes.field_report import Linked, field_clusters, field_pairs
from .results.outputs import Matches
from .results.pairs import Pair, Pairs, PairStream, one_to_one as one_partner_each
from .progress import Progress, stream_told, told
from .records.record import (Record, checked_source, has_letters_or_digits, in_source, key_prefix, keyed,
                             shown_id, source_of)
from .records.objects import RecordLike, as_record, as_records, query_record
from .records.readers import RecordReader
from .modes.reference import reference_pairs
from .index.sampling import SAMPLE_RECORDS, choose_banding, choose_plan
from .index.schema import ID, RECORD_FIELDS, TEXT
from .text.analysis import text_tokens
from .modes.text_search import OnlineSearch, pairs_with
from .modes.field_search import FieldSearch, checked_fields
from .evidence import Explanation
from .match.text_explanation import of_text
from .index.documents import record_of
from .index.solr import DEFAULT_URL, Solr
from .index.state import IndexSettings
from .match.stored import load_field_model, save_model

log = logging.getLogger("neardup_solr")


class NearDuplicates:
    """Near-duplicate detection over one Solr core or collection.

    Args:
        solr: the core's URL (``http://host:8983/solr/neardup``) or a
            :class:`~neardup_solr.index.solr.Solr` client.
        timeout: seconds to wait for one Solr answer.
        retries: retries after connection errors and 5xx answers.
        auth: (user, password) for basic authentication.
        verify: TLS verification: ``True``, or the path of a CA certificate.

    Creating one sends no request. Each call says what it costs in Solr
    requests and memory.
    """

    def __init__(self, solr: str | Solr = DEFAULT_URL, *, timeout: float = 120.0, retries: int = 3,
                 auth: tuple[str, str] | None = None, verify: bool | str = True):
        self.solr = solr if isinstance(solr, Solr) else Solr(solr, timeout=timeout, retries=retries, auth=auth,
                                                             verify=verify)
        self._searches: dict[float | str | None, OnlineSearch | FieldSearch | None] = {}
        # How a write judges a replacement marked on the index: ``None`` watches
        # it (up to replacement.STALE seconds, when it shows no life); a
        # long-lived client (a service's worker) sets what it has seen of them
        # instead.
        self.heartbeats: Heartbeats | None = None

    def __repr__(self) -> str:
        return f"NearDuplicates({self.solr.url!r})"

    @property
    def settings(self) -> IndexSettings:
        """How the index was built (one request)."""
        return IndexSettings.load(self.solr)

    @staticmethod
    def banding(sample: Sequence[RecordLike], total: int | None = None, lsh_shingles: str = "chars") -> Choice:
        """The LSH banding for ``total`` records like ``sample``, as
        :meth:`index` chooses it: the one that catches the lowest similarity
        with probability 0.99 while a record expects at most 50 candidates
        by chance and a report verifies at most a million chance pairs, or
        10 a record (:func:`neardup_solr.lsh.bands.chance_budget`).

        Args:
            sample: records of the data (2000 drawn at random from them
                when there are more: :func:`neardup_solr.index.sampling.sample`).
            total: how many records the data holds (default: the sample's).
            lsh_shingles: "chars" (short records) or "words" (documents).

        Returns:
            The choice: its ``banding`` (bands x rows), the similarity it
            catches and the expected chance candidates. No request; a
            comparison of every pair of the sample (2000 records: about a
            second).
        """
        return choose_banding([as_record(r) for r in sample], lsh_shingles, total)

    def index(self, records: Iterable[RecordLike] | object, *, source: str = "", id: str | None = None,
              text: str | Sequence[str] | Mapping[str, str] | None = None, bands: int | None = None,
              band_rows: int | None = None,
              minhash_values: int = IndexSettings.minhash_values, lsh_shingles: str = IndexSettings.lsh_shingles,
              reference: bool = False, batch_size: int = BATCH_SIZE, progress: Progress | bool | None = None,
              on_banding: Callable[[Choice], None] | None = None, signatures: int | None = None) -> int:
        """Replace what the index holds with ``records``, never leaving it
        empty or half built: they are indexed into a new core (a new
        collection on SolrCloud) that takes the old one's place at the same
        URL only when all are committed; until then, and if the run fails,
        is interrupted or is killed, the old index serves as it was (see
        :func:`neardup_solr.index.replacement.replace_index`).

        Args:
            records: the records; an id given twice keeps its last text (and
                counts once). Or
                a pandas or polars DataFrame or a pyarrow Table (converted
                a batch of rows at a time, through pyarrow).
            id: a table's id column (default ``id``).
            text: a table's text column, or the columns joined in this
                order into the text (default: every other column with a
                text form), as a CSV file's are; a dict, ``{column:
                field}``, names the field each column is (a table whose
                columns are named otherwise than the index's fields).
            source: the source they belong to (see
                :func:`neardup_solr.records.record.keyed`): ids need only be unique
                within a source, and pairs name it (``"a/17"``). ``""``, the
                default, is no source.
            bands, band_rows: the LSH banding; when neither is given it is
                chosen from a sample of ``records`` (see :meth:`banding`):
                records are read into a list first, and a
                :class:`~neardup_solr.records.readers.RecordReader` has its file
                sampled (:func:`neardup_solr.index.sampling.sample`) before it is
                read. Given one, the other is the default (42 bands, 3 rows).
            minhash_values: MinHash values of word shingles a record keeps
                (the minhash mode).
            lsh_shingles: "chars" (short records) or "words" (documents).
            reference: also the reference modes' fields, which
                :meth:`shingle_pairs` and :meth:`minhash_pairs` read (their
                word shingles and MinHash values are most of an index's
                time for documents, two fifths of it for short records);
                by default only the default mode's.
            batch_size: records per update request.
            progress: told of the step "indexing" (one unit a record);
                ``True`` draws a bar.
            on_banding: told of the banding chosen from the sample, before
                any record is indexed.
            signatures: the old name of ``minhash_values``, kept for a release.

        Returns:
            How many records were indexed. Costs one update request per
            batch (four in flight), a commit and two settings requests, and
            for the replacement a core's creation (a collection's on
            SolrCloud: a few seconds), a swap (an alias change) and the old
            index's removal, after waiting for a Solr that was stopped
            uncleanly to replay its transaction log (up to five minutes, one
            metrics request per half second); memory holds four batches (or
            all records, when the banding is chosen); the disk holds both
            indexes until the swap. Needs Solr's core admin rights
            (collection and configset admin on SolrCloud).

        Raises:
            InputError: a record (a table's row, named by its number) breaks
                the id or text rules, or there was no record at all (the
                index is left as it was).
            IndexBeingReplaced: another replacement of the index is under
                way (the index is left to it).
            MissingField: a table has no column ``id``, or one named in ``text``.
            MissingExtra: a table, and pyarrow is not installed.
            NeardupError: ``source`` breaks the source rule (no request is sent).
            SolrUnavailable, SolrFailure: Solr could not be reached, refused
                (the admin requests too), or was still replaying its log
                after five minutes.
        """
        reader = records if isinstance(records, RecordReader) else None
        records = in_source(as_records(records, id, text), source)
        choosing = bands is None and band_rows is None
        drawn = reader
        if not choosing:
            # The fields' kinds from the first records, in the one reading (standard input has no second).
            records = iter(records)
            drawn = list(islice(records, SAMPLE_RECORDS))
            records = chain(drawn, records)
        elif reader is None:
            # The banding is chosen from all records, drawn at random.
            records = list(records)
            drawn = records
        plan = choose_plan(drawn, lsh_shingles, banding=choosing)
        if plan.choice is not None:
            if on_banding is not None:
                on_banding(plan.choice)
            bands, band_rows = plan.choice.banding.bands, plan.choice.banding.band_rows
        minhash_values = _renamed(minhash_values, signatures, "minhash_values", "signatures")
        settings = IndexSettings(minhash_values=minhash_values, bands=bands or IndexSettings.bands,
                                 band_rows=band_rows or IndexSettings.band_rows, lsh_shingles=lsh_shingles,
                                 fields=plan.fields, chosen=choosing)
        settings = replace(settings, reference=reference)
        self.solr.wait_until_replayed()
        self._changed()
        with told(progress) as tell:
            count = replace_index(self.solr, records, settings, batch_size=batch_size, progress=tell,
                                  distinct=reader is not None)
        log.info("indexed %d records into %s (%d bands x %d rows)", count, self.solr.url, settings.bands,
                 settings.band_rows)
        return count

    def add(self, records: Iterable[RecordLike] | object, *, source: str = "", id: str | None = None,
            text: str | Sequence[str] | Mapping[str, str] | None = None, batch_size: int = BATCH_SIZE,
            progress: Progress | bool | None = None, replan: bool = True,
            warn: Callable[[str], None] | None = None, soft_commit: bool = False) -> int:
        """Add ``records`` of ``source`` (or a table's rows, ``id`` and ``text``
        naming its columns, as :meth:`index` takes them) to the index, built
        as it was; an id of that source indexed already is replaced. Their
        pairs come from :meth:`pairs_of`.

        Records of fields named otherwise than the index's, as many and in
        its order (a second table's columns named its own way), are given
        the index's names by position, and ``warn`` is told which (without
        it, a :class:`~neardup_solr.errors.NeardupWarning`): so the two
        tables are compared field by field. A field of theirs the index has
        keeps its name, and must be at its place for the others to be
        paired; named otherwise, they are fields of their own. (``text``
        as a dict names each column's field instead.)

        Records of a source the index did not hold, or of fields it was not
        planned for, make its plan again from all it holds, and rebuild it
        when the plan changed
        (:func:`~neardup_solr.index.replacement.replan_index`): the banding
        and the fields then come from every source, whichever was indexed
        first. ``replan=False`` leaves the plan as it is (a service adding a
        few records at a time: a rebuild would hold them up).

        ``soft_commit`` makes the records visible without writing the
        index's files (milliseconds, where a hard commit flushes): Solr's
        update log keeps them, so a crash loses none, and its automatic
        hard commit writes them within a minute
        (:meth:`~neardup_solr.index.solr.Solr.commit`). For many small adds
        (a service's); one large add commits hard at its end.

        Returns:
            How many were added. Costs a request to see which kind of
            records the index holds, two to see it is not being replaced
            (before and after), one update request per batch and a
            commit, after the wait :meth:`index` makes for a replaying
            Solr, and a request to ask whether the source is new; memory
            holds four batches.

        Raises:
            InputError: as :meth:`index`; also records of a source added to an
                index of records without one, or the other way round.
            IndexBeingReplaced: the index is being replaced (a write now
                would be lost with it), or was while the records were added
                (they may be lost: add them again when it is done).
            MissingField, MissingExtra, NeardupError, SolrUnavailable,
            SolrFailure: as :meth:`index`.

        An add that fails part way (Solr refusing a batch, a bad record
        further on) says so in its error: the records sent before it were
        not committed, but Solr may still add any of them, at its next
        commit or restart; adding the same records again ends as one clean
        add would.
        """
        distinct = isinstance(records, RecordReader)  # a file's reader skips an id it saw before
        records = in_source(as_records(records, id, text), source)
        self.solr.wait_until_replayed()
        before = writable(self.solr, self.heartbeats)
        self._check_unmixed(source)
        self._changed()
        settings = self.settings
        new_source = replan and bool(source) and not self.solr.count_starting(ID, key_prefix(source))
        if settings.fielded:
            records = _in_index_fields(records, settings, source, warn or _warning)
            # The first record is checked before any is sent.
            records = iter(records)
            first = next(records, None)
            records = records if first is None else chain([self._fitting(first, settings)], records)
        known = {p.name for p in settings.fields}
        misfits: list[str] = []

        def note(record: Record) -> None:
            # A record of fields the index was not planned for changes the plan.
            if settings.fielded and not misfits and not {n for n, _ in self._fitting(record, settings).fields} <= known:
                misfits.append(record.id)

        read = _Counted.of(records, note)
        with told(progress) as tell:
            try:
                count = index_records(self.solr, read, settings, batch_size=batch_size, progress=tell,
                                      distinct=distinct, soft_commit=soft_commit)
            except NeardupError as err:
                if read.count and not isinstance(err, IndexBeingReplaced):
                    # What was sent before the failure is in Solr's transaction log, uncommitted: its next
                    # commit (anyone's) or a restart may add it. Adding the same records again converges.
                    err.message += (f"; the add stopped after reading {read.count} records: Solr did not commit "
                                    "those it took, but may still add any of them (at its next commit, or when it "
                                    "restarts)")
                    err.hint = "add the same records again once Solr is well: those it has are replaced"
                raise
            kept_since(self.solr, before, f"{count} records were added")
            if count and replan and (new_source or misfits) and replan_index(self.solr, settings, tell):
                self._changed()
        log.info("added %d records to %s", count, self.solr.url)
        return count

    def _fitting(self, record: Record, settings: IndexSettings) -> Record:
        """``record``, when it can be added to an index of ``settings``:
        an index of records of fields takes no record of one text, which
        would plan it again as one of texts (a report would then compare
        every record as one text).

        Raises:
            InputError: it cannot.
        """
        if settings.fielded and len(record.fields) < 2:
            raise InputError(f"the index at {self.solr.url} holds records of fields "
                             f"({', '.join(p.name for p in settings.fields)}); record {shown_id(record.id)} is one "
                             "text, which would make every record one text",
                             hint="give its fields (a table's columns, two or more), or index these on their own")
        return record

    def _check_unmixed(self, source: str) -> None:
        """Refuse records of ``source`` for an index of records without a
        source, and records without one for an index of sources: mixed,
        pairs would name an empty source beside real ones and gold pairs
        would match none of them. An index holds one kind or the other, so
        one record of it tells which. One request.

        Raises:
            InputError: the index holds the other kind.
        """
        holds = self._holds()
        if not holds or (holds == "sources") == bool(source):
            return
        if source:
            raise InputError(f"the index at {self.solr.url} holds records without a source; records of source "
                             f"{source!r} would be mixed with them",
                             hint="index the records there with a source of their own first, or add these without one")
        raise InputError(f"the index at {self.solr.url} holds records of sources; records without one would be mixed "
                         "with them", hint="give these records a source too")

    def _holds(self) -> str:
        """Which kind of records the index holds: "sources" (records of
        sources), "records" (without one), or "" (none). One request."""
        docs = self.solr.search("*:*", fl=ID, rows=1).docs
        return "" if not docs else "sources" if source_of(docs[0][ID]) else "records"

    def pairs_of(self, records: Iterable[RecordLike], *, source: str = "", cut: float | None = None,
                 progress: Progress | bool | None = None, threshold: float | None = None) -> Pairs:
        """The pairs ``records`` (indexed already, as after :meth:`add`) make
        with anything indexed, each once, smaller id first.

        Args:
            records: the records whose near duplicates are wanted.
            source: the source they were added with.
            cut: smallest similarity (default: the pairs the model the
                last :meth:`pairs` kept calls matches, else similarity 0.7).
            progress: told of the step "finding their duplicates".
            threshold: the old name of ``cut``, kept for a release.

        Returns:
            Pairs with distance, similarity and probability (``None`` before
            any model), a list that converts with ``to_pandas()`` and
            ``to_arrow()``. Costs one or two queries per record; memory
            holds the pairs.
        """
        cut = _renamed(cut, threshold, "cut", "threshold")
        records = in_source(as_records(records), source)
        fields = self._field_search() if cut is None else None
        with told(progress) as tell:
            if fields is None:
                found = Pairs(self._search(cut).pairs_with(records, progress=tell))
            else:
                records = _in_index_fields(records, fields.settings, source, lambda said: None)
                found = Pairs(pairs_with(lambda r: fields.find(r, exclude=r.id) if r.fields else
                                         self._search(None).find(r.text, exclude=r.id), records, tell))
        found.sourced = bool(source)
        return found

    def pairs(self, *, link: bool = False, one_to_one: bool = False, cut: float | None = None,
              max_bucket: int | None = MAX_BUCKET, labels: Mapping[frozenset[str], bool] | None = None,
              progress: Progress | bool | None = None, warn: Callable[[str], None] | None = None,
              threshold: float | None = None, as_text: bool = False, explain: bool = False) -> Verified | Linked:
        """Every near-duplicate pair of the index (the default mode), and the
        match model fitted to all candidates, which is kept with the index
        for :meth:`query` and :meth:`pairs_of`. Records of fields (a table's
        columns) are compared field by field (:mod:`neardup_solr.modes.field_report`),
        the pairs kept being the candidates whose records are in one of
        :meth:`entities` (without ``link``); records of one text, by their
        text similarity (:mod:`neardup_solr.modes.text_report`).

        Args:
            link: only pairs across sources (records indexed with different
                ``source``): the candidates within one source are dropped
                before the model is fitted, so it is fitted to the
                cross-source candidates alone.
            one_to_one: with ``link``, at most one partner for each record
                in each other source: its most probable one, by the stable
                assignment of :func:`neardup_solr.results.pairs.one_to_one`.
            cut: a fixed smallest similarity instead of the model's cut.
            max_bucket: skip band keys held by more records than this.
            labels: pairs a person labeled, ``{frozenset((a, b)): same}``
                (as :func:`neardup_solr.results.labels.read_labels` reads them); they
                sharpen the model, which keeps them for :meth:`query`.
            progress: told of "colliding bands", then "verifying candidates";
                ``True`` draws a bar a step.
            warn: told, in a sentence, of band keys skipped and labeled
                pairs that are not candidates; without it each is a
                :class:`~neardup_solr.errors.NeardupWarning` (and a log record).
            threshold: the old name of ``cut``, kept for a release.
            as_text: compare records of fields as one text each (their
                values joined), as records of one text are.
            explain: give each pair its ``explanation``, in brief: the
                weights of its match weight (:meth:`explain` gives them whole).

        Returns:
            A :class:`~neardup_solr.modes.field_report.Linked` for records of fields, or a
            :class:`~neardup_solr.modes.text_report.Verified`: iterate it for the pairs
            (``a``, ``b``, ``distance``, ``similarity``, ``probability``),
            smaller id first; ``model`` and ``cut`` say how they were kept.
            Costs one terms request per band, about one request per 5,000
            candidates' records, and one to keep the model; memory holds
            every candidate pair (16 bytes) and the candidates' texts.

        Raises:
            NeardupError: ``one_to_one`` without ``link`` (no request is sent).
            SolrUnavailable, SolrFailure: Solr could not be reached or refused.
        """
        cut = _renamed(cut, threshold, "cut", "threshold")
        if one_to_one and not link:
            raise NeardupError("one partner each is a way of linking sources: it needs link=True",
                               hint="ask for the linked pairs as well")
        settings = self.settings
        if settings.fielded and not as_text:
            if cut is not None:
                raise NeardupError("a fixed similarity cut is for records of one text; records of fields are kept "
                                   "by their match probability",
                                   hint="leave the cut out, or compare the records as one text each")
            with told(progress) as tell:
                linked = field_pairs(self.solr, settings, link=link, max_bucket=max_bucket, labels=labels,
                                     progress=tell, warn=warn or _warning, explain=explain)
            if one_to_one:
                linked.pairs = one_partner_each(linked.pairs)
            linked.sourced = self._holds() == "sources"
            save_model(self.solr, linked.model, linked.keys)
            self._changed()
            return linked
        with told(progress) as tell:
            verified = lsh_pairs(self.solr, link=link, cut=cut, max_bucket=max_bucket,
                                 labels=labels, progress=tell, warn=warn or _warning, explain=explain)
        if one_to_one:
            verified.pairs = one_partner_each(verified.pairs)
        verified.sourced = self._holds() == "sources"
        save_model(self.solr, verified.model)
        self._changed()
        log.info("%r of %s", verified, self.solr.url)
        return verified

    def entities(self, *, link: bool = False, max_bucket: int | None = MAX_BUCKET,
                 labels: Mapping[frozenset[str], bool] | None = None, as_text: bool = False,
                 progress: Progress | bool | None = None, warn: Callable[[str], None] | None = None) -> Entities:
        """Each indexed record's entity: the clusters of the pairs
        :meth:`pairs` finds (split so that members are matches of each
        other, the matches that transitivity implies gained, no cap on an
        entity's size), every record in one, alone where it has no near
        duplicate. An entity of 500 records is 500 rows, not its 124,750
        pairs. The model is kept with the index as :meth:`pairs` keeps it.

        Returns:
            :class:`~neardup_solr.results.clusters.Entities`: ``id,
            cluster_id`` a row, every record once, a table (``to_pandas()``,
            ``to_arrow()``); its ``summary`` the report's, with the
            entities' estimates for records of fields (their pairs'
            precision and recall). Costs what :meth:`pairs` does, a weighing
            of the pairs of each cluster (large ones: a sample), and, for
            records of one text, a request per 1000 records for every id
            (records of fields: the report has read them).

        Raises:
            as :meth:`pairs`.
        """
        settings = self.settings
        if settings.fielded and not as_text:
            with told(progress) as tell:
                linked = field_pairs(self.solr, settings, link=link, max_bucket=max_bucket, labels=labels,
                                     progress=tell, warn=warn or _warning, entities=True)
            save_model(self.solr, linked.model, linked.keys)
            self._changed()
            return Entities(clusters_of_groups(linked.entities or []), linked.summary)
        ids = [doc[ID] for doc in self.solr.iter_docs([ID])]
        with told(progress) as tell:
            verified = lsh_pairs(self.solr, link=link, max_bucket=max_bucket, labels=labels, progress=tell,
                                 warn=warn or _warning)
        save_model(self.solr, verified.model)
        self._changed()
        return Entities(cluster_pairs(verified.pairs, ids), verified.summary)

    def shingle_pairs(self, *, max_dist: int = 2, per_record: int = SHINGLES.per_record,
                      progress: Progress | bool | None = None) -> PairStream:
        """The reference workflow's pairs: for each record, the
        ``per_record`` records sharing most word 3-shingles and its first
        word, kept within ``max_dist`` words of edit distance.

        Returns:
            The pairs as they are found (``similarity`` None), smaller id
            first; iterate it, or convert it once with ``to_pandas()`` or
            ``to_arrow()``. Costs one query per record (four in flight); memory holds a
            page of 1000 records.

        Raises:
            LeanIndex: the index was built with ``reference=False``.
            SolrUnavailable, SolrFailure: Solr could not be reached or refused.
        """
        return PairStream(stream_told(lambda tell: reference_pairs(self.solr, SHINGLES, per_record=per_record,
                                                                   max_dist=max_dist, progress=tell), progress))

    def minhash_pairs(self, *, max_dist: int = 2, per_record: int = MINHASH.per_record,
                      minhash_values: int = IndexSettings.minhash_values, progress: Progress | bool | None = None,
                      signatures: int | None = None) -> PairStream:
        """As :meth:`shingle_pairs`, with candidates sharing the first
        ``minhash_values`` MinHash values instead of shingles
        (``signatures``: their old name, kept for a release).

        Raises:
            TooFewSignatures: the index holds fewer values per record.
            LeanIndex, SolrUnavailable, SolrFailure: as :meth:`shingle_pairs`.
        """
        values = _renamed(minhash_values, signatures, "minhash_values", "signatures")
        return PairStream(stream_told(lambda tell: reference_pairs(self.solr, MINHASH, per_record=per_record,
                                                                   max_dist=max_dist, minhash_values=values,
                                                                   progress=tell), progress))

    def query(self, text: str | RecordLike, *, exclude: str | None = None, source: str = "", cut: float | None = None,
              limit: int | None = 10, threshold: float | None = None) -> Matches:
        """The indexed records most like ``text``, best first.

        Args:
            text: any text, indexed or not; or a record of fields (a dict of
                them, with or without an ``id``, or a
                :class:`~neardup_solr.records.record.Record`), looked up field by
                field with the model the last :meth:`pairs` kept, as a
                report compares it (:mod:`neardup_solr.modes.field_search`).
            exclude: an id left out (the text's own record; ``source/id``
                for a record of a source).
            source: only records of this source (default: every record).
            cut: smallest similarity (default: the matches of the
                model the last :meth:`pairs` kept, by similarity and number
                agreement; else similarity 0.7). A record of fields is
                then looked up by its text.
            limit: most matches returned (``None``: all found).
            threshold: the old name of ``cut``, kept for a release.

        Returns:
            Matches (``id``, ``similarity``, ``distance``, ``text``,
            ``probability``), the most similar first (a record of fields:
            the most probable), a list that converts with ``to_pandas()``,
            ``to_polars()`` and ``to_arrow()``. Costs one query, and one for
            the document frequencies of words not seen in the last minute (a
            record of fields: one more, of its values); the first query of a
            cut two more (settings and model).

        Raises:
            InputError: ``text`` has no letter or digit (the rule records
                keep), so nothing to compare; no request is sent.
            NeardupError: ``source`` breaks the source rule; no request is sent.
            SolrUnavailable, SolrFailure: Solr could not be reached or refused.
        """
        record = None if isinstance(text, str) else query_record(text)
        shown = text if record is None else record.text
        _checked_lookup(shown)
        checked_source(source)
        cut = _renamed(cut, threshold, "cut", "threshold")
        fields = self._field_search() if record is not None and record.fields and cut is None else None
        if fields is None and record is not None and record.fields and self.settings.fielded:
            checked_fields(record, self.settings.fields)  # a field search checks its own
        if fields is not None:
            return Matches(fields.find(record, exclude=exclude, within=source)[:limit])
        return Matches(self._search(cut).find(shown, exclude=exclude, within=source)[:limit])

    def query_each(self, queries: Sequence[tuple[str | RecordLike, str | None]], *, source: str = "",
                   limit: int | None = 10) -> list[Matches]:
        """:meth:`query` of each ``(text, exclude)`` of ``queries``, by the
        model's cut: the same answers, in order. Texts are looked up
        together, in two requests for them all while they share at most a
        thousand candidates (:meth:`~neardup_solr.modes.text_search.OnlineSearch.find_all`);
        records of fields one by one, as :meth:`query` does.

        Raises:
            InputError, NeardupError, SolrUnavailable, SolrFailure: as :meth:`query`
                (nothing is sent when one of ``queries`` is refused).
        """
        if not all(isinstance(text, str) for text, _ in queries):
            return [self.query(text, exclude=exclude, source=source, limit=limit) for text, exclude in queries]
        for text, _ in queries:
            _checked_lookup(text)
        checked_source(source)
        found = self._search(None).find_all([text for text, _ in queries], [exclude for _, exclude in queries],
                                            within=source)
        return [Matches(matches[:limit]) for matches in found]

    def refresh_words(self, texts: Iterable[str]) -> None:
        """Have the next lookups read the frequencies of the words of
        ``texts`` again, not the ones they keep for up to a minute: records
        of them were just written, by another client (a service's write, by
        a :class:`NearDuplicates` of its own). No request."""
        words = {word for text in texts for word in text_tokens(text)}
        for search in self._searches.values():
            if isinstance(search, OnlineSearch):
                search.forget(words)

    def explain(self, a: str, b: str) -> Explanation:
        """Why the pair of indexed records ``a`` and ``b`` has its
        probability: the steps of its match weight under the model the last
        :meth:`pairs` kept (:mod:`neardup_solr.evidence`): for records of
        fields the prior and each field's level, values and weight; for
        records of one text, their similarity and their numbers'
        agreement. The steps add up to the probability a report gives the
        pair (``None`` before any report: a fixed cut decides).

        Costs two or three requests (the records; for fields, their
        values' document frequencies; for texts, their words').

        Raises:
            NeardupError: ``a`` or ``b`` is not indexed.
            SolrUnavailable, SolrFailure: Solr could not be reached or refused.
        """
        docs = self._indexed([a, b], f"{ID},{TEXT},{RECORD_FIELDS}")
        for wanted in (a, b):
            if wanted not in docs:
                raise NeardupError(f"no record with id {wanted!r} in {self.solr.url}",
                                   hint="check the id (ids match exactly; a record of a source is source/id)")
        first, second = record_of(docs[a]), record_of(docs[b])
        fields = self._field_search()
        if fields is not None and first.fields and second.fields:
            _, levels, shares, _ = fields.scored(first, [docs[b]])
            names = [p.name for p in fields.settings.fields]
            values_a, values_b = dict(first.fields), dict(second.fields)

            def shown(values: Mapping[str, str]) -> list[str]:
                return [" / ".join(values.get(names[f], "") for f in unit) for unit in fields.model.field_units]

            return fields.model.explain(a, b, levels[0].tolist(), shares[0].tolist(), shown(values_a), shown(values_b),
                                        identical=fields.forms(first) == fields.forms(second))
        search = self._search(None)
        similarity, level = search.similarities(first.text, [second.text])
        return of_text(a, b, search.model, float(similarity[0]), int(level[0]))

    def record(self, record_id: str) -> Record:
        """The indexed record ``record_id`` (its key, as ``source/id``; of an
        index without sources, an id as written, ``ORD/17``, whose key is
        ``/ORD/17``): its key, text and fields (one request).

        Raises:
            NeardupError: no record has that id.
        """
        docs = self._indexed([record_id], f"{ID},{TEXT},{RECORD_FIELDS}")
        if record_id not in docs:
            raise NeardupError(f"no record with id {record_id!r} in {self.solr.url}",
                               hint="check the id (ids match exactly) and the index asked")
        return record_of(docs[record_id])

    def text(self, record_id: str) -> str:
        """The indexed text of ``record_id`` (as :meth:`record` finds it; one request).

        Raises:
            NeardupError: no record has that id.
        """
        return self.record(record_id).text

    def _indexed(self, record_ids: Sequence[str], fl: str) -> dict[str, dict]:
        """The Solr documents of those of ``record_ids`` indexed, by the id
        asked: each is its record's key, or an id of a record without a
        source (``ORD/17``, whose key is ``/ORD/17``: an index holds records
        of sources or records without, so the two never both name one).
        One request."""
        asked = {key: wanted for wanted in record_ids for key in (wanted, keyed("", wanted))}
        docs = self.solr.search(f"{{!terms f={ID} separator=$sep}}" + "\n".join(asked), sep="\n", fl=fl,
                                rows=len(asked)).docs
        found = {doc[ID]: doc for doc in docs}
        return {wanted: found.get(wanted) or found[keyed("", wanted)] for wanted in record_ids
                if wanted in found or keyed("", wanted) in found}

    def texts(self, ids: Sequence[str]) -> dict[str, str]:
        """The indexed text of each of ``ids`` that is indexed (the others
        are left out). Costs one request per 1000 ids."""
        return self.solr.texts(list(ids))

    def delete(self, ids: Sequence[str], soft_commit: bool = False) -> list[str]:
        """Delete the records ``ids`` and commit (softly with ``soft_commit``, as :meth:`add`).

        Returns:
            Those of ``ids`` that were indexed. Costs a lookup per 1000 ids,
            a delete and a commit, and two requests to see the index is not
            being replaced, after the wait :meth:`index` makes for a
            replaying Solr.

        Raises:
            IndexBeingReplaced: as :meth:`add`.
            SolrUnavailable, SolrFailure: as :meth:`index`.
        """
        self.solr.wait_until_replayed()
        before = writable(self.solr, self.heartbeats)
        present = set(self.solr.texts(list(ids)))
        self.solr.delete_ids(list(ids))
        self.solr.commit(soft=soft_commit)
        self._changed()
        kept_since(self.solr, before, f"{len(present)} records were deleted")
        return [i for i in ids if i in present]

    def clusters(self, pairs: Iterable[Pair] | None = None, *, singletons: bool = False,
                 progress: Progress | bool | None = None) -> Clusters:
        """Clusters of ``pairs``, largest first, each named by its smallest
        member's key (an id that stays put across runs and appends): their
        connected components, split so that members are matches of each
        other where the pairs carry probabilities
        (:func:`neardup_solr.results.clusters.cluster_pairs`). Without ``pairs``,
        those of the default mode's pairs, found as :meth:`pairs` finds them
        but read only: the model fitted on the way is not kept with the index
        (call :meth:`pairs` for that); for records of fields every pair of a
        component is weighed by the model
        (:func:`neardup_solr.modes.field_report.field_clusters`).

        Args:
            pairs: the pairs to cluster (default: the default mode's).
            singletons: every indexed record in a cluster, those without a
                near duplicate in one of their own (their ids read from Solr).
            progress: told of finding the pairs, as :meth:`pairs` tells it.

        Returns:
            Clusters, a list that converts with ``to_pandas()`` (``cluster_id,
            size, members``); ``membership()`` gives ``id, cluster_id``, one
            row a record. No request beyond those of finding the pairs, and
            with ``singletons`` one per 1000 records (memory holds every id).
        """
        ids = [doc[ID] for doc in self.solr.iter_docs([ID])] if singletons else None
        if pairs is None and self.settings.fielded:
            with told(progress) as tell:
                return clusters_of_groups(field_clusters(self.solr, self.settings, progress=tell), ids)
        if pairs is None:
            with told(progress) as tell:
                pairs = lsh_pairs(self.solr, progress=tell, warn=_warning)
        return cluster_pairs(pairs, ids)

    def _search(self, cut: float | None) -> OnlineSearch:
        if cut not in self._searches:
            self._searches[cut] = OnlineSearch(self.solr, cut)
        return self._searches[cut]

    def _field_search(self) -> FieldSearch | None:
        """The search of field records by the field model the last report
        kept, or ``None`` when there is none (the index is of texts, or was
        never reported). Two requests the first time, none after."""
        if "fields" not in self._searches:
            kept = load_field_model(self.solr)
            self._searches["fields"] = None if kept is None else \
                FieldSearch(self.solr, self.settings, kept[0], kept[1], self._search(None))
        return self._searches["fields"]

    def _changed(self) -> None:
        """Forget the searches: their settings, model or frequencies may be stale."""
        self._searches.clear()


def _checked_lookup(text: str) -> None:
    """Refuse to look up a text with no letter or digit (the rule records
    keep): nothing to compare.

    Raises:
        InputError: so it is.
    """
    if not has_letters_or_digits(text):
        raise InputError("the text has no letters or digits", hint="give some text to look up")


def _in_index_fields(records: Iterable[Record], settings: IndexSettings, source: str,
                     warn: Callable[[str], None]) -> Iterator[Record]:
    """``records``, those whose fields are named otherwise than the index's
    but as many, each of theirs the index has at its place, given the
    index's names by position (see :meth:`NearDuplicates.add`); ``warn``
    is told of each pairing once."""
    names = [p.name for p in settings.fields]
    known = set(names)
    pairings: dict[tuple[str, ...], dict[str, str] | None] = {}
    for record in records:
        own = tuple(name for name, _ in record.fields)
        if len(own) < 2 or known.issuperset(own):
            yield record
            continue
        if own not in pairings:
            fits = len(own) == len(names) and all(o == n for o, n in zip(own, names) if o in known)
            pairings[own] = dict(zip(own, names)) if fits else None
            if fits:
                paired = ", ".join(f"{o} as {n}" for o, n in zip(own, names) if o != n)
                warn(f"the fields {', '.join(own)} of {f'source {source!r}' if source else 'these records'} are "
                     f"not the index's ({', '.join(names)}): paired with them by position ({paired})")
        pairing = pairings[own]
        yield record if pairing is None else Record(record.id, record.text,
                                                    tuple((pairing[name], value) for name, value in record.fields))


class _Counted:
    """``records``, counting those taken from it (:meth:`of`: with their
    length, when they have one, for progress)."""

    def __init__(self, records: Iterable[Record], each: Callable[[Record], None]):
        self.records = records
        self.each = each
        self.count = 0

    @classmethod
    def of(cls, records: Iterable[Record], each: Callable[[Record], None] = lambda record: None) -> _Counted:
        """``records`` counted, ``each`` called with every one taken."""
        return (_CountedSized if isinstance(records, Sized) else cls)(records, each)

    def __iter__(self) -> Iterator[Record]:
        for record in self.records:
            self.count += 1
            self.each(record)
            yield record


class _CountedSized(_Counted):
    def __len__(self) -> int:
        return len(self.records)


def _warning(message: str) -> None:
    """What a call skipped, told without a ``warn=``: a warning and a log record."""
    log.warning(message)
    warnings.warn(message, NeardupWarning, stacklevel=4)


def _renamed(value, old, name: str, old_name: str):
    """A parameter's value, or its old name's when that was given (each old
    name is kept for a release, and warns with its new name)."""
    if old is None:
        return value
    warnings.warn(f"{old_name}= is deprecated: call it {name}=", DeprecationWarning, stacklevel=3)
    return old
