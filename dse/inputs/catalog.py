"""The bundled catalog: platforms and workloads under ``models/``, problem specs under ``problems/``.

The catalog is found in ``$DSE_HOME`` if set, else in the checkout that
holds this package (``<repo>/models``, ``<repo>/problems``): :mod:`dse.util.home`.
"""

from __future__ import annotations

import inspect
from collections import Counter
from pathlib import Path

from dse.errors import SpecError
from dse.inputs.builders import BUILDERS
from dse.model.platform import Device, load_platform
from dse.model.workload import load_workload
from dse.util.home import home as home
from dse.util.home import models_dir as models_dir
from dse.util.home import problems_dir as problems_dir
from dse.util.suggest import did_you_mean


def _names(folder: Path) -> list[str]:
    return sorted(p.stem for p in folder.glob("*.yaml")) if folder.is_dir() else []


def platforms() -> list[str]:
    """Names of the catalog's platforms."""
    return _names(models_dir() / "platforms")


def workloads() -> list[str]:
    """Names of the catalog's workload files (builders are listed by :func:`builders`)."""
    return _names(models_dir() / "workloads")


def systems() -> list[str]:
    """Names of the catalog's multi-accelerator systems (``models/systems``)."""
    return _names(models_dir() / "systems")


def scenarios() -> list[str]:
    """Names of the catalog's real-time multi-model scenarios (``models/scenarios``)."""
    return _names(models_dir() / "scenarios")


def problems() -> list[str]:
    return _names(problems_dir())


def builders() -> list[str]:
    return sorted(BUILDERS)


