"""Errors the command line reports as one line with a hint, never a traceback."""

from __future__ import annotations


class NeardupError(Exception):
    """A failure the user can act on.

    ``exit_code`` is the process exit status the command line uses for it;
    the codes are listed in docs/troubleshooting.md. The hint
    is in the library's words; when the remedy is a setting a caller chooses
    (a port, the strict check, the ZooKeeper address), ``remedy`` names it
    and ``context`` holds the values a caller's own wording may need, so a
    command line can say which of its options to change.
    """

    exit_code = 1

    def __init__(self, message: str, hint: str | None = None, *, remedy: str | None = None, **context: object):
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.remedy = remedy
        self.context = context

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message} (hint: {self.hint})"


class NeardupWarning(UserWarning):
    """Something a call skipped or could not do and went on without (band
    keys held by too many records, labeled pairs that are not candidates),
    warned of when the call was given no ``warn=`` to tell instead."""


class InputError(NeardupError):
    """A file the user gave cannot be used as it is."""

    exit_code = 4


class SolrUnavailable(NeardupError):
    """Solr could not be reached at all."""

    exit_code = 3


class SolrFailure(NeardupError):
    """Solr answered, but with an error."""

    exit_code = 5


class MissingCore(SolrFailure):
    """The Solr node at ``node`` holds no core or collection ``name``;
    ``found`` are those it holds (cores, or on SolrCloud collections)."""

    # Names a message lists at most: a node may hold hundreds.
    LISTED = 10

    def __init__(self, name: str, node: str, found: list[str]):
        listed = ", ".join(found[:self.LISTED]) + (f" and {len(found) - self.LISTED} more"
                                                   if len(found) > self.LISTED else "")
        if found:
            super().__init__(f"Solr at {node} has no core or collection {name!r}",
                             hint=f"it holds {listed}; name one of them in the URL, or make {name!r} first",
                             remedy="core_name", held=listed)
        else:
            super().__init__(f"Solr at {node} has no core or collection {name!r}",
                             hint=f"it holds none yet; make {name!r} first")
        self.name = name
        self.node = node
        self.found = found


class MissingField(InputError):
    """A table's header (or a layout) lacks a field it must have: the id
    (``role`` "id") or a named text field (``role`` "text"). No record of
    the file can be read."""

    def __init__(self, message: str, field: str, role: str, separator: str | None = None):
        super().__init__(message)
        self.field = field
        self.role = role
        # The character the header seems separated by when it read as one
        # column (a semicolon-separated "CSV"), else None.
        self.separator = separator


class TooFewSignatures(NeardupError):
    """The minhash mode was asked to compare more MinHash values than the
    index holds for a record (``found`` of the ``asked``)."""

    def __init__(self, record_id: str, found: int, asked: int):
        super().__init__(f"record {record_id} has {found} MinHash values, {asked} were asked for",
                         hint=f"index again with {asked} MinHash values per record")
        self.record_id = record_id
        self.found = found
        self.asked = asked


class LeanIndex(NeardupError):
    """A reference mode (``mode``: shingles, minhash) was asked of an index
    built without the reference modes' fields."""

    def __init__(self, mode: str):
        super().__init__(f"the index has no fields for the {mode} mode (it was built without the reference fields)",
                         hint="index again with the reference fields")
        self.mode = mode


class OldIndex(NeardupError):
    """The index was built by an earlier version of neardup-solr, whose band
    keys this version cannot read (they were text, they are now numbers).
    Exit code 1: index the records again."""

    def __init__(self) -> None:
        super().__init__("the index was built by an earlier version of neardup-solr, whose band keys this one "
                         "cannot read", hint="index the records again into a new index, or replace this one")


class MissingExtra(NeardupError):
    """A feature needs an optional package (``package``) that is not
    installed; the hint names the extra (``extra``) that installs it."""

    exit_code = 7

    def __init__(self, feature: str, package: str, extra: str):
        super().__init__(f"{feature} needs {package}, which is not installed",
                         hint=f"pip install 'neardup-solr[{extra}]'")
        self.feature = feature
        self.package = package
        self.extra = extra


class IndexBeingReplaced(NeardupError):
    """The index is being replaced (a new build of it is under way beside
    it, ``building``): a write now would be lost with the old index, and a
    second replacement would undo the first. Exit code 1: run the command
    again when the replacement is done."""

    def __init__(self, message: str, building: str, hint: str = "try again when it is done"):
        super().__init__(message, hint=hint)
        self.building = building
