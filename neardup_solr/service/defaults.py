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
# Seconds a client may leave a request half sent: its line and headers not
# all there since it connected (or since its last answer), or its body
# paused. Then it gets 408 and the connection is closed, so clients that
# stall (or a slow-sending attack) cannot hold sockets and tasks forever.
CLIENT_TIMEOUT = 30.0
# Seconds a worker of `--workers` may leave its supervisor's health check
# unanswered before it is taken for hung, killed and started anew. A worker
# starting on a loaded machine is a fresh interpreter importing the web
# framework and the package: uvicorn's own 5 had each one killed before it
# served, and the service never answered (docs/service.md).
WORKER_PATIENCE = 60
