"""``python -m neardup_solr`` kept warm for the suite (see conftest.run_cli).

Run as a script by the suite, once: it imports the package (the checkout
under test, first on the PYTHONPATH conftest.child_env gives), then for each
request on the socket it is handed (a command's arguments, environment,
folder, a limit on the size of the files it writes, and the pipes for its
standard input, output and error) forks a child that runs the command as
``python -m neardup_solr`` runs it, and answers with the child's pid and
then, unless the command is left to run (a service), its exit status.
Each command is still a process of its own, started from a process that has run nothing,
so no command sees what another left behind; what is saved is starting
Python and importing the package, a second or more per command, several
hundred times a run.
"""

from __future__ import annotations

import atexit
import importlib
import importlib.util
import io
import json
import os
import pkgutil
import resource
import socket
import sys
import threading
import traceback
import types

import neardup_solr
from neardup_solr.cli import main

# The whole package (the service's modules too, for `serve`): what commands import.
for module in pkgutil.walk_packages(neardup_solr.__path__, "neardup_solr."):
    if module.name != "neardup_solr.__main__":
        importlib.import_module(module.name)


def _stream(fd: int, like: io.TextIOWrapper, mode: str) -> io.TextIOWrapper:
    """A standard stream on ``fd`` as the interpreter makes it at start-up
    (its encoding, errors and buffering copied from this process's own,
    which the interpreter made for pipes too)."""
    raw = io.FileIO(fd, mode, closefd=False)
    raw.name = ("<stdin>", "<stdout>", "<stderr>")[fd]
    buffered = io.BufferedReader(raw) if mode == "r" else io.BufferedWriter(raw)
    stream = io.TextIOWrapper(buffered, encoding=like.encoding, errors=like.errors,
                              line_buffering=like.line_buffering, write_through=like.write_through)
    stream.mode = mode
    return stream


def _exit_code(code: object) -> int:
    """What the interpreter exits with for ``sys.exit(code)``."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _child(channel: socket.socket, request: dict, fds: list[int]) -> None:
    channel.close()
    if request["left_to_run"]:
        os.setsid()  # a session and process group of its own, ended as one (conftest.Started)
    targets = (1, 2, 0) if request["stdin"] else (1, 2)
    for fd, target in zip(fds, targets):
        os.dup2(fd, target)
        os.close(fd)
    if request["file_size_limit"] is not None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (request["file_size_limit"], resource.RLIM_INFINITY))
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.stdin = sys.__stdin__ = _stream(0, sys.__stdin__, "r")
    sys.stdout = sys.__stdout__ = _stream(1, sys.__stdout__, "w")
    sys.stderr = sys.__stderr__ = _stream(2, sys.__stderr__, "w")
    sys.argv = [os.path.join(os.path.dirname(neardup_solr.__file__), "__main__.py"), *request["args"]]
    # The main module `python -m neardup_solr` has: a process multiprocessing
    # spawns (a service's worker) then imports nothing of this script, which
    # imports the whole package, as it would never do for users.
    as_run = types.ModuleType("__main__")
    as_run.__spec__ = importlib.util.find_spec("neardup_solr.__main__")
    as_run.__file__ = as_run.__spec__.origin
    sys.modules["__main__"] = as_run
    code = 0
    try:
        main()
    except SystemExit as done:
        code = _exit_code(done.code)
    except BaseException:
        traceback.print_exc()
        code = 1
    # As the interpreter ends: threads joined, exit handlers run, the streams flushed.
    threading._shutdown()
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
    except Exception:
        traceback.print_exc()
        code = 120
    sys.stderr.flush()
    os._exit(code)


def serve(channel: socket.socket) -> None:
    channel.sendall(b"ready")
    running = set()  # children left to run, reaped once they have ended
    while True:
        message, fds, _, _ = socket.recv_fds(channel, 1 << 20, 3)
        running -= {pid for pid in running if os.waitpid(pid, os.WNOHANG)[0]}
        if not message:
            return
        request = json.loads(message)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            try:
                _child(channel, request, fds)
            finally:
                os._exit(1)
        for fd in fds:
            os.close(fd)
        channel.sendall(f"{pid}".encode())
        if request["left_to_run"]:
            running.add(pid)
            continue
        _, status = os.waitpid(pid, 0)
        channel.sendall(f"{os.waitstatus_to_exitcode(status)}".encode())


if __name__ == "__main__":
    try:
        serve(socket.socket(fileno=int(sys.argv[1])))
    except ConnectionError:
        pass  # the suite gave this interpreter up (a command's timeout) or ended
