"""The CLI's command registry: one module per ``dse`` subcommand beyond the core ones.

A command module builds a :class:`Command` and calls :func:`register_command`
on import; :mod:`dse.cli.app` adds every registered command to its parser. A new
command is a new module plus its name in :data:`BUILTIN_COMMAND_MODULES`
(or the ``dse.cli.commands`` entry-point group for other packages).

Example::

    from dse.cli.commands import Command, register_command

    def _arguments(parser):
        parser.add_argument("spec")

    def _run(args) -> int:
        print(args.spec)
        return 0

    register_command(Command("hello", "print a spec's path", _arguments, _run))
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass

from dse.util.plugins import load_plugins_once

#: Modules that register the built-in extra commands (a new command adds its module here).
BUILTIN_COMMAND_MODULES: tuple[str, ...] = (
    "dse.cli.commands.simulate",
    "dse.cli.commands.batch",
    "dse.cli.commands.results",
    "dse.cli.commands.schema",
    "dse.cli.commands.explain",
    "dse.cli.commands.calibrate",
    "dse.cli.commands.coexec",
    "dse.cli.commands.certify",
    "dse.cli.commands.report",
    "dse.cli.commands.accuracy",
)


@dataclass(frozen=True)
class Command:
    """One subcommand: ``add_arguments(parser)`` declares its flags; ``run(args)`` returns the exit code.

    ``run`` raises :class:`~dse.errors.DseError` for bad input (exit 2) or an infeasible
    problem (exit 3); the CLI prints it as one line.
    """

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


_COMMANDS: dict[str, Command] = {}


def register_command(command: Command) -> Command:
    """Add ``command`` to the registry (re-registering a name replaces it); returns it."""
    _COMMANDS[command.name] = command
    return command


def commands() -> dict[str, Command]:
    """Every registered extra command by name (built-in modules and entry points loaded first)."""
    load_plugins_once("dse.cli.commands", BUILTIN_COMMAND_MODULES)
    return dict(_COMMANDS)
