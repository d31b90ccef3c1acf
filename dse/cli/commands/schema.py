"""``dse schema [--out FILE]``: the JSON Schema of a problem spec, for editors and validators.

Built by :func:`dse.runs.schema.spec_schema` from the spec's pydantic models, the
builders' signatures and the family registry. With ``--out`` it is written to
``FILE`` (checked first, written whole or not at all); otherwise printed. A spec whose first line is
``# yaml-language-server: $schema=FILE`` gets completion and validation in
editors that run the YAML language server (VS Code's YAML extension, Neovim...).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from dse.cli.commands import Command, register_command
from dse.errors import SpecError
from dse.util.files import check_writable_file, write_text


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, metavar="FILE", help="write the schema to FILE (default: print it)")


def _run(args: argparse.Namespace) -> int:
    from dse.runs.schema import spec_schema

    text = json.dumps(spec_schema(), indent=2) + "\n"
    if args.out is None:
        print(text, end="")
        return 0
    out: Path = args.out
    if out.is_dir():
        raise SpecError("command line", "--out", str(out), "is a folder; give a file name such as dse-spec.schema.json")
    check_writable_file(out, "command line", "--out")
    write_text(out, text)
    print(f"wrote {out}; first line of a spec: # yaml-language-server: $schema={out}")
    return 0


register_command(Command("schema", "write the JSON Schema of a problem spec (editor completion, validation)",
                         _arguments, _run))
