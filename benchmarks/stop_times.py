"""Stop times after SIGINT and SIGTERM for every long command (the interruption rule of ``dse.util.interrupt``).

Each command runs in its own process group, as from a terminal. After a warm-up
delay (imports, the first work) it gets SIGINT sent to the whole group (what
Ctrl-C does) or SIGTERM sent to the main process alone (what ``kill`` does).
Printed per command and signal: seconds from the signal to the exit, the exit
status, the lines on stderr after the signal, whether a traceback appeared and
whether any process of the group was left running.

The ``-long`` cases are 10x longer scenarios (a 1,200-second XR scenario, a DyPe stream of 2,400
inputs); ``solve-dag-build`` stops CP-SAT on a 2,000-task dag on 256 devices while it builds the
problem, runs the seed heuristics and the model (minutes of work before any search); ``time-limit-dag``
sends no signal and prints how long ``--time-limit 1`` on that dag ran past its start.

    .venv/bin/python benchmarks/stop_times.py [--only simulate-dype,batch] [--delay 5]
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
HARD = {"name": "hard", "family": "pipeline", "platform": "edge_soc",
        "workload": {"builder": "random_pipeline", "n_ops": 60, "seed": 3},
        "objectives": ["throughput", "energy"], "solver": {"name": "cpsat", "time_limit_s": 120, "seed": 0}}
#: XRBench social interaction A with one block per model and two priority levels: 4^5 x 2^5 genomes, each scored
#: by 2 s of simulated frames (the exhaustive solver on a family that scores by simulation).
XR_SMALL = {"name": "xr_small", "family": "multimodel", "platform": "Quad_4K_Hetero",
            "workload": "social_interactionA", "objectives": ["uxcost", "energy"],
            "cost_model": {"name": "accelerator", "blocks_per_model": 1},
            "options": {"search_duration_s": 2.0, "priority_levels": 2},
            "solver": {"name": "exhaustive", "time_limit_s": 600, "seed": 0}}
#: A 2,000-task dag on 256 devices (128 of each of two kinds, a star of links): CP-SAT's model is refused as
#: too large (197 M device-pair constraints) after the seed heuristics, which ran 65 s before the stop rule.
BIG_DAG_DEVICES = [
    {"name": "cpu", "kind": "cpu", "peak_tflops": {"fp32": 1.0}, "mem_bw_gbps": 100, "mem_gib": 64,
     "idle_w": 20, "active_w": 100, "count": 128},
    {"name": "gpu", "kind": "gpu", "peak_tflops": {"fp32": 10.0}, "mem_bw_gbps": 900, "mem_gib": 16,
     "idle_w": 30, "active_w": 250, "count": 128}]
BIG_DAG_NAMES = [f"cpu{i}" for i in range(128)] + [f"gpu{i}" for i in range(128)]
BIG_DAG = {"name": "big_dag", "family": "dag",
           "platform": {"name": "star256", "devices": BIG_DAG_DEVICES,
                        "links": [{"a": BIG_DAG_NAMES[0], "b": other, "bandwidth_gbps": 16, "latency_us": 5,
                                   "energy_pj_per_byte": 20} for other in BIG_DAG_NAMES[1:]]},
           "workload": {"builder": "random_pipeline", "n_ops": 2000, "seed": 1},
           "objectives": ["makespan", "energy"], "cost_model": {"name": "roofline"},
           "solver": {"name": "cpsat", "time_limit_s": 600, "seed": 0}}
SLOW_JOBS = {"name": "slow", "family": "pipeline", "platform": "edge_soc",
             "workload": {"builder": "random_pipeline", "n_ops": 40, "seed": 1},
             "solver": {"name": "cpsat", "time_limit_s": 60, "seed": 0}}


def cases(tmp: Path) -> dict[str, list[str]]:
    """Command lines by name (``dse`` run as ``python -m dse.cli``)."""
    (tmp / "hard.yaml").write_text(yaml.safe_dump(HARD))
    (tmp / "xr_small.yaml").write_text(yaml.safe_dump(XR_SMALL))
    (tmp / "slow.yaml").write_text(yaml.safe_dump(SLOW_JOBS))
    (tmp / "grid.yaml").write_text(yaml.safe_dump({"solver.seed": list(range(8))}))
    dype = yaml.safe_load((ROOT / "problems" / "dype_drift.yaml").read_text())
    dype["scenario"]["stream"]["drift"]["steps"] = 120  # 120 distinct inputs, each solved exactly: minutes
    dype["scenario"]["stream"]["length"] = 240
    (tmp / "dype.yaml").write_text(yaml.safe_dump(dype))
    xr = yaml.safe_load((ROOT / "problems" / "xr_ar_gaming.yaml").read_text())
    xr["scenario"]["duration_s"] = 120.0  # minutes of frames
    (tmp / "xr.yaml").write_text(yaml.safe_dump(xr))
    xr["scenario"]["duration_s"] = 1200.0  # 10x: one scheduler's run alone takes seconds to minutes
    (tmp / "xr_long.yaml").write_text(yaml.safe_dump(xr))
    dype["scenario"]["stream"]["length"] = 2400
    (tmp / "dype_long.yaml").write_text(yaml.safe_dump(dype))
    (tmp / "big_dag.yaml").write_text(yaml.safe_dump(BIG_DAG))
    dse = [sys.executable, "-m", "dse.cli"]
    return {
        "solve-cpsat": dse + ["solve", str(tmp / "hard.yaml"), "--solver", "cpsat", "--out", str(tmp / "o1"), "--quiet"],
        "solve-nsga2": dse + ["solve", str(tmp / "hard.yaml"), "--solver", "nsga2", "--out", str(tmp / "o2"), "--quiet"],
        "solve-exhaustive-multimodel": dse + ["solve", str(tmp / "xr_small.yaml"), "--out", str(tmp / "o3"), "--quiet"],
        "simulate-dype": dse + ["simulate", str(tmp / "dype.yaml"), "--out", str(tmp / "o4"), "--quiet"],
        "simulate-xr": dse + ["simulate", str(tmp / "xr.yaml"), "--out", str(tmp / "o5"), "--quiet"],
        "simulate-xr-long": dse + ["simulate", str(tmp / "xr_long.yaml"), "--out", str(tmp / "o7"), "--quiet"],
        "simulate-dype-long": dse + ["simulate", str(tmp / "dype_long.yaml"), "--out", str(tmp / "o8"), "--quiet"],
        "solve-dag-build": dse + ["solve", str(tmp / "big_dag.yaml"), "--solver", "cpsat", "--out", str(tmp / "o9"),
                                  "--quiet"],
        "batch": dse + ["batch", str(tmp / "slow.yaml"), "--grid", str(tmp / "grid.yaml"), "--store",
                        str(tmp / "s.sqlite"), "--workers", "2", "--quiet"],
        "calibrate": dse + ["calibrate", "--devices", "cpu:t1", "--out", str(tmp / "cal.yaml"),
                            "--samples", str(tmp / "samples.csv"), "--quiet"],
        "coexec": dse + ["coexec", "--m", "8192", "--n", "4096", "--k", "4096", "--split", "grid", "--repeat", "5",
                         "--out", str(tmp / "o6"), "--quiet"],
    }


def group_alive(pgid: int) -> bool:
    """Whether a process of group ``pgid`` still runs (zombies, which only wait to be reaped, do not count)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


