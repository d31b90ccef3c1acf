"""Reference pages generated from the code, so that they cannot drift from it.

Run by the docs build (the ``gen-files`` plugin of ``mkdocs.yml``); each
function also works on its own (the tests call them):

* :func:`spec_reference`: the problem spec's fields from the pydantic models, per family its
  objectives, limits, options and scenario;
* :func:`cli_reference`: every ``dse`` subcommand and flag from the argparse parser, the
  commands registered in :mod:`dse.cli.commands` included;
* :func:`catalog_reference`: every catalog platform (figures and sources) and every builder
  (parameters, defaults, meanings);
* :func:`family_page`: a stand-in page for a registered family whose own ``docs/family-NAME.md``
  is not written yet.
"""

from __future__ import annotations

import argparse
import inspect
from pathlib import Path
from typing import Any

from pydantic import BaseModel

DOCS = Path(__file__).resolve().parent


#: Meanings of the fields whose model gives no ``description`` (the generated tables show both).
FIELD_NOTES: dict[str, str] = {
    "name": "a name, used in outputs (a device's or op's must be unique)",
    "family": "the problem family: see Families below",
    "platform": "catalog name, path, inline platform, `{identical: P}` or `{format, path}`",
    "workload": "`{builder: NAME, ...}`, catalog name, path, inline workload or `{format, path}`",
    "objectives": "objective names of the family (default: its default objectives)",
    "constraints": "constraint limits (next table)",
    "solver": "solver settings (table below)",
    "cost_model": "`default` (the family's), `roofline`, `table`, or `{name: ..., PARAM: VALUE}`",
    "description": "free text",
    "deadline_ms": "deadline in milliseconds (pipeline: latency of one item; dag: makespan)",
    "power_w": "average power cap in W: energy per item <= power_w x period",
    "memory": "enforce device memory capacities",
    "time_limit_s": "seconds per solver (the CP-SAT model build included)",
    "seed": "random seed: the same seed gives the same result",
    "devices": "the devices (table below)",
    "links": "the links (table below); devices without a direct link use the path of fewest links",
    "kind": "cpu, gpu, tensorcore, fpga, npu, dla or generic",
    "a": "a device name", "b": "another device name",
    "ops": "the ops in any order; edges come from their `inputs`",
    "op_class": "gemm, conv, dwconv, spmm, attention, elementwise, reduce, pool, norm, embedding, memcpy, generic",
    "precision": "fp64, fp32, tf32, fp16, bf16 or int8",
    "features": "data features: `density` in (0, 1], `degree_skew` >= 0",
    "device_type": "only devices of this kind may run the op",
    "colocation": "ops with the same label run on the same device",
    "op": "the producer op's name",
}


def _model_rows(model: Any) -> list[str]:
    rows = ["| field | type | default | meaning |", "|---|---|---|---|"]
    schema = model.model_json_schema()
    for name, field in model.model_fields.items():
        prop = schema.get("properties", {}).get(name, {})
        kind = prop.get("type") or " or ".join(p.get("type", "object") for p in prop.get("anyOf", [])) or "object"
        value = None if field.is_required() else field.get_default(call_default_factory=True)
        default = "required" if field.is_required() else "see below" if isinstance(value, BaseModel) else f"`{value!r}`"
        meaning = (field.description or prop.get("description") or FIELD_NOTES.get(name, ""))
        meaning = meaning.replace("|", "\\|").replace("\n", " ")
        limits = {k: v for part in [prop, *prop.get("anyOf", [])] for k, v in part.items()}  # "X or null" too
        bounds = ", ".join(f"{k} {limits[k]}" for k in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum")
                           if k in limits)
        rows.append(f"| `{name}` | {kind} | {default} | {meaning}{' (' + bounds + ')' if bounds else ''} |")
    return rows


def _own_doc(model: Any) -> str:
    """The first paragraph of the model's own docstring ('' when it has none: not pydantic's BaseModel's)."""
    doc = model.__dict__.get("__doc__") or ""
    return inspect.cleandoc(doc).split("\n\n")[0] if doc else ""


