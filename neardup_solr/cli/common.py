"""What the commands share: status output, progress bars, options, the Solr connection."""

from __future__ import annotations

import functools
import os
import stat
import sys
from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path

import click
from tqdm import tqdm

from ..index import cloud, local_solr
from ..errors import InputError, MissingField, NeardupError
from ..files import check_output, is_stdout
from ..index.local_solr import CORE
from ..results.outputs import FILE_FORMATS, OUTPUT_FORMATS, TextLookup
from ..progress import Progress
from ..records.record import checked_source
from ..records.readers import RecordReader
from ..index.solr import DEFAULT_RETRIES, DEFAULT_TIMEOUT, DEFAULT_URL, Solr
from ..records.sources import INPUT_FORMATS, TABLE_FORMATS, Layout, RecordFile

EXIT_SKIPPED_LINES = 6


def say(message: str) -> None:
    """Status for people, on stderr, so stdout stays data."""
    tqdm.write(message, file=sys.stderr)


def renamed_option(name: str, old: str, **option):
    """The option ``name``, and ``old``, its former name, kept for a release
    as a hidden alias: the command is called with the new name's parameter,
    which takes the old name's value when that was given (with a warning
    that names the new one)."""
    dest = name.lstrip("-").replace("-", "_")

    def decorate(command):
        @functools.wraps(command)
        def run(*args, **kwargs):
            given = kwargs.pop("old_" + dest)
            if given is not None:
                say(f"neardup: warning: {old} is deprecated: use {name}")
                kwargs[dest] = given
            return command(*args, **kwargs)

        run = click.option(old, "old_" + dest, type=option.get("type"), hidden=True,
                           help=f"The old name of {name}, kept for a release.")(run)
        return click.option(name, **option)(run)

    return decorate


def source_value(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str:
    """A --source value, checked by the source rule (a usage error, exit 2);
    ``""`` when the option is not given. Given, it names a source: an empty
    name would be taken for none."""
    if value is None:
        return ""
    if not value:
        raise click.BadParameter("a source needs a name (leave --source out for records without one)",
                                 param_hint="--source")
    try:
        return checked_source(value)
    except NeardupError as err:
        raise click.BadParameter(err.message, param_hint="--source") from None


def progress(total: int | None, unit: str, quiet: bool, desc: str) -> tqdm:
    # disable=None hides the bar when stderr is not a terminal. Counts
    # stay whole numbers below a thousand (1/21, not 1.00/21.0), and take
    # a prefix above (12.3k/200k).
    return tqdm(total=total, unit=unit, unit_scale=bool(total and total >= 1000), desc=desc,
                disable=True if quiet else None, file=sys.stderr)


def bar_progress(bar: tqdm, units: Mapping[str, str] | None = None) -> Progress:
    """A progress callable for the library that draws on ``bar``: the first
    step keeps the bar as made; a later one resets it to its own total, with
    the step as the description and its unit from ``units``."""
    shown = {"step": None, "done": 0}

    def update(step: str, done: int, total: int | None) -> None:
        if step != shown["step"]:
            if shown["step"] is not None:
                bar.reset(total=total)
                bar.unit_scale = bool(total and total >= 1000)
                if units and step in units:
                    bar.unit = units[step]
                bar.set_description(step)
            shown.update(step=step, done=0)
        bar.update(done - shown["done"])
        shown["done"] = done

    return update


quiet_option = click.option("--quiet", "-q", is_flag=True, help="No progress bars.")
data_dir_option = click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=local_solr.default_data_dir,
    show_default="$NEARDUP_DATA_DIR or ~/.local/share/neardup-solr",
    help="Where the local Solr keeps its index and logs.",
)
port_option = click.option("--port", type=click.IntRange(1, 65535), default=local_solr.DEFAULT_PORT, show_default=True)


