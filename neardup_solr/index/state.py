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
  writes that would be lost with the old index are refused meanwhile;
- ``neardup.previous``: the served index's own properties, as JSON, while a
  new build's are saved beside them. A standalone Solr's cores made from
  one configset share one overlay file, and a core reads it again when it
  is reloaded or Solr restarts: a Solr that stops between a new build's
  save and its swap would otherwise serve the old records under the new
  build's settings. What a core has is its own when ``neardup.build`` names
  the folder the core lives in (a build's core is made in a folder of its
  name, and a swap swaps names, not folders), else ``neardup.previous`` is
  (:func:`index_properties`); the next write puts that back
  (:func:`set_properties`).

Each read or write here is one request to Solr, two when a build's
properties stand beside the served index's (a read asks the core which
folder it lives in).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, fields as dataclass_fields
from typing import Any

from ..errors import OldIndex
from ..lsh.bands import Banding
from ..fields.kinds import FieldProfile
from .solr import Solr

PREFIX = "neardup."
# The documents' layout: "2" where band keys are points (numbers); an index
# built before keeps none, and its band keys (terms) cannot be read here.
LAYOUT_PROPERTY = PREFIX + "layout"
LAYOUT = "2"
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
        """The user properties that keep these settings, and the layout they index into."""
        kept = {PREFIX + f.name: str(getattr(self, f.name)) for f in dataclass_fields(self) if f.name != "fields"}
        kept[PREFIX + "fields"] = json.dumps([p.to_dict() for p in self.fields], separators=(",", ":"))
        kept[LAYOUT_PROPERTY] = LAYOUT
        return kept

    def save(self, solr: Solr) -> None:
        """Keep these settings, under a new generation (a reader reloads them)."""
        set_properties(solr, {**self.stored(), GENERATION_PROPERTY: new_generation()})

    @classmethod
    def load(cls, solr: Solr) -> IndexSettings:
        """The settings ``solr``'s index was built with (the defaults for
        any it does not keep)."""
        return cls.of(index_properties(solr))

    @classmethod
    def of(cls, stored: dict[str, str]) -> IndexSettings:
        """The settings in an index's user properties ``stored`` (an empty
        value is one the index does not keep).

        Raises:
            OldIndex: the properties are of an index built in a layout this
                version cannot read.
        """
        stored = {key: value for key, value in stored.items() if value}
        if PREFIX + "bands" in stored and stored.get(LAYOUT_PROPERTY) != LAYOUT:
            raise OldIndex()
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
    stored = index_properties(solr)
    return IndexSettings.of(stored) if stored.get(BUILT_PROPERTY) else None


MODEL_PROPERTY = PREFIX + "model"
GENERATION_PROPERTY = PREFIX + "generation"
BUILD_PROPERTY = PREFIX + "build"
REPLACING_PROPERTY = PREFIX + "replacing"
PREVIOUS_PROPERTY = PREFIX + "previous"


def index_properties(solr: Solr) -> dict[str, str]:
    """The user properties of the records ``solr`` serves: those its core
    has, or, when a new build's were saved beside them and the core is not
    that build's (``neardup.previous``, see the module's docstring), the
    served index's own, kept with them."""
    return _own(solr, solr.user_properties())


def _own(solr: Solr, stored: dict[str, str]) -> dict[str, str]:
    previous = stored.get(PREVIOUS_PROPERTY)
    if not previous or solr.instance() == stored.get(BUILD_PROPERTY):
        return stored
    return json.loads(previous)


def set_properties(solr: Solr, values: dict[str, str]) -> None:
    """Set ``values`` among the index's user properties; the properties a
    new build saved beside the served index's, if its core has them, are
    put back to the served index's own first (in the same request)."""
    stored = solr.user_properties()
    if stored.get(PREVIOUS_PROPERTY):
        values = restoring(_own(solr, stored), stored) | values
    solr.set_user_properties(values)


def restoring(own: dict[str, str], written: dict[str, str]) -> dict[str, str]:
    """What sets an index's user properties back to ``own`` over
    ``written`` (a build's): each of ours ``written`` has and ``own`` does
    not emptied (an empty value is one the index does not keep), and no
    build's beside them."""
    emptied = {key: "" for key in written if key.startswith(PREFIX) and key not in own}
    return emptied | own | {PREVIOUS_PROPERTY: ""}


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
    stored = index_properties(solr)
    return Stamp(stored.get(GENERATION_PROPERTY, ""), stored.get(BUILD_PROPERTY, ""),
                 stored.get(REPLACING_PROPERTY, ""))


def save_built(solr: Solr, settings: IndexSettings, build: str, model: str = "",
               served: dict[str, str] | None = None) -> dict[str, str]:
    """Keep what a new build is with its records: its settings, its build
    ``build``, a new generation, the model ``model`` (as :func:`keep_model`
    writes it; "": none yet) and no replacement marked; with ``served``,
    the properties of the index it is to replace, which share its overlay
    (``neardup.previous``), kept beside them until the swap
    (:func:`forget_previous`). Returns what it wrote. One request, and one
    reload of the core."""
    written = {**settings.stored(), BUILD_PROPERTY: build, GENERATION_PROPERTY: new_generation(),
               REPLACING_PROPERTY: "", MODEL_PROPERTY: model,
               PREVIOUS_PROPERTY: "" if served is None else json.dumps(served, separators=(",", ":"))}
    solr.set_user_properties(written)
    return written


def forget_previous(solr: Solr, written: dict[str, str]) -> None:
    """After the swap: ``written`` (what :func:`save_built` wrote) kept again
    without the replaced index's properties, so nothing another write put
    in the shared overlay meanwhile stays. One request, and one reload."""
    solr.set_user_properties(written | {PREVIOUS_PROPERTY: ""})


def mark_replacing(solr: Solr, building: str) -> None:
    """Mark the index as being replaced by a build in ``building`` ("": no
    longer)."""
    set_properties(solr, {REPLACING_PROPERTY: building})


def keep_model(solr: Solr, stored: dict | None) -> None:
    """Keep a match model with the index as the dict it writes itself to,
    for online queries (``None`` forgets it: the records it was fitted to
    are gone), under a new generation. The model types read and write
    themselves (:mod:`neardup_solr.match.stored`)."""
    text = "" if stored is None else json.dumps(stored, separators=(",", ":"))
    set_properties(solr, {MODEL_PROPERTY: text, GENERATION_PROPERTY: new_generation()})


def stored_model(solr: Solr) -> dict | None:
    """The dict of the match model kept with the index, if any."""
    stored = index_properties(solr).get(MODEL_PROPERTY)
    if not stored:
        return None
    try:
        found = json.loads(stored)
    except ValueError:
        return None
    return found if isinstance(found, dict) else None