def spec_reference() -> str:
    """The problem spec reference: top-level fields, constraints, solver, and each family's part."""
    from dse.mapping.registry import families
    from dse.model.platform import DeviceSpec, LinkSpec, PlatformSpec
    from dse.model.workload import InputSpec, OpSpec, WorkloadSpec
    from dse.runs.spec import ConstraintsSpec, ProblemSpecModel, SolverSpec
    from dse.solvers.registry import solvers

    out = ["# Spec reference", "",
           "Generated from the pydantic models that validate a spec (`dse/runs/spec.py`, `dse/model/platform.py`, "
           "`dse/model/workload.py`) and from the family and solver registries. `dse schema` writes the same "
           "information as a JSON Schema for editors ([Problem specs](../specs.md)).", ""]
    for title, model in (("Problem spec (top level)", ProblemSpecModel), ("`constraints`", ConstraintsSpec),
                         ("`solver`", SolverSpec), ("Platform file / inline `platform`", PlatformSpec),
                         ("`devices[]`", DeviceSpec), ("`links[]`", LinkSpec),
                         ("Workload file / inline `workload`", WorkloadSpec), ("`ops[]`", OpSpec),
                         ("`ops[].inputs[]`", InputSpec)):
        out += [f"## {title}", "", _own_doc(model), "", *_model_rows(model), ""]
    out += ["## Solvers", "", "| name | exact | in `all` | description |", "|---|---|---|---|"]
    for name, entry in solvers().items():
        out.append(f"| `{name}` | {'yes' if entry.exact else 'no'} | {'yes' if entry.in_all else 'no'} | "
                   f"{entry.description} |")
    out += ["", "Each solver's settings go under `solver.options.NAME` in a spec (or `dse.solve(..., **options)`); "
            "an unknown setting or a value out of range is refused before any solver starts.", ""]
    for name, entry in solvers().items():
        if any(not field.is_required() for field in entry.options.model_fields.values()):  # settings, not a name
            out += [f"### `{name}` options", "", _own_doc(entry.options), "", *_model_rows(entry.options), ""]
    out += ["## Families", ""]
    for name, fam in families().items():
        out += [f"### `{name}`", "", fam.description, "",
                f"* objectives: {', '.join(f'`{o}`' for o in fam.objectives)} "
                f"(default {', '.join(f'`{o}`' for o in fam.default_objectives)})",
                f"* constraint limits: {', '.join(f'`{lim}`' for lim in sorted(fam.limits)) or 'none'}",
                f"* exact formulation: {'yes' if fam.exact else 'no'}; Gantt charts: {'yes' if fam.gantt else 'no'}",
                "* metrics (CSV columns): "
                + (", ".join(f"`{m.name}_{m.unit}` ({m.description})" for m in fam.metrics) or "none"), ""]
        if fam.options.model_fields:
            out += [f"`options` ({fam.options.__name__}): {_own_doc(fam.options)}", "", *_model_rows(fam.options), ""]
        if fam.scenario is not None:
            out += [f"`scenario` ({fam.scenario.__name__}): {_own_doc(fam.scenario)}", "", *_model_rows(fam.scenario), ""]
    return "\n".join(out) + "\n"


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _help_of(parser: argparse.ArgumentParser, name: str) -> str:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                if choice.dest == name:
                    return choice.help or ""
    return ""


