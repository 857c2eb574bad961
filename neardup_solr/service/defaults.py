"""Where the service listens and what it takes, unless told otherwise: a
module of its own, with no import, so that the command line offers them
without loading the web framework."""

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8080
# The most a POST /records body may hold unless told otherwise: a record is at most
# 1 MiB of text (MAX_LINE_BYTES, as a line of a records file), which JSON's
# escapes can make 3 MiB (an emoji, 4 bytes, sent as two \uXXXX, 12); a
# batch of ordinary records (about 100 bytes each) fits 40,000. Reading stops
# at the cap: a larger body is refused (413) without being held, as a large
# text held the service for minutes before there was a cap this low (docs/scale.md).
MAX_BODY = 4 * 1024 * 1024
