"""The service: the public API over HTTP.

- ``app``: the FastAPI application (``neardup serve``): records, queries,
  labels, with host, token and size guards;
- ``review``: the review page, rendered on the server.
"""