#: Extra seconds before the signal, per case (``--extra-delay`` replaces them): a sweep's local cluster takes
#: seconds to start on a busy machine, and a stop during that start waits for it (the case measures a running
#: sweep).
#: The long XR case waits for its first schedulers (fcfs alone: 8 to 20 s of events at 1,200 s, with its rows), so
#: that the signal lands in a later one, after a scheduler's rows were written.
EXTRA_DELAY = {"batch": 12.0, "simulate-xr-long": 34.0}


def measure(argv: list[str], sig: signal.Signals, delay: float) -> dict[str, object]:
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            start_new_session=True, stdin=subprocess.DEVNULL)
    time.sleep(delay)
    if proc.poll() is not None:
        return {"error": f"ended before the signal (exit {proc.returncode}): {proc.stderr.read()[-300:]}"}
    sent = time.monotonic()
    if sig == signal.SIGINT:
        os.killpg(proc.pid, sig)  # Ctrl-C: the whole foreground group
    else:
        proc.send_signal(sig)  # kill: the main process alone
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        return {"error": "still running 60 s after the signal"}
    stop_s = time.monotonic() - sent
    time.sleep(1.0)
    left = group_alive(proc.pid)
    if left:
        os.killpg(proc.pid, signal.SIGKILL)
    lines = [line for line in err.splitlines() if line.strip()]
    return {"stop_s": round(stop_s, 2), "exit": proc.returncode, "stderr_lines": len(lines),
            "traceback": "Traceback" in err, "children_left": left, "last_line": lines[-1][:150] if lines else ""}


def time_limit_run(argv: list[str]) -> dict[str, object]:
    """Run ``argv`` to its end, no signal: seconds from the start to the exit and the exit status."""
    start = time.monotonic()
    proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                          stdin=subprocess.DEVNULL, check=False)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    return {"run_s": round(time.monotonic() - start, 2), "exit": proc.returncode,
            "last_line": lines[-1][:150] if lines else ""}


#: Cases that run with ``--time-limit 1`` and no signal (what is printed: the whole run's seconds).
TIME_LIMIT_CASES = {"time-limit-dag": "solve-dag-build"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="comma-separated case names")
    parser.add_argument("--delay", type=float, default=6.0, help="seconds between the start and the signal")
    parser.add_argument("--extra-delay", type=float, help="seconds added to --delay for every case chosen (default: "
                        "each case's own, e.g. 34 s for simulate-xr-long so that the signal lands after fcfs)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="dse-stop-") as folder:
        tmp = Path(folder)
        table = cases(tmp)
        names = args.only.split(",") if args.only else [*table, *TIME_LIMIT_CASES]
        for name in names:
            if name in TIME_LIMIT_CASES:
                row = time_limit_run(table[TIME_LIMIT_CASES[name]] + ["--time-limit", "1"])
                print(f"{name:<28} {'none':<7} " + "  ".join(f"{k}={v}" for k, v in row.items()), flush=True)
                continue
            for sig in (signal.SIGINT, signal.SIGTERM):
                extra = args.extra_delay if args.extra_delay is not None else EXTRA_DELAY.get(name, 0.0)
                row = measure(table[name], sig, args.delay + extra)
                print(f"{name:<28} {sig.name:<7} " + "  ".join(f"{k}={v}" for k, v in row.items()), flush=True)


if __name__ == "__main__":
    main()