def access_options(command):
    """The options that say as whom Solr is reached and which certificates it may show."""
    for option in reversed([
        click.option("--user", envvar="SOLR_USER", help="User for basic authentication (env SOLR_USER)."),
        click.option("--password-file", type=click.Path(dir_okay=False, exists=True, path_type=Path),
                     help="File holding the password (else env SOLR_PASSWORD)."),
        click.option("--ca-cert", envvar="SOLR_CA_CERT", type=click.Path(dir_okay=False, exists=True),
                     help="CA certificate (PEM) to verify Solr's TLS certificate with (env SOLR_CA_CERT)."),
    ]):
        command = option(command)
    return command


def open_solr(url: str, *, user: str | None, password_file: Path | None, ca_cert: str | None,
              timeout: float = DEFAULT_TIMEOUT, retries: int = DEFAULT_RETRIES) -> Solr:
    """A client for ``url`` with the access options' credentials and CA."""
    auth = None
    if user:
        password = password_file.read_text().rstrip("\r\n") if password_file else os.environ.get("SOLR_PASSWORD")
        if password is None:
            raise NeardupError(f"no password for user {user!r}", hint="set SOLR_PASSWORD or use --password-file")
        auth = (user, password)
    return Solr(url, timeout=timeout, retries=retries, auth=auth, verify=ca_cert or True)


def solr_connection(command=None, *, lazy: bool = False, ping: bool = True):
    """Adds the options that say where Solr is and how to reach it, and
    passes the command a ``solr`` that has answered a ping (with
    ``lazy=True``: a function that connects when first called; with
    ``ping=False``: one that may not exist yet)."""
    if command is None:
        return functools.partial(solr_connection, lazy=lazy, ping=ping)

    @click.option("--solr-url", envvar="SOLR_URL", default=DEFAULT_URL, show_default=True,
                  help="Solr core or collection URL (env SOLR_URL).")
    @click.option("--zk-host", envvar="ZK_HOST", metavar="HOST:PORT[/CHROOT]",
                  help="SolrCloud's ZooKeeper, instead of --solr-url: a live node serves --collection (env ZK_HOST).")
    @click.option("--collection", default=CORE, show_default=True, help="The collection, with --zk-host.")
    @access_options
    @click.option("--timeout", envvar="NEARDUP_TIMEOUT", type=click.FloatRange(0, min_open=True), default=DEFAULT_TIMEOUT,
                  show_default=True, help="Seconds to wait for one Solr answer (env NEARDUP_TIMEOUT).")
    @click.option("--retries", envvar="NEARDUP_RETRIES", type=click.IntRange(0, 10), default=DEFAULT_RETRIES, show_default=True,
                  help="Retries after connection errors and 5xx answers, with exponential backoff.")
    @functools.wraps(command)
    def wrapper(*args, solr_url, zk_host, collection, user, password_file, ca_cert, timeout, retries, **kwargs):
        def connect() -> Solr:
            url = cloud.collection_url(zk_host, collection) if zk_host else solr_url
            solr = open_solr(url, user=user, password_file=password_file, ca_cert=ca_cert, timeout=timeout,
                             retries=retries)
            if ping:
                solr.ping()
            return solr

        return command(*args, solr=connect if lazy else connect(), **kwargs)

    return wrapper


class _ReadingBar(tqdm):
    """How far indexing a file is: the bytes (compressed bytes for gzip) of
    the records indexed against the file's size, the records so far beside
    them. ``update`` takes records indexed, as for a bar that counts them.
    The reader runs some batches ahead of the index, so the bytes read are
    shared out: those of the records indexed are the bytes read times the
    share of the records read that are indexed."""

    def __init__(self, reader: RecordReader, **kwargs):
        self.reader = reader
        self.records = 0
        super().__init__(total=reader.size, unit="B", unit_scale=True, unit_divisor=1024, **kwargs)

    def update(self, n: int = 1) -> None:
        self.records += n
        self.set_postfix_str(f"{self.records:,} records", refresh=False)
        read = max(self.reader.records, self.records)
        indexed = self.reader.bytes_read * self.records // read if read else 0
        super().update(max(0, indexed - self.n))


