"""The layers of dse/ (pyproject.toml's import-linter contracts; docs/architecture.md).

* every import-linter contract is kept (what ``lint-imports`` checks; ``make test`` checks it here only);
* every module of dse/ sits in a layer of the main contract;
* no import written inside a function crosses a layers contract upward: checked here from the
  source itself (the syntax tree), apart from import-linter, so that a lazy import can never
  carry a forbidden dependency past the contracts;
* no import loop joins modules of two layers (imports under TYPE_CHECKING and inside functions
  count), and no loop of run-time imports exists at all.

The checkers are tried on a small package written here with a known violation, so that a
checker that could never fail would be caught.
"""

from __future__ import annotations

import ast
import sys
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import grimp
import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "dse"



@dataclass(frozen=True)
class LayersContract:
    """One import-linter ``layers`` contract: ``layers`` top first, each a list of full module names
    and whether they are independent of each other (``|``) or not (``:``)."""

    name: str
    layers: tuple[tuple[tuple[str, ...], bool], ...]
    ignored: frozenset[tuple[str, str]]

    def position(self, module: str) -> tuple[int, str] | None:
        """(layer index, layer item) holding ``module`` (0 = top), or None."""
        for index, (items, _) in enumerate(self.layers):
            for item in items:
                if module == item or module.startswith(item + "."):
                    return index, item
        return None

    def forbids(self, importer: str, imported: str) -> bool:
        """Whether a direct import ``importer -> imported`` breaks this contract."""
        if (importer, imported) in self.ignored:
            return False
        a, b = self.position(importer), self.position(imported)
        if a is None or b is None or a[1] == b[1]:
            return False
        if b[0] < a[0]:  # the imported module is in a higher layer
            return True
        return a[0] == b[0] and self.layers[a[0]][1]  # siblings of an independent layer


def layers_contracts(pyproject: Path) -> list[LayersContract]:
    """The ``layers`` contracts of ``pyproject``'s ``[tool.importlinter]``, container names expanded."""
    config = tomllib.loads(pyproject.read_text())["tool"]["importlinter"]
    out = []
    for contract in config["contracts"]:
        if contract["type"] != "layers":
            continue
        containers = contract.get("containers") or [""]
        layers = []
        for raw in contract["layers"]:
            independent = ":" not in raw
            tails = [t.strip().strip("()") for t in raw.replace(":", "|").split("|")]
            items = tuple(f"{c}.{t}" if c else t for c in containers for t in tails)
            layers.append((items, independent))
        ignored = frozenset(tuple(part.strip() for part in rule.split("->"))
                            for rule in contract.get("ignore_imports", []))
        out.append(LayersContract(contract["name"], tuple(layers), ignored))  # type: ignore[arg-type]
    return out


def module_files(package: Path) -> dict[str, Path]:
    """Every module of the package in folder ``package``, by dotted name."""
    out = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _resolve(name: str, modules: Iterable[str]) -> str:
    """The longest known module that ``name`` (a module, or a module's attribute) starts with."""
    known = set(modules)
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name


def function_imports(package: Path) -> list[tuple[str, str, int]]:
    """``(importer, imported module, line)`` for every import of the package's own modules written inside
    a function body, read from the source (``from X import Y`` counts as an import of module X.Y when
    that is a module, else of X)."""
    modules = module_files(package)
    root = package.name
    found = []
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        stack: list[tuple[ast.AST, bool]] = [(ast.parse(path.read_text(), str(path)), False)]
        while stack:
            node, in_function = stack.pop()
            targets: list[str] = []
            if in_function and isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif in_function and isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = name if is_package else name.rpartition(".")[0]
                    for _ in range(node.level - 1):
                        anchor = anchor.rpartition(".")[0]
                    base = f"{anchor}.{base}" if base else anchor
                targets = [f"{base}.{a.name}" for a in node.names]
            for target in targets:
                if target == root or target.startswith(root + "."):
                    found.append((name, _resolve(target, modules), node.lineno))
            inside = in_function or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            stack.extend((child, inside) for child in ast.iter_child_nodes(node))
    return sorted(set(found))


def upward_function_imports(package: Path, pyproject: Path) -> list[str]:
    """Each import inside a function that a layers contract of ``pyproject`` forbids, described."""
    contracts = layers_contracts(pyproject)
    return [f"{a} -> {b} (line {line}) breaks {c.name!r}"
            for a, b, line in function_imports(package) for c in contracts if c.forbids(a, b)]


