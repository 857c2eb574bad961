"""What an index keeps about itself: how it was built, its match model.

Both live in the Solr core's (or collection's) user properties, beside the
records, so every later run, query and service process agrees with the run
that built the index:

- ``neardup.minhash_values``, ``neardup.bands``, ``neardup.band_rows``,
  ``neardup.lsh_shingles``, ``neardup.reference``, ``neardup.fields``: the
  :class:`IndexSettings`, written when all records of a new index are
  committed (so an index holding them was built: :func:`built_settings`);
- ``neardup.model``: the match model the last report fitted, as JSON
  (empty when the records it was fitted to are gone);
- ``neardup.generation``: a new number each time the settings or the model
  change (a build, a report), so a reader that keeps them (a service's
  worker) sees in one request whether what it keeps is the index's
  (:func:`stamp`), and ``neardup.build``, the build the records are of (a
  new value at each replacement), so a writer sees whether the index was
  replaced under its write;
- ``neardup.replacing``: set on the served index while a replacement builds
  its successor (the name of the core or collection it builds in), so
  writes that would be lost with the old index are refused meanwhile.

Each read or write here is one request to Solr.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, fields as dataclass_fields
from typing import Any

from ..lsh.bands import Banding
from ..fields.kinds import FieldProfile
from .solr import Solr

PREFIX = "neardup."
LSH_SHINGLES = ("chars", "words")


def _parse(stored: str, default: Any) -> Any:
    if isinstance(default, bool):
        return stored == "True"
    return type(default)(stored)


@dataclass(frozen=True)
class IndexSettings:
    """How records were indexed; kept in the index so later runs agree.

    ``minhash_values``: MinHash values of word shingles a record keeps for the
    reference's minhash mode (its 20). ``bands`` x ``band_rows``: LSH banding of a second MinHash,
    over character 3-grams of the repaired text (``lsh_shingles="chars"``,
    for short records) or its word 3-shingles (``"words"``, for documents).
    42 x 3 makes pairs of Jaccard 0.5 candidates with probability 0.996 and
    pairs of 0.05 with 0.005 (see ``neardup tune``). ``reference=False``
    leaves out the reference workflow's fields (first word, word count, word
    shingles and their MinHash), for large collections that need only the
    default mode. ``fields``: the profiles of the records' fields
    (``fields.kinds``), read off a sample when the records have two or more
    fields each (a table's columns); empty for records of one text, which
    are compared as texts. ``chosen``: whether the banding was chosen from
    the records (else it was given, and stays as given).
    """

    minhash_values: int = 20
    bands: int = 42
    band_rows: int = 3
    lsh_shingles: str = "chars"
    reference: bool = True
    fields: tuple[FieldProfile, ...] = ()
    chosen: bool = True

    def __post_init__(self) -> None:
        if self.lsh_shingles not in LSH_SHINGLES:
            raise ValueError(f"lsh_shingles must be one of {LSH_SHINGLES}")

    @property
    def banding(self) -> Banding:
        return Banding(self.bands, self.band_rows)

    @property
    def fielded(self) -> bool:
        """Whether records are compared field by field (two or more fields)."""
        return len(self.fields) >= 2

    def stored(self) -> dict[str, str]:
        """The user properties that keep these settings."""
        kept = {PREFIX + f.name: str(getattr(self, f.name)) for f in dataclass_fields(self) if f.name != "fields"}
        kept[PREFIX + "fields"] = json.dumps([p.to_dict() for p in self.fields], separators=(",", ":"))
        return kept

    def save(self, solr: Solr) -> None:
        """Keep these settings, under a new generation (a reader reloads them)."""
        solr.set_user_properties({**self.stored(), GENERATION_PROPERTY: new_generation()})

    @classmethod
    def load(cls, solr: Solr) -> IndexSettings:
        """The settings ``solr``'s index was built with (the defaults for
        any it does not keep)."""
        return cls.of(solr.user_properties())

    @classmethod
    def of(cls, stored: dict[str, str]) -> IndexSettings:
        """The settings in an index's user properties ``stored``."""
        stored = dict(stored)
        # What indexes kept before two fields were renamed.
        for old, new in (("rows", "band_rows"), ("signatures", "minhash_values")):
            if PREFIX + old in stored:
                stored.setdefault(PREFIX + new, stored[PREFIX + old])
        defaults = {f.name: getattr(cls(), f.name) for f in dataclass_fields(cls) if f.name != "fields"}
        found = {k: _parse(stored[PREFIX + k], v) for k, v in defaults.items() if PREFIX + k in stored}
        if stored.get(PREFIX + "fields"):
            found["fields"] = tuple(FieldProfile.from_dict(p) for p in json.loads(stored[PREFIX + "fields"]))
        return cls(**found)


# Kept by every build (``IndexSettings.save``), and by nothing else.
BUILT_PROPERTY = PREFIX + "bands"


def built_settings(solr: Solr) -> IndexSettings | None:
    """The settings of ``solr``'s index, or ``None`` when it was never built
    (an empty core the local Solr made, or one of another tool)."""
    stored = solr.user_properties()
    return IndexSettings.of(stored) if BUILT_PROPERTY in stored else None


MODEL_PROPERTY = PREFIX + "model"
GENERATION_PROPERTY = PREFIX + "generation"
BUILD_PROPERTY = PREFIX + "build"
REPLACING_PROPERTY = PREFIX + "replacing"


def new_generation() -> str:
    """A generation no earlier change of an index had: the time in nanoseconds."""
    return str(time.time_ns())


@dataclass(frozen=True)
class Stamp:
    """What a reader or a writer checks of an index (one request,
    :func:`stamp`): its ``generation`` (settings and model), its ``build``
    (the records' replacement) and the replacement building its successor,
    if one is marked (``replacing``). "" for what an index does not keep
    (one built before these were kept)."""

    generation: str = ""
    build: str = ""
    replacing: str = ""


def stamp(solr: Solr) -> Stamp:
    """The index's :class:`Stamp`."""
    stored = solr.user_properties()
    return Stamp(stored.get(GENERATION_PROPERTY, ""), stored.get(BUILD_PROPERTY, ""),
                 stored.get(REPLACING_PROPERTY, ""))


def save_built(solr: Solr, settings: IndexSettings, build: str) -> None:
    """Keep what a new build is with its records: its settings, its build
    ``build``, a new generation, no model yet and no replacement marked
    (one request, and one reload of the core)."""
    solr.set_user_properties({**settings.stored(),
                              BUILD_PROPERTY: build, GENERATION_PROPERTY: new_generation(),
                              REPLACING_PROPERTY: "", MODEL_PROPERTY: ""})


def mark_replacing(solr: Solr, building: str) -> None:
    """Mark the index as being replaced by a build in ``building`` ("": no
    longer)."""
    solr.set_user_properties({REPLACING_PROPERTY: building})


def keep_model(solr: Solr, stored: dict | None) -> None:
    """Keep a match model with the index as the dict it writes itself to,
    for online queries (``None`` forgets it: the records it was fitted to
    are gone), under a new generation. The model types read and write
    themselves (:mod:`neardup_solr.match.stored`)."""
    text = "" if stored is None else json.dumps(stored, separators=(",", ":"))
    solr.set_user_properties({MODEL_PROPERTY: text, GENERATION_PROPERTY: new_generation()})


def stored_model(solr: Solr) -> dict | None:
    """The dict of the match model kept with the index, if any."""
    stored = solr.user_properties().get(MODEL_PROPERTY)
    if not stored:
        return None
    try:
        found = json.loads(stored)
    except ValueError:
        return None
    return found if isinstance(found, dict) else None