def reading_progress(reader: RecordReader, quiet: bool, desc: str = "indexing") -> tqdm:
    """A bar for reading ``reader``'s file: percent done and time left from
    the bytes read when the size is known; a count of records for a stream."""
    if reader.size is None:
        return progress(None, "rec", quiet, desc)
    return _ReadingBar(reader, desc=desc, disable=True if quiet else None, file=sys.stderr)


def _names(value: str | None) -> tuple[str, ...]:
    return tuple(name.strip() for name in (value or "").split(",") if name.strip())


def _text_layout(id_name: str | None, value: str | None, option: str) -> Layout:
    """The layout of the id column and the text columns ``value`` names,
    each ``COLUMN`` or ``COLUMN=FIELD`` (its values are the field FIELD)."""
    columns, renamed = [], []
    for item in _names(value):
        column, equals, field = (part.strip() for part in item.partition("="))
        if equals and not (column and field):
            raise click.BadParameter(f"{item!r} names no column and field: write COLUMN=FIELD",
                                     param_hint=f"'{option}'")
        columns.append(column)
        if field and field != column:
            renamed.append((column, field))
    return Layout(id_name or Layout.id_field, tuple(columns), tuple(renamed))


def record_input(command=None, *, replay_if: Callable[[dict], bool] = lambda options: False,
                 renamed_format: bool = False):
    """Adds the options that say how to read the command's ``records`` (the
    RECORDS argument, or a ``--records`` option, which may be left out:
    ``None``): its format, id and text columns or fields; and passes the
    command a :class:`RecordFile` instead of a path. Standard input is
    copied first when ``replay_if`` says so of the command's options (the
    command reads its records twice then). A missing column is one error
    with a hint. ``renamed_format`` keeps ``--format``, the old name of
    ``--input-format`` (``index``'s), as its hidden alias: a command whose
    ``--format`` names what it writes has none."""
    if command is None:
        return functools.partial(record_input, replay_if=replay_if, renamed_format=renamed_format)
    input_format = {"type": click.Choice(INPUT_FORMATS),
                    "help": "Input format [default: from the name: .csv, .tsv, .jsonl, each also .gz; .parquet; "
                    "else ID TEXT lines]."}

    @(renamed_option("--input-format", "--format", **input_format) if renamed_format
      else click.option("--input-format", **input_format))
    @click.option("--id-column", metavar="NAME", help="CSV/TSV/Parquet: the column holding the id.  [default: id]")
    @click.option("--text-columns", metavar="A,B,...",
                  help="CSV/TSV/Parquet: the columns joined, in this order, into the text [default: every other "
                  "column]; COLUMN=FIELD compares a column as the index's field FIELD.")
    @click.option("--id-field", metavar="NAME", help="JSON Lines: the field holding the id.  [default: id]")
    @click.option("--text-fields", metavar="A,B,...",
                  help="JSON Lines: the fields joined, in this order, into the text [default: every other field "
                  "holding text, a number, a list or an object]; NAME=FIELD compares a field as the index's field "
                  "FIELD.")
    @functools.wraps(command)
    def wrapper(*args, records: Path | None, input_format: str | None, id_column: str | None,
                text_columns: str | None, id_field: str | None, text_fields: str | None, **kwargs):
        if records is None:
            if input_format or id_column or text_columns or id_field or text_fields:
                raise click.UsageError("--input-format, --id-column/--text-columns and --id-field/--text-fields say "
                                       "how to read --records: give it")
            return command(*args, records=None, **kwargs)
        source = RecordFile.of(records, input_format)
        table, lines = source.format in TABLE_FORMATS, source.format == "jsonl"
        for given, option, fits, kind in ((id_column or text_columns, "--id-column/--text-columns", table,
                                           "CSV/TSV/Parquet"),
                                          (id_field or text_fields, "--id-field/--text-fields", lines, "JSON Lines")):
            if given and not fits:
                raise click.UsageError(f"{option} are for {kind} input; {source.name} is read as {source.format} "
                                       "(see --input-format)")
        id_name, text_names = (id_column, text_columns) if table else (id_field, text_fields)
        source = replace(source, layout=_text_layout(id_name, text_names,
                                                     "--text-columns" if table else "--text-fields"))
        replay = replay_if(kwargs)
        try:
            with source.replayable() if replay else nullcontext(source) as readable:
                return command(*args, records=readable, **kwargs)
        except MissingField as err:
            option = {(True, "id"): "--id-column", (True, "text"): "--text-columns",
                      (False, "id"): "--id-field", (False, "text"): "--text-fields"}[table, err.role]
            what = "the id column" if err.role == "id" else "columns that are there"
            if err.separator == "\t":
                hint = "read it as TSV with --input-format tsv"
            elif err.separator in (",", None):
                hint = f"name {what} with {option}"
            else:
                hint = "CSV is read separated by commas and TSV by tabs: save the file so"
            raise InputError(err.message, hint=hint) from None

    return wrapper


