"""Every command and subcommand has --help with examples that name it and
only options it has (the README promises examples for every command)."""

import re

import click
import pytest
from click.testing import CliRunner

from conftest import run_cli

from neardup_solr.cli import cli


def commands(command: click.Command, path: tuple[str, ...] = ()):
    """(path as typed, the command) for the command line and everything under it, aliases too."""
    yield path, command
    if isinstance(command, click.Group):
        for name, sub in command.commands.items():
            yield from commands(sub, (*path, name))


def options_of(command: click.Command) -> set[str]:
    return {name for param in command.params for name in (*param.opts, *param.secondary_opts)}


def examples(help_text: str) -> list[str]:
    """The `neardup ...` lines after an "Example(s)" heading."""
    lines = help_text.splitlines()
    start = next((i for i, line in enumerate(lines) if re.match(r"\s*Examples?\b.*:$", line)), None)
    assert start is not None, help_text
    return [line.strip() for line in lines[start + 1:] if line.strip().startswith("neardup")]


EVERY_COMMAND = list(commands(cli))


@pytest.mark.parametrize(("path", "command"), EVERY_COMMAND, ids=[" ".join(p) or "neardup" for p, _ in EVERY_COMMAND])
def test_every_help_has_examples_of_that_command(path, command):
    shown = CliRunner().invoke(cli, [*path, "--help"])
    assert shown.exit_code == 0, shown.output
    found = examples(shown.output)
    # An alias shows the examples of the command it names.
    typed = " ".join(("neardup", *path[:-1], command.name) if path else ("neardup",))
    assert [e for e in found if e == typed or e.startswith(typed + " ")], (typed, found)
    for example in found:
        words = example.split()[1:]
        target = cli
        while words and isinstance(target, click.Group) and words[0] in target.commands:
            target = target.commands[words.pop(0)]
        unknown = {w.split("=")[0] for w in words if w.startswith("-")} - options_of(target) - {"-h", "--help"}
        assert not unknown, (example, unknown)


def test_help_as_users_call_it():
    done = run_cli("report", "--help")
    assert done.returncode == 0 and "neardup report --shingles --max-dist 2 out.tsv" in done.stdout


def test_the_top_help_shows_the_default_mode_before_the_reference_one():
    done = run_cli("--help")
    assert done.returncode == 0, done.stderr
    reports = [line.strip() for line in done.stdout.splitlines() if line.strip().startswith("neardup report")]
    assert reports == ["neardup report pairs.tsv", "neardup report --shingles --max-dist 2 out.tsv"]
