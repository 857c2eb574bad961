"""Errors the command line reports as one line with a hint, never a traceback."""

from __future__ import annotations


class NeardupError(Exception):
    """A failure the user can act on.

    ``exit_code`` is the process exit status the command line uses for it;
    the codes are listed in the README ("When things go wrong").
    """

    exit_code = 1

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message} (hint: {self.hint})"


class InputError(NeardupError):
    """A file the user gave cannot be used as it is."""

    exit_code = 4


class SolrUnavailable(NeardupError):
    """Solr could not be reached at all."""

    exit_code = 3


class SolrFailure(NeardupError):
    """Solr answered, but with an error."""

    exit_code = 5


class MissingField(InputError):
    """A table's header (or a layout) lacks a field it must have: the id
    (``role`` "id") or a named text field (``role`` "text"). No record of
    the file can be read."""

    def __init__(self, message: str, field: str, role: str):
        super().__init__(message)
        self.field = field
        self.role = role
