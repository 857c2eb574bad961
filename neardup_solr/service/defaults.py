"""Where the service listens and what it takes, unless told otherwise: a
module of its own, with no import, so that the command line offers them
without loading the web framework."""

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8080
# The most a POST /records body may hold: a record is at most 1 MiB of text
# (MAX_LINE_BYTES), which JSON's escapes can make 3 MiB; a larger body is
# refused (413) without being held (docs/scale.md).
MAX_BODY = 4 * 1024 * 1024
