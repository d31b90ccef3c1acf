"""The MAESTRO ``.m`` importer on small files written here (never the shared data), and its errors."""

from __future__ import annotations

import pytest

from dse.errors import SpecError
from dse.inputs.importers.maestro import (
    parse_maestro_hardware,
    parse_maestro_network,
    read_maestro_network,
)

NETWORK = """
Network Eyes {
FPS: 60
Layer conv1 {
    Type: CONV
    Dimensions: { N: 1, K: 32, C: 3, Y: 64, X: 64, R: 3, S: 3 }
}
Layer dw {
    Type: DSCONV
    Dimensions: { N: 1, K: 1, C: 32, Y: 64, X: 64, R: 3, S: 3 }
}
}

Network Gaze {   // runs after Eyes, half of the time
FPS: 30
Probability: 0.5
Dependency: {
    Eyes
}
Layer fc { Type: GEMM  Dimensions: { N: 1, K: 10, C: 128, Y: 1, X: 1, R: 1, S: 1 } }
}
"""

HARDWARE = """
// two arrays
Accelerator Big {
  num_pes: 2048
  offchip_bw: 64
  global_shared_memory: 1048576 // 1 MiB
  PE_local_memory: 8192
}
Accelerator Little { num_pes: 512  offchip_bw: 32  global_shared_memory: 262144 }
"""


def test_network_file_reads_models_layers_and_dependencies() -> None:
    scenario = parse_maestro_network(NETWORK, "s.m")
    assert [m.name for m in scenario.models] == ["Eyes", "Gaze"]
    eyes, gaze = scenario.models
    assert eyes.fps == 60 and eyes.depends_on is None and eyes.probability == 1.0
    assert gaze.fps == 30 and gaze.depends_on == "Eyes" and gaze.probability == 0.5
    conv, dw = eyes.layers
    assert (conv.type, conv.k, conv.c, conv.y, conv.x, conv.r, conv.s) == ("CONV", 32, 3, 64, 64, 3, 3)
    # hand count: 32 x 3 x 64 x 64 x 3 x 3 = 3,538,944 MACs; depthwise: 32 x 64 x 64 x 9 = 1,179,648
    assert conv.macs == 3_538_944 and dw.macs == 1_179_648
    assert gaze.layers[0].type == "GEMM" and gaze.layers[0].macs == 1280


def test_hardware_file_reads_accelerators() -> None:
    system = parse_maestro_hardware(HARDWARE, "hw.m", dataflow=["ws", "os"])
    big, little = system.accelerators
    assert (big.name, big.pes, big.buffer_kib, big.offchip_bw_gbps, big.dataflow) == ("Big", 2048, 1024, 64, "ws")
    assert (little.pes, little.buffer_kib, little.dataflow) == (512, 256, "os")
    assert system.shared_bw_gbps == 64  # default: the largest link, one shared memory
    # default power: 0.5 mW per PE active at 1 GHz, idle a tenth of it
    assert big.active_w == pytest.approx(1.024) and big.idle_w == pytest.approx(0.1024)


# NETWORK starts with a newline: "Network Eyes" is line 2, conv1's Dimensions line 6, dw's Type line 9,
# Gaze's Dependency line 17 (after a blank line 13, Network Gaze 14, FPS 15, Probability 16).
@pytest.mark.parametrize("text, line, field, value", [
    (NETWORK.replace("R: 3, S: 3 }\n}\nLayer dw", "S: 3 }\n}\nLayer dw", 1), 6, "conv1.R", None),
    (NETWORK.replace("Type: DSCONV", "Type: LSTM"), 9, "dw.type", "LSTM"),
    (NETWORK.replace("FPS: 60", "FPS: -5"), 3, "Eyes.FPS", -5.0),
    (NETWORK.replace("\n    Eyes\n", "\n    Mouth\n"), 17, "Gaze.Dependency", "Mouth"),
    (NETWORK.replace("K: 32, C: 3", "K: 32.5, C: 3"), 6, "conv1.Dimensions.K", "32.5"),
])
def test_malformed_network_names_file_line_field_and_value(text, line, field, value) -> None:
    with pytest.raises(SpecError) as err:
        parse_maestro_network(text, "bad.m")
    e = err.value
    assert e.source == "bad.m"
    assert e.field.startswith(f"line {line}:") and field in e.field, e.field
    assert e.value == value


def test_hardware_without_accelerators_is_an_error() -> None:
    with pytest.raises(SpecError, match="at least one accelerator"):
        parse_maestro_hardware("// nothing here\n", "empty.m")
    with pytest.raises(SpecError) as err:
        parse_maestro_hardware("Accelerator A { num_pes: -4 }", "neg.m")
    assert "num_pes" in err.value.field and err.value.value == -4


def test_missing_file_is_a_spec_error(tmp_path) -> None:
    with pytest.raises(SpecError, match="file not found"):
        read_maestro_network(tmp_path / "nope.m")
