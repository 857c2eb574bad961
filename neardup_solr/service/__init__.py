"""The service: the public API over HTTP (``neardup serve``).

- ``app``: the FastAPI application made and served (uvicorn; several
  workers by a factory), its error handlers; the map of the routes;
- ``record_routes``, ``label_routes``, ``page_routes``: the three routers;
- ``shared``: what every route is handed (``ServiceState``);
- ``guards``: bind address, host names, bearer token, the page's key and
  same-origin checks; ``bodies``: capped bodies, records and labels
  checked; ``models``: the answers and errors as OpenAPI shows them;
- ``review``: the review page, rendered on the server;
- ``timely``: uvicorn's protocol with a limit on late headers, light to
  import (a worker of ``--workers`` imports it before it can answer its
  supervisor); ``defaults``: what the service takes unless told otherwise.
"""