def import_graph(package: str) -> nx.DiGraph:
    """The package's module import graph (imports inside functions and under TYPE_CHECKING included),
    edges labelled ``typing_only`` when every import of that pair sits under TYPE_CHECKING."""
    full = grimp.build_graph(package, cache_dir=None)
    runtime = grimp.build_graph(package, exclude_type_checking_imports=True, cache_dir=None)
    graph = nx.DiGraph()
    graph.add_nodes_from(full.modules)
    for module in full.modules:
        for target in full.find_modules_directly_imported_by(module):
            typing_only = target not in runtime.find_modules_directly_imported_by(module)
            graph.add_edge(module, target, typing_only=typing_only)
    return graph


def loops_leaving_a_package(graph: nx.DiGraph, modules: dict[str, Path]) -> list[set[str]]:
    """The loops (imports under TYPE_CHECKING and inside functions included) whose modules do not all sit
    in one package (a package's ``__init__`` sits in the package itself; a module at the root of the top
    package stands alone, as the packages beside it do): a loop between two packages, or between a package
    and a module beside it."""
    def home(name: str) -> str:
        if modules[name].name == "__init__.py" or "." not in name.rpartition(".")[0]:
            return name
        return name.rpartition(".")[0]

    return [loop for loop in loops(graph) if len({home(m) for m in loop}) > 1]


def loops(graph: nx.DiGraph) -> list[set[str]]:
    """The import loops: strongly connected sets of two or more modules."""
    return [set(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]


def loops_across_layers(graph: nx.DiGraph, contract: LayersContract) -> list[set[str]]:
    """The loops whose modules sit in two or more layers of ``contract``."""
    out = []
    for loop in loops(graph):
        layers = {p[0] for m in loop if (p := contract.position(m)) is not None}
        if len(layers) > 1:
            out.append(loop)
    return out


def runtime_loops(graph: nx.DiGraph) -> list[set[str]]:
    """The loops left when imports under TYPE_CHECKING are dropped."""
    runtime = nx.DiGraph([(a, b) for a, b, typing_only in graph.edges(data="typing_only") if not typing_only])
    return loops(runtime)


# ------------------------------------------------------------------------------------------- dse itself


def test_every_import_linter_contract_is_kept(monkeypatch, capsys) -> None:
    from importlinter.cli import lint_imports

    monkeypatch.chdir(ROOT)  # lint-imports reads the package from the working directory
    assert lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True) == 0, capsys.readouterr().out


def test_every_module_sits_in_a_layer() -> None:
    main = layers_contracts(ROOT / "pyproject.toml")[0]
    assert main.name.startswith("The eleven layers"), main.name
    assert len(main.layers) == 11
    unplaced = []
    for name, path in module_files(PACKAGE).items():
        if main.position(name) is not None or name == "dse":  # dse/__init__.py: the public names, on top
            continue
        if path.name == "__init__.py" and "import" not in path.read_text():  # a namespace of modules
            continue
        unplaced.append(name)
    assert not unplaced, f"modules in no layer of pyproject.toml's contract: {unplaced}"


def test_no_import_inside_a_function_crosses_a_layer_upward() -> None:
    found = function_imports(PACKAGE)
    assert len(found) > 20  # the scan sees the lazy imports there are (a scan that saw none would pass)
    assert upward_function_imports(PACKAGE, ROOT / "pyproject.toml") == []


def test_no_module_imports_the_package_root() -> None:
    """dse/__init__.py holds the public names on top of every layer: no module of dse imports it."""
    graph = import_graph("dse")
    assert sorted(graph.predecessors("dse")) == []


def test_no_import_loop_between_layers() -> None:
    graph = import_graph("dse")
    contracts = layers_contracts(ROOT / "pyproject.toml")
    main = contracts[0]
    assert loops_across_layers(graph, main) == []
    for contract in contracts[1:]:  # finer contracts: loops only through their declared ignored imports
        for loop in loops_across_layers(graph, contract):
            inside = {(a, b) for a, b in graph.subgraph(loop).edges}
            assert inside & contract.ignored, f"{contract.name}: loop {sorted(loop)}"
    assert runtime_loops(graph) == []


