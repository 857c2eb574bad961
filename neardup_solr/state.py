"""What an index keeps about itself: how it was built, its match model.

Both live in the Solr core's (or collection's) user properties, beside the
records, so every later run, query and service process agrees with the run
that built the index:

- ``neardup.minhash_values``, ``neardup.bands``, ``neardup.band_rows``,
  ``neardup.lsh_shingles``, ``neardup.reference``: the
  :class:`IndexSettings`, written when all records of a new index are
  committed (so an index holding them was built: :func:`built_settings`);
- ``neardup.model``: the match model the last report fitted, as JSON
  (empty when the records it was fitted to are gone).

Each read or write here is one request to Solr.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from .bands import Banding
from .model import MatchModel
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
    default mode.
    """

    minhash_values: int = 20
    bands: int = 42
    band_rows: int = 3
    lsh_shingles: str = "chars"
    reference: bool = True

    def __post_init__(self) -> None:
        if self.lsh_shingles not in LSH_SHINGLES:
            raise ValueError(f"lsh_shingles must be one of {LSH_SHINGLES}")

    @property
    def banding(self) -> Banding:
        return Banding(self.bands, self.band_rows)

    def save(self, solr: Solr) -> None:
        solr.set_user_properties({PREFIX + k: str(v) for k, v in asdict(self).items()})

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
        defaults = asdict(cls())
        return cls(**{k: _parse(stored[PREFIX + k], v) for k, v in defaults.items() if PREFIX + k in stored})


# Kept by every build (``IndexSettings.save``), and by nothing else.
BUILT_PROPERTY = PREFIX + "bands"


def built_settings(solr: Solr) -> IndexSettings | None:
    """The settings of ``solr``'s index, or ``None`` when it was never built
    (an empty core the local Solr made, or one of another tool)."""
    stored = solr.user_properties()
    return IndexSettings.of(stored) if BUILT_PROPERTY in stored else None


MODEL_PROPERTY = PREFIX + "model"


def save_model(solr: Solr, model: MatchModel | None) -> None:
    """Keep the match model with the index, for online queries (``None``
    forgets it: the records it was fitted to are gone)."""
    stored = "" if model is None else json.dumps(model.to_dict(), separators=(",", ":"))
    solr.set_user_properties({MODEL_PROPERTY: stored})


def load_model(solr: Solr) -> MatchModel | None:
    """The match model the last report kept with the index, if any (a model
    of another version's shape counts as none)."""
    stored = solr.user_properties().get(MODEL_PROPERTY)
    if not stored:
        return None
    try:
        return MatchModel.from_dict(json.loads(stored))
    except (ValueError, KeyError, TypeError):
        return None