def _is_file(path: Path) -> bool:
    """``path.is_file()``, but False (not an exception) for a name too long or not representable."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def find(kind: str, ref: str, base: Path | None = None) -> Path | None:
    """Resolve ``ref`` (a catalog name or a path, relative to ``base`` or the catalog home).

    Returns the first candidate that is a file, or ``None`` (also for a name the OS rejects,
    e.g. one too long), so that the caller reports the reference it could not resolve.
    """
    candidates = []
    ref_path = Path(ref)
    if ref_path.suffix in (".yaml", ".yml") or "/" in ref or ref_path.suffix:
        if base is not None:
            candidates.append(base / ref_path)
        candidates += [ref_path, home() / ref_path]
    else:
        candidates.append(models_dir() / kind / f"{ref}.yaml")
    for path in candidates:
        if _is_file(path):
            return path
    return None


# --------------------------------------------------------------------------- units and details

#: What each time unit written in outputs means (``tu`` comes from the table-driven cost model).
TIME_UNITS: dict[str, str] = {
    "ns": "nanoseconds",
    "ms": "milliseconds",
    "tu": ("the workload's own abstract time unit: a task cost as written in an STG file or a "
           "device_costs table, or #operations / device speed for the TF paper's CSV graphs; it is "
           "not converted to seconds (energy treats 1 tu as 1 ns unless the cost model's "
           "seconds_per_time_unit says otherwise)"),
}

#: Meaning and unit of builder parameters shared by several builders; a builder's own docstring
#: documents the rest (``dse catalog --details BUILDER`` shows both).
BUILDER_PARAMETERS: dict[str, str] = {
    "batch": "samples per inference (each op's FLOPs and activations scale with it; weights do not)",
    "precision": "element type of tensors and rate used: fp32, fp16, bf16 or int8 (4, 2, 2, 1 bytes)",
    "granularity": "layer (one op per layer) or block (one op per residual / inverted-residual block)",
    "seq_len": "tokens per sequence (bert_base, bert_large: at most 512; llm: the prompt, or a decode step's KV-cache length)",
    "layers": "number of layers (encoder layers for bert_base and bert_large, GCN layers for gcn)",
    "hidden": "hidden feature width of the GCN layers (features per node)",
    "dataset": "graph dataset: cora, citeseer, pubmed (Planetoid statistics) or custom",
    "nodes": "graph nodes (overrides the dataset's)",
    "edges": "directed graph edges, i.e. CSR nonzeros without self-loops (overrides the dataset's)",
    "features": "input features per node (overrides the dataset's)",
    "classes": "output classes per node (overrides the dataset's)",
    "degree_skew": "coefficient of variation of node degree (std / mean; 0 = regular graph)",
    "order": "per-layer op order: auto, combine_first (PyG) or aggregate_first",
    "aggregation": "how each aggregation runs: fused (one sparse product) or gather_scatter (PyG's MessagePassing "
                   "on an edge_index: messages materialized per edge)",
    "normalize": "GCN: once (A_hat given) or per_call (PyG GCNConv's gcn_norm before each layer)",
    "m": "rows of A and C (elements)",
    "n": "columns of B and C (elements)",
    "k": "inner dimension: columns of A, rows of B (elements)",
    "tiles": "row blocks of A and C, each an independent gemm op (1 = one op)",
    "n_ops": "number of ops in the random DAG",
    "seed": "random seed (same seed, same workload)",
    "max_preds": "most producers per op",
    "width": "most ops per layer of the random DAG",
    "sparse_share": "probability that an op is a sparse spmm, in [0, 1]",
    "rows": "rows (graph nodes) of the sparse matrix (overrides the dataset's; required with dataset custom)",
    "nnz": "nonzeros of the sparse matrix (overrides the dataset's; required with dataset custom)",
    "row_cv": "coefficient of variation of the row lengths (std / mean; 0 = every row equally long)",
}


def time_unit_note(unit: str) -> str | None:
    """One sentence explaining time unit ``unit`` (``tu``, ``tu x 0.001``...), or None for a plain SI unit."""
    base = unit.split(" x ")[0].strip()
    if base != "tu":
        return None
    scale = unit[len(base):].strip()
    scaled = f" ({unit}: thousandths and other fractions of it, kept as integers)" if scale else ""
    return f"tu = {TIME_UNITS['tu']}{scaled}"


def spec_path(ref: str | Path) -> Path:
    """``ref`` itself when it names an existing file or looks like a path, else the catalog problem of that name.

    ``spec_path("quickstart")`` -> ``<home>/problems/quickstart.yaml``; a name that is neither is returned
    unchanged, so that the reader reports it as a missing file.
    """
    path = Path(ref)
    if _is_file(path) or path.suffix or "/" in str(ref) or "\\" in str(ref):
        return path
    candidate = problems_dir() / f"{ref}.yaml"
    return candidate if _is_file(candidate) else path


def details(name: str) -> str:
    """A readable account of catalog entry ``name``: a platform's figures with units and sources,
    a builder's parameters with defaults and units, a workload's size, or a problem spec.

    Raises :class:`~dse.errors.SpecError` (field ``--details``) for a name in no catalog list.
    """
    if name in platforms():
        return _platform_details(models_dir() / "platforms" / f"{name}.yaml")
    if name in builders():
        return builder_details(name)
    if name in workloads():
        return _workload_details(models_dir() / "workloads" / f"{name}.yaml")
    if name in problems():
        path = problems_dir() / f"{name}.yaml"
        return f"problem {name} ({path.name}); solve it with: dse solve {name}\n\n{path.read_text().rstrip()}"
    for kind, names in other_kinds().items():
        if name in names:
            path = models_dir() / kind / f"{name}.yaml"
            return f"{kind[:-1]} {name} ({path.relative_to(home())})\n\n{path.read_text().rstrip()}"
    lists = {"platforms": platforms(), "builders": builders(), "workloads": workloads(), "problems": problems(),
             **other_kinds()}
    known = "; ".join(f"{kind}: {', '.join(names) or 'none'}" for kind, names in lists.items())
    hint = did_you_mean(name, [n for names in lists.values() for n in names])
    raise SpecError("command line", "--details", name, f"not in the catalog{hint}; {known}")


def other_kinds() -> dict[str, list[str]]:
    """Catalog folders under ``models/`` beyond platforms and workloads that hold YAML entries
    (``systems``, ``scenarios``...), by folder name; their details are the files themselves."""
    skip = {"platforms", "workloads"}
    folders = sorted(p for p in models_dir().iterdir() if p.is_dir() and p.name not in skip) if models_dir().is_dir() else []
    return {f.name: names for f in folders if (names := _names(f))}


def _platform_details(path: Path) -> str:
    platform = load_platform(path)
    lines = [f"platform {platform.name}: {platform.description}".rstrip(": "), "", "devices:"]
    for d in platform.devices:
        rates = ", ".join(f"{p} {v:g}" for p, v in d.peak_tflops.items())
        lines.append(f"  {d.name} ({d.kind}): peak {rates or '-'} TFLOP/s (int8: TOP/s), memory {d.mem_gib:g} GiB "
                     f"at {d.mem_bw_gbps:g} GB/s, power {d.idle_w:g} W idle / {d.active_w:g} W active"
                     + (f", speed {d.speed:g} operations per tu" if d.speed else ""))
        lines += [f"    {line}" for line in mechanism_lines(d)]
        lines += [f"    {'stands for' if key == 'part' else 'source of ' + key}: {text}" for key, text in d.sources.items()]
    if platform.links:
        lines.append("links:")
        for link in platform.links:
            lines.append(f"  {link.a} <-> {link.b}: {link.bandwidth_gbps:g} GB/s, {link.latency_us:g} us, "
                         f"{link.energy_pj_per_byte:g} pJ/byte")
    sourced = [line.strip() for line in path.read_text().splitlines() if "#" in line and not line.lstrip().startswith("#")]
    header = [line.lstrip("# ").rstrip() for line in path.read_text().splitlines() if line.startswith("#")]
    if header:
        lines += ["", "about this file:", *(f"  {h}" for h in header)]
    if sourced:
        lines += ["", "sources of the figures (the file's comments):", *(f"  {s}" for s in sourced)]
    return "\n".join(lines)


def mechanism_lines(device: Device) -> list[str]:
    """One line per cost-mechanism value ``device`` uses, with where it came from ("declared",
    "runtime ...", "class default: fitted on N fit rows (...)", "kind default"): its class and runtime first."""
    runtime = device.runtime or "none"
    lines = [f"class {device.device_class or 'none (kind defaults)'}, runtime {runtime}"]
    for name, source in sorted(device.provenance.items()):
        head, _, op_class = name.partition(".")
        value = getattr(device, head)
        if op_class:
            value = value.get(op_class)
        shown = "-" if value in (None, (), 0) and source == "kind default" else value
        if isinstance(shown, tuple):
            shown = ", ".join(shown) or "-"
        lines.append(f"{name} = {shown}: {source}")
    return lines


def builder_details(name: str) -> str:
    """A builder's summary and one line per parameter: name, type, default, meaning and unit."""
    fn = BUILDERS[name]
    doc = inspect.getdoc(fn) or ""
    lines = [f"builder {name}: {doc.split(chr(10) + chr(10))[0].replace(chr(10), ' ')}", "", "parameters:"]
    for param in inspect.signature(fn).parameters.values():
        annotation = param.annotation if isinstance(param.annotation, str) else getattr(
            param.annotation, "__name__", str(param.annotation))
        default = "required" if param.default is inspect.Parameter.empty else f"default {param.default!r}"
        note = BUILDER_PARAMETERS.get(param.name, "see the description below")
        lines.append(f"  {param.name} ({annotation}, {default}): {note}")
    lines += ["", "use in a spec: workload: {builder: " + name + ", PARAMETER: VALUE, ...}", "", doc]
    return "\n".join(lines)


def _workload_details(path: Path) -> str:
    w = load_workload(path)
    classes = Counter(op.op_class for op in w.ops)
    header = [line.lstrip("# ").rstrip() for line in path.read_text().splitlines() if line.startswith("#")]
    lines = [f"workload {w.name}: {w.description}".rstrip(": "),
             f"  {w.n_ops} ops, {len(w.edges)} edges; op classes: "
             + ", ".join(f"{k} {v}" for k, v in sorted(classes.items()))]
    if any(op.device_costs for op in w.ops):
        lines.append("  explicit per-device costs (device_costs), in tu: " + (time_unit_note("tu") or ""))
    return "\n".join(lines + ([""] + [f"  {h}" for h in header] if header else []))