def test_the_root_holds_the_public_surface_and_every_other_module_sits_in_a_layer_package() -> None:
    root_modules = sorted(p.stem for p in PACKAGE.glob("*.py"))
    assert len(root_modules) <= 6, root_modules
    assert set(root_modules) <= {"__init__", "__main__", "errors", "pareto", "testing", "version"}, root_modules
    packages = sorted(p.parent.name for p in PACKAGE.glob("*/__init__.py"))
    assert packages == ["cli", "cost", "heuristics", "inputs", "mapping", "model", "runs", "runtime", "sim",
                        "solvers", "store", "util", "viz"]


def test_each_family_is_a_subpackage_of_mapping() -> None:
    from dse.mapping.registry import BUILTIN_FAMILY_MODULES, families

    for name, entry in families().items():
        module = entry.problem_class.__module__
        assert module.startswith(f"dse.mapping.{name}."), (name, module)
    assert all(m == f"dse.mapping.{name}.problem" for name, m in BUILTIN_FAMILY_MODULES.items())
    flat = [p.name for p in (PACKAGE / "mapping").glob("*.py")]
    assert not [n for n in flat if any(n.startswith(f"{family}_") or n == f"{family}.py" for family in families())]


def test_no_import_loop_leaves_one_package() -> None:
    """Every loop, of any kind of import, stays among the modules of one package (annotation-only loops
    inside a family's package, say); none joins two packages or a package and a module beside it."""
    graph = import_graph("dse")
    assert loops(graph)  # the scan sees the annotation-only loops there are
    assert loops_leaving_a_package(graph, module_files(PACKAGE)) == []


# ------------------------------------------------------------------------------------- the checkers fail


@pytest.fixture()
def bad_package(tmp_path, monkeypatch) -> Path:
    """Package ``layered_demo``: ``low`` imports ``high`` inside a function, and ``high`` imports ``low``
    at the top (a loop across the layers of its pyproject.toml); ``mid`` imports ``low`` lazily (allowed)."""
    root = tmp_path / "layered_demo"
    root.mkdir()
    (root / "__init__.py").write_text("")
    (root / "high.py").write_text("from layered_demo import low\n")
    (root / "mid.py").write_text("def f():\n    from layered_demo.low import g\n    return g\n")
    (root / "low.py").write_text("def g():\n    from layered_demo import high\n    return high\n")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.importlinter]\nroot_package = "layered_demo"\n\n[[tool.importlinter.contracts]]\n'
        'name = "demo"\ntype = "layers"\ncontainers = ["layered_demo"]\nlayers = ["high", "mid", "low"]\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [m for m in sys.modules if m.startswith("layered_demo")]:
        monkeypatch.delitem(sys.modules, name)
    return root


def test_checkers_catch_an_upward_import_in_a_function_and_a_loop(bad_package) -> None:
    pyproject = bad_package.parent / "pyproject.toml"
    assert function_imports(bad_package) == [("layered_demo.low", "layered_demo.high", 2),
                                             ("layered_demo.mid", "layered_demo.low", 2)]
    assert upward_function_imports(bad_package, pyproject) == [
        "layered_demo.low -> layered_demo.high (line 2) breaks 'demo'"]
    graph = import_graph("layered_demo")
    contract = layers_contracts(pyproject)[0]
    assert loops_across_layers(graph, contract) == [{"layered_demo.high", "layered_demo.low"}]
    assert runtime_loops(graph) == [{"layered_demo.high", "layered_demo.low"}]


def test_the_loop_checker_catches_a_loop_between_two_packages(tmp_path, monkeypatch) -> None:
    """Packages ``a`` and ``b`` of ``loop_demo`` import each other, ``b`` only under TYPE_CHECKING: still a loop
    that leaves one package; a loop of two modules inside ``a`` is not."""
    root = tmp_path / "loop_demo"
    for folder in (root, root / "a", root / "b"):
        folder.mkdir()
        (folder / "__init__.py").write_text("")
    (root / "a" / "one.py").write_text("from loop_demo.b import three\nfrom loop_demo.a import two\n")
    (root / "a" / "two.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                       "    from loop_demo.a import one\n")
    (root / "b" / "three.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                         "    from loop_demo.a import one\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    graph = import_graph("loop_demo")
    found = loops_leaving_a_package(graph, module_files(root))
    assert found == [{"loop_demo.a.one", "loop_demo.a.two", "loop_demo.b.three"}]
