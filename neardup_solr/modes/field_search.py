"""Online search of field records: the near duplicates of one record, by the report's model.

A record of fields is looked up as a report compares it
(``fields.matching``): its candidates are the records sharing one of its LSH
band keys or one of the keys the last report used (``fields.keys``: all of a
key's forms, asked of ``schema.FIELD_VALUES``), each of their fields is
compared with its own (``fields.comparisons``), and the field model the report
kept with the index gives each its probability (``fields.model``), an
agreement on a value weighed by how rare the value is in the index (its
document frequency). Those of probability 1/2 or more are its matches,
with how many of their fields differ as their distance, as in a
report's pairs.

Before any report of the index there is no field model: the record is
then looked up by its text (``text_search.OnlineSearch``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..fields.comparisons import Column, compare, joint, swaps
from ..fields.keys import Key, record_key_term, value_term
from ..errors import InputError
from ..fields.kinds import FieldProfile, normal
from ..fields.matching import differing, identical
from ..fields.model import FieldModel
from ..index.schema import BAND_KEYS, FIELD_VALUES, ID, RECORD_FIELDS, TEXT
from ..index.solr import Solr, term
from ..index.state import IndexSettings
from ..match.candidates import LSH, source_filters
from ..records.record import Record, id_key
from ..text.repair import repair
from .text_search import Match, OnlineSearch

# A record sharing all of a key's forms ranks above any that shares band
# keys only: the query's clauses score a constant each.
KEY_SCORE = 1000


class FieldSearch:
    """Near duplicates of one field record, in two Solr requests: its
    candidates, and the document frequencies of its values.

    Args:
        solr: the index.
        settings: its settings (fields and banding).
        model, keys: the field model and keys the last report kept.
        text: the text search whose banding finds the record's band keys.
    """

    def __init__(self, solr: Solr, settings: IndexSettings, model: FieldModel, keys: Sequence[Key],
                 text: OnlineSearch, per_record: int = LSH.per_record):
        self.solr, self.settings, self.model, self.keys = solr, settings, model, list(keys)
        self.text, self.per_record = text, per_record

    def forms(self, record: Record) -> list[str]:
        """Each field's normal form in ``record`` ("" where it lacks it)."""
        values = dict(record.fields)
        return [normal(p.kind, values.get(p.name, "")) for p in self.settings.fields]

    def query(self, record: Record, forms: Sequence[str], exclude: str | None, within: str) -> tuple[str, list[str]]:
        """The query of ``record``'s candidates (its fields' normal forms
        ``forms``) and its filters."""
        clauses = [f"{term(BAND_KEYS, k)}^=1" for k in self.text.builder.band_keys([repair(record.text)])[0]]
        for key in self.keys:
            terms = [record_key_term(i, self.settings.fields[i], forms[i]) if forms[i] else "" for i in key.fields]
            if all(terms):
                clauses.append("(" + " AND ".join(term(FIELD_VALUES, t) for t in terms) + f")^={KEY_SCORE}")
        query = " OR ".join(clauses)
        if exclude:
            query = f"({query}) -{term(ID, exclude)}"
        return query, source_filters(within)

    def candidates(self, record: Record, forms: Sequence[str], exclude: str | None = None,
                   within: str = "") -> list[dict[str, Any]]:
        """The records sharing a band key or a key with ``record`` (its
        fields' normal forms ``forms``; best ``per_record`` by what they
        share), with their text and fields. One request."""
        query, filters = self.query(record, forms, exclude, within)
        return self.solr.search(query, fq=filters, sort="score desc,id asc", rows=self.per_record,
                                fl=f"{ID},{TEXT},{RECORD_FIELDS}").docs

    def scored(self, record: Record, others: Sequence[Mapping[str, Any]], forms: Sequence[str] | None = None
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """How ``record`` (its fields' normal forms ``forms``, when made
        already) compares with each of ``others`` (Solr documents with
        their fields): the levels of each field (others x fields) and of
        each of the model's units (fields compared together joined), the
        share of the index holding each unit's values of ``record``, and
        each one's probability. Costs one request (the values' document
        frequencies)."""
        forms = self.forms(record) if forms is None else forms
        theirs = [json.loads(o.get(RECORD_FIELDS) or "{}") for o in others]
        columns = [Column.of_forms(found.kind, [form, *(normal(found.kind, values.get(found.name) or "")
                                                        for values in theirs)])
                   for found, form in zip(self.settings.fields, forms)]
        mine = np.zeros(len(others), np.int64)
        theirs_at = np.arange(1, len(others) + 1, dtype=np.int64)
        field_levels = swaps(np.stack([compare(c, mine, theirs_at) for c in columns], axis=1), columns,
                             [p.role for p in self.settings.fields], mine, theirs_at) if others else \
            np.zeros((0, len(columns)), np.int8)
        units = self.model.field_units
        levels = joint(field_levels, units, [p.kind for p in self.settings.fields])
        mine_shares = self.shares(forms)  # a unit takes the rarest of its fields' shares, as the report does
        shares = np.tile([min(mine_shares[f] for f in unit) for unit in units], (len(others), 1))
        unknown = self.unknown(record)
        same = identical(columns, mine, theirs_at) if not unknown and others else None
        return field_levels, levels, shares, self.model.probabilities(levels, shares, unknown, same)

    def unknown(self, record: Record) -> list[int]:
        """The model's units none of whose fields ``record`` gives at all (a
        lookup by some fields): they weigh nothing, where a field a record
        gives empty weighs what an empty field is measured to."""
        given = {name for name, _ in record.fields}
        names = [p.name for p in self.settings.fields]
        return [at for at, unit in enumerate(self.model.field_units) if not any(names[f] in given for f in unit)]

    def shares(self, forms: Sequence[str]) -> np.ndarray:
        """Each field's share of the records filling it that hold the value
        of normal form ``forms[i]``, from the index's document frequencies
        (1 where the value is missing). One request."""
        wanted = {i: value_term(i, f) for i, f in enumerate(forms) if f and "," not in value_term(i, f)}
        out = np.ones(len(forms))
        if not wanted:
            return out
        documents, counts = self.solr.term_counts(FIELD_VALUES, list(wanted.values()))
        for i, t in wanted.items():
            # Counted against the records filling the field when the model was fitted, as the report counted.
            filled = self.model.filled[i] if i < len(self.model.filled) else self.settings.fields[i].filled * documents
            out[i] = min(max(counts.get(t, 1), 1) / max(filled, 1.0), 1.0)
        return out

    def find(self, record: Record, exclude: str | None = None, within: str = "") -> list[Match]:
        """The matches of ``record`` (probability 1/2 or more), most probable
        first (ties by id); ``exclude`` is an id left out, ``within`` a
        source the matches must be of; fields it does not give weigh
        nothing (:meth:`unknown`). Costs two Solr requests.

        Raises:
            InputError: ``record`` names a field the index does not have.
        """
        checked_fields(record, self.settings.fields)
        forms = self.forms(record)
        found = self.candidates(record, forms, exclude, within)
        if not found:
            return []
        field_levels, _, _, probabilities = self.scored(record, found, forms)
        matches = [Match(doc[ID], None, int(d), doc[TEXT], float(p))
                   for doc, d, p in zip(found, differing(field_levels).tolist(), probabilities.tolist()) if p >= 0.5]
        return sorted(matches, key=lambda m: (-m.probability, id_key(m.id)))


def checked_fields(record: Record, profiles: Sequence[FieldProfile]) -> None:
    """Refuse a record naming a field the index does not have (a lookup
    would say nothing of it, and answer as if it matched).

    Raises:
        InputError: naming the field and listing those the index has.
    """
    known = [p.name for p in profiles]
    strange = [name for name, _ in record.fields if name not in known]
    if strange:
        raise InputError(f"the index has no field {strange[0]!r}: its fields are {', '.join(known)}",
                         hint="name the fields as the index does (as in the table it was indexed from)")


__all__ = ["FieldSearch", "checked_fields"]