def output_options(command=None, *, texts: bool = True, files: bool = True):
    """Adds ``--format`` (of what the command writes: with ``files``, a file
    that may be Parquet too) and, with ``texts``, ``--with-text``; passes
    ``out_format`` (``None``: from the file's name) and ``with_text``."""
    if command is None:
        return functools.partial(output_options, texts=texts, files=files)
    if files:
        command = click.option("--format", "out_format", type=click.Choice(FILE_FORMATS),
                               help="Output format [default: from the name: .csv, .jsonl, each also .gz; .parquet; "
                               "else TSV].")(command)
    else:
        command = click.option("--format", "out_format", type=click.Choice(OUTPUT_FORMATS),
                               help="Output format [default: TSV].")(command)
    if texts:
        command = click.option("--with-text", is_flag=True,
                               help="Add the records' texts (from Solr), so the file reads without a join.")(command)
    return command


def checked_output(*beside: Callable[[Path], Path]):
    """A click callback for an output path: checked before the command's
    work (:func:`~neardup_solr.files.check_output`), with the files
    ``beside`` it that the command writes too (not for ``-``, standard
    output)."""

    def check(_ctx: click.Context, _param: click.Parameter, value: Path | None) -> Path | None:
        if value is not None:
            check_output(value)
            for where in () if is_stdout(value) else beside:
                check_output(where(value))
        return value

    return check


# An output path: `-` is standard output; the checks are checked_output's, in one line each.
OUTPUT_PATH = click.Path(path_type=Path, allow_dash=True, readable=False)


def output_name(path: Path) -> str:
    """What messages call an output."""
    return "standard output" if is_stdout(path) else str(path)


# Characters a token needs not to be guessed by trying: 16 of the 64 URL-safe
# ones are 96 bits (`secrets.token_urlsafe(32)` gives 43).
MIN_TOKEN_CHARS = 16


def warn_of_token(path: Path, token: str) -> None:
    """One line on stderr each if the token file is open to group or others
    or its token is shorter than MIN_TOKEN_CHARS; the command still runs."""
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        who = "readable" if mode & 0o044 else "writable"
        say(f"neardup: warning: {path} is {who} by group or others (mode {mode:04o}) (hint: chmod 600 {path})")
    if len(token) < MIN_TOKEN_CHARS:
        say(f"neardup: warning: {path} holds a token of {len(token)} character{'s' * (len(token) != 1)}, easy "
            f"to guess (hint: use {MIN_TOKEN_CHARS} or more random characters, e.g. `python -c \"import secrets; "
            f"print(secrets.token_urlsafe(32))\" > {path}`)")


def solr_texts(connect: Callable[[], Solr], bar: tqdm | None) -> TextLookup:
    """A lookup of the texts stored in Solr (connecting when first needed)
    that shows its progress on ``bar``."""

    def lookup(ids: Sequence[str]) -> Mapping[str, str]:
        if bar is not None:
            bar.reset(total=len(ids))
            bar.unit = "rec"
            bar.set_description("reading texts")
        return connect().texts(list(ids), progress=bar.update if bar is not None else None)

    return lookup
