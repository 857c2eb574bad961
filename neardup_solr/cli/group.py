"""The ``neardup`` command group, its commands, and how a command runs:
with one-line errors and exit codes instead of tracebacks (see the
package's docstring for the codes).
"""

from __future__ import annotations

import os
import platform
import sys
from pathlib import Path

import click

from .. import compiled
from ..errors import NeardupError
from ..files import flush_stdout, is_write_error
from .data import datasets, demo, prepare_restaurants
from .quality import evaluate, tune
from .results import clusters, html
from .local_solr import solr
from .index import REFERENCE_NAME, delete, index
from .query import query
from .report import report
from .serve import serve
from .common import say


# Which copy of the package runs, as pip says it: with two installs (or a
# checkout beside an install) the version alone does not tell them apart.
_PACKAGE = str(Path(__file__).resolve().parent.parent).replace("%", "%%")


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="neardup-solr",
                      message=f"%(prog)s %(version)s from {_PACKAGE} (Python {platform.python_version()})")
def cli() -> None:
    """Near-duplicate detection for records, backed by Apache Solr.

    \b
    Examples, the whole job on the restaurant data at once:
      neardup demo
    and step by step, the default mode:
      neardup solr start
      neardup datasets restaurants -o data/restaurants
      neardup index data/restaurants/addresses.txt
      neardup report pairs.tsv
      neardup evaluate pairs.tsv --gold data/restaurants/gold_pairs.tsv
      neardup clusters pairs.tsv -o membership.csv --membership
    the reference workflow's mode, for comparison:
      neardup report --shingles --max-dist 2 out.tsv
    """


for command in (solr, datasets, prepare_restaurants, index, report, query, delete, evaluate, tune, clusters, html, serve, demo):
    cli.add_command(command)
cli.add_command(index, REFERENCE_NAME)
cli.add_command(report, "report-near-dups")


# The library's remedies (``NeardupError.remedy``) in this command line's options.
OPTION_HINTS = {
    "port": "choose another with --port",
    "base_port": "choose another base port with --port (ZooKeeper takes port + {zk_offset})",
    "strict": "fix the {unit}, or drop --strict to skip bad {unit}s",
    "zk_host": "check --zk-host / ZK_HOST (host:port[/chroot])",
    "zk_chroot": "start the cluster's nodes, or check the chroot in --zk-host",
    "token": "give --token-file FILE (clients send `Authorization: Bearer <token>`), or bind {local}",
    "serve_port": "is the port taken? give another with --port",
    "ca_cert": "give its CA certificate with --ca-cert FILE (or SOLR_CA_CERT)",
    "timeout": "raise --timeout (NEARDUP_TIMEOUT) if Solr is busy",
    "credentials": "check --user (SOLR_USER) and the password (SOLR_PASSWORD or --password-file)",
    "start_local": "start the local Solr with `neardup solr start --port {port}`",
    "solr_url": "check --solr-url / SOLR_URL and that the server is up",
    "core_name": "it holds {held}; name one of them in --solr-url (or SOLR_URL), or see `neardup solr status`",
}


def run(command: click.Command, prog: str) -> None:
    """Run a command with one-line errors instead of tracebacks."""
    # The first report (or index) after an install is silent for a while otherwise.
    compiled.when_compiling(lambda: say("compiling the kernels (once after an install)..."))
    try:
        try:
            command.main(prog_name=prog, standalone_mode=False)
        finally:
            flush_stdout()
    except NeardupError as err:
        if err.remedy in OPTION_HINTS:
            err.hint = OPTION_HINTS[err.remedy].format(**err.context)
        click.echo(f"{prog}: error: {err}", err=True)
        _exit(err.exit_code)
    except click.exceptions.Exit as done:
        _exit(done.exit_code)
    except click.ClickException as err:
        # Wrong usage too is one line, the command's --help as its hint.
        where = err.ctx.command_path if isinstance(err, click.UsageError) and err.ctx else prog
        click.echo(f"{prog}: error: {err.format_message()} (hint: see `{where} --help`)", err=True)
        _exit(err.exit_code)
    except click.exceptions.Abort:
        click.echo(f"{prog}: interrupted", err=True)
        _exit(130)
    except KeyboardInterrupt:
        click.echo(f"{prog}: interrupted", err=True)
        _exit(130)
    except BrokenPipeError:
        os._exit(1)
    except OSError as err:
        # What no command turned into an error of its own: standard output on a full disk, say.
        failure = _system_failure(err)
        click.echo(f"{prog}: error: {failure}", err=True)
        _exit(failure.exit_code)
    except SystemExit as done:
        _exit(done.code)


def _system_failure(err: OSError) -> NeardupError:
    """The one line for an error of the system no command caught: its words
    and the file they name, if any."""
    if is_write_error(err) and err.filename is None:
        return NeardupError(f"a write failed: {err.strerror or err}",
                            hint="check that the disk has room, where standard output goes too")
    return NeardupError(f"{err.strerror or err}" + (f": {err.filename}" if err.filename else ""),
                        hint="check that the disk has room and the files named can be written")


def _exit(code: int | str | None) -> None:
    """Exit with ``code``; output that cannot be flushed any more (a full
    disk) is dropped rather than said again, as a traceback, at the
    interpreter's exit."""
    try:
        sys.stdout.flush()
    except OSError:
        sys.stderr.flush()
        os._exit(code if isinstance(code, int) else 1)
    sys.exit(code)
