"""``dse schema``: a valid JSON Schema that accepts the bundled specs and rejects what the loader rejects."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from dse import cli
from dse.runs.schema import spec_schema

ROOT = Path(__file__).resolve().parents[2]
SPECS = sorted((ROOT / "problems").glob("*.yaml")) + sorted((ROOT / "docs" / "examples").glob("*_spec.yaml"))


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = spec_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _errors(validator, spec: dict) -> list[str]:
    return [e.message for e in validator.iter_errors(spec)]


@pytest.mark.parametrize("path", SPECS, ids=lambda p: p.name)
def test_bundled_and_documented_specs_are_valid(validator, path: Path) -> None:
    assert _errors(validator, yaml.safe_load(path.read_text())) == []


def _quickstart() -> dict:
    return yaml.safe_load((ROOT / "problems" / "quickstart.yaml").read_text())


@pytest.mark.parametrize("change", [
    lambda s: s["workload"].update(layerz=3),            # unknown builder parameter
    lambda s: s["workload"].update(layers="three"),      # wrong type for an int parameter
    lambda s: s["workload"].update(builder="gcnn"),      # unknown builder
    lambda s: s.update(family="pipelines"),              # unknown family
    lambda s: s.update(objectives=["makespan"]),         # a dag objective in a pipeline spec
    lambda s: s.update(platform={"name": "p", "devices": [{"name": "d", "kind": "cpu"}]}),  # missing figures
    lambda s: s.update(options={"insertion": True}),     # a dag option in a pipeline spec
    lambda s: s["constraints"].update(power_w=-1),       # out of bounds
    lambda s: s["solver"].update(name="gurobi"),         # unknown solver
], ids=["builder-param", "param-type", "builder", "family", "objective", "platform", "options", "bound", "solver"])
def test_schema_rejects_what_the_loader_rejects(validator, change) -> None:
    spec = _quickstart()
    change(spec)
    assert _errors(validator, spec)


def test_schema_accepts_heuristic_solver_and_dag_options(validator) -> None:
    spec = yaml.safe_load((ROOT / "problems" / "topcuoglu2002.yaml").read_text())
    spec["solver"]["name"] = "heuristic:heft"
    spec["options"] = {"insertion": True, "tensor_per_device": False}
    assert _errors(validator, spec) == []


def test_cli_writes_schema_file(tmp_path, capsys) -> None:
    out = tmp_path / "dse-spec.schema.json"
    assert cli.main(["schema", "--out", str(out)]) == 0
    assert json.loads(out.read_text())["$schema"].startswith("https://json-schema.org/")
    assert "yaml-language-server: $schema=" in capsys.readouterr().out


def test_cli_schema_out_folder_is_one_line_error(tmp_path, capsys) -> None:
    assert cli.main(["schema", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--out" in err


def test_family_resolver_model_types_its_platform(monkeypatch) -> None:
    import dataclasses

    from pydantic import BaseModel, ConfigDict

    from dse.mapping import registry

    class Board(BaseModel):
        model_config = ConfigDict(extra="forbid")
        cores: int

    def resolve(ref, source, base):  # a family's own platform reader
        return ref

    resolve.model = Board  # type: ignore[attr-defined]
    monkeypatch.setitem(registry._FAMILIES, "dag", dataclasses.replace(registry.family("dag"),
                                                                        resolve_platform=resolve))
    validator = jsonschema.Draft202012Validator(spec_schema())
    spec = yaml.safe_load((ROOT / "problems" / "topcuoglu2002.yaml").read_text())
    assert _errors(validator, {**spec, "platform": {"cores": 4}}) == []
    assert _errors(validator, {**spec, "platform": {"cores": "four"}})
    assert _errors(validator, {**spec, "platform": "any_board_name"}) == []