def cli_reference() -> str:
    """Every subcommand with its usage and a table of its arguments (from :func:`dse.cli.app._parser`)."""
    from dse.cli.app import _parser

    parser = _parser()
    out = ["# CLI reference", "",
           "Generated from the `dse` argument parser, the commands registered in `dse.cli.commands` included. "
           "Exit codes: 0 done, 2 invalid input (one line naming file, field and value), 3 infeasible "
           "(the line names the constraint and by how much), 130 interrupted (Ctrl-C), 143 SIGTERM.", "",
           "```", parser.format_usage().strip(), "```", "",
           "| option | meaning |", "|---|---|",
           *(f"| `{', '.join(a.option_strings)}` | {(a.help or '').replace('%%', '%')} |"
             for a in parser._actions if a.option_strings), ""]
    for name, sub in _subcommands(parser).items():
        out += [f"## `dse {name}`", "", _help_of(parser, name), "", "```", sub.format_usage().strip(), "```", "",
                "| argument | meaning |", "|---|---|"]
        for action in sub._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            flag = ", ".join(action.option_strings) or action.dest
            meta = f" {action.metavar}" if action.metavar and action.option_strings else ""
            text = (action.help or "").replace("%%", "%").replace("|", chr(92) + "|")  # argparse's escaped %
            out.append(f"| `{flag}{meta}` | {text} |")
        out.append("")
    return "\n".join(out) + "\n"


def catalog_reference() -> str:
    """Every catalog platform with its figures and sources, every builder with its parameters."""
    from dse.inputs import catalog

    out = ["# Catalog", "",
           "Generated from `models/` and the builders; `dse catalog --details NAME` prints the same text.", "",
           "## Platforms", ""]
    for name in catalog.platforms():
        out += [f"### `{name}`", "", "```text", catalog.details(name), "```", ""]
    out += ["## Builders", "", "Use a builder in a spec as `workload: {builder: NAME, PARAMETER: VALUE, ...}`.", ""]
    for name in catalog.builders():
        out += [f"### `{name}`", "", "```text", catalog.builder_details(name), "```", ""]
    out += ["## Workloads and problems", ""]
    for name in catalog.workloads():
        out += [f"### workload `{name}`", "", "```text", catalog.details(name), "```", ""]
    out += ["Problems: " + ", ".join(f"`{p}`" for p in catalog.problems())
            + " (solve one with `dse solve NAME`).", ""]
    for kind, names in catalog.other_kinds().items():
        out += [f"## {kind.capitalize()}", "", f"Files in `models/{kind}/`; `dse catalog --details NAME` prints one.", "",
                ", ".join(f"`{n}`" for n in names), ""]
    return "\n".join(out) + "\n"


def family_page(name: str) -> str:
    """A stand-in page for family ``name`` from its registry entry (used while its own page is missing)."""
    from dse.mapping.registry import family

    fam = family(name)
    doc = inspect.getdoc(fam.problem_class) or ""
    module = inspect.getdoc(inspect.getmodule(fam.problem_class)) or ""
    return "\n".join([
        f"# Family `{name}`", "", f"*{fam.description}*", "",
        "This page is generated from the family's registry entry and docstrings.", "",
        f"* objectives: {', '.join(fam.objectives)} (default {', '.join(fam.default_objectives)})",
        f"* constraint limits: {', '.join(sorted(fam.limits)) or 'none'}",
        f"* exact (CP-SAT) formulation: {'yes' if fam.exact else 'no'}",
        f"* simulator (`dse simulate`): {'yes' if fam.simulate else 'no'}", "",
        "## Semantics", "", module, "", "## Problem class", "", doc, "",
        "See the [spec reference](reference/spec.md#families) for its options.", ""])


#: Family pages written by hand (``docs/family-NAME.md``); a registered family without one gets a stand-in.
def missing_family_pages() -> list[str]:
    """Registered families whose ``docs/family-NAME.md`` does not exist."""
    from dse.mapping.registry import families

    return [name for name in families() if not (DOCS / f"family-{name}.md").is_file()]


def _generate() -> None:
    import mkdocs_gen_files

    pages = {"reference/spec.md": spec_reference(), "reference/cli.md": cli_reference(),
             "reference/catalog.md": catalog_reference()}
    pages.update({f"family-{name}.md": family_page(name) for name in missing_family_pages()})
    for path, text in pages.items():
        with mkdocs_gen_files.open(path, "w") as handle:
            handle.write(text)


if __name__ in ("__main__", "<run_path>"):
    _generate()
