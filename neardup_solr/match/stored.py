"""The match models kept with the index: each model type to and from the
dict the index's state holds (:mod:`neardup_solr.index.state`), so a query,
a service worker or a later run scores pairs as the report that fitted it.

Each call is one request to Solr.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..fields.keys import Key
from ..index.solr import Solr
from ..index.state import keep_model, stored_model
from ..fields.model import FieldModel
from .text_model import MatchModel


def save_model(solr: Solr, model: MatchModel | FieldModel | None, keys: Sequence[Key] = ()) -> None:
    """Keep the match model with the index, for online queries (``None``
    forgets it: the records it was fitted to are gone), under a new
    generation; a model of field records with the ``keys`` that made its
    candidates."""
    if model is None:
        keep_model(solr, None)
    elif isinstance(model, FieldModel):
        keep_model(solr, {"fields": model.to_dict(), "keys": [list(k.fields) for k in keys]})
    else:
        keep_model(solr, model.to_dict())


def load_model(solr: Solr) -> MatchModel | None:
    """The match model of texts the last report kept with the index, if any
    (a model of another version's shape, or of field records, counts as
    none)."""
    stored = stored_model(solr)
    if stored is None or "fields" in stored:
        return None
    try:
        return MatchModel.from_dict(stored)
    except (ValueError, KeyError, TypeError):
        return None


def load_field_model(solr: Solr) -> tuple[FieldModel, list[Key]] | None:
    """The model of field records the last report kept with the index, and
    the keys that made its candidates; ``None`` when there is none."""
    stored = stored_model(solr)
    if stored is None or "fields" not in stored:
        return None
    try:
        return FieldModel.from_dict(stored["fields"]), [Key(tuple(int(f) for f in k)) for k in stored["keys"]]
    except (ValueError, KeyError, TypeError):
        return None
