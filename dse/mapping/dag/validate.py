"""An independent check of a ``dag`` schedule (written apart from :mod:`dse.mapping.dag.problem`'s decoders).

:func:`validate_schedule` takes a device, start and finish per task (and optionally the
time each task releases its device) and lists every rule the schedule breaks:

* every task is on a device that may run it (``tables.allowed``);
* ``finish = start + time[task, device]`` and ``start >= 0``;
* precedence with transfer delays. Per edge ``u -> v`` (``e``), the input arrives at
  ``finish[u]`` on the same device and ``finish[u] + transfer_time[e, dev u, dev v]``
  on another one. With ``tensor_per_device`` (the TF paper's rules) ``u``'s tensor goes
  once to each remote device that consumes it; the sends run after ``u``'s compute in
  increasing device index, each taking ``send_time[dev u]``, and the tensor arrives
  ``transfer_time`` after its send ends: at remote device ``b`` it arrives at
  ``finish[u] + (rank of b among u's remote consumer devices + 1) * send_time[dev u]
  + transfer_time[e, dev u, b]``. ``start[v]`` may not precede any arrival;
* a device runs one thing at a time: the intervals ``[start, release)`` of its tasks do
  not overlap, where ``release = finish`` plus, with ``tensor_per_device``, the task's
  sends (``release`` defaults to that; if given, it must equal it);
* memory (when ``problem.memory``): per device, the summed ``mem[task, device]`` is at
  most ``mem_capacity``;
* colocation: the tasks of one colocation group share a device.

An empty list means the schedule is valid; each message names the task(s) and the rule.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from dse.mapping.dag.problem import DagProblem


def _remote_devices(edges: np.ndarray, dev: np.ndarray, n: int) -> list[list[int]]:
    """Per producer: the sorted distinct devices (other than its own) of its consumers."""
    sets: list[set[int]] = [set() for _ in range(n)]
    for u, v in edges:
        if dev[u] != dev[v]:
            sets[int(u)].add(int(dev[v]))
    return [sorted(s) for s in sets]


def validate_schedule(
    problem: DagProblem,
    devices: np.ndarray,
    start: np.ndarray,
    finish: np.ndarray,
    release: np.ndarray | None = None,
) -> list[str]:
    """Every violated rule of the schedule (empty: valid). See the module docstring for the rules."""
    t = problem.tables
    n, m = t.n_ops, t.n_dev
    names = t.op_names
    dev = np.asarray(devices, dtype=np.int64).reshape(-1)
    start = np.asarray(start, dtype=np.int64).reshape(-1)
    finish = np.asarray(finish, dtype=np.int64).reshape(-1)
    errors: list[str] = []
    i: int | np.integer  # task index: loops below run over Python ranges and numpy index arrays
    for label, arr in (("devices", dev), ("start", start), ("finish", finish)):
        if len(arr) != n:
            return [f"shape: {label} has {len(arr)} entries for {n} tasks"]
    bad_dev = (dev < 0) | (dev >= m)
    for i in np.flatnonzero(bad_dev):
        errors.append(f"device: task {names[i]} on device index {dev[i]}, outside 0..{m - 1}")
    if bad_dev.any():
        return errors
    tf = bool(problem.tensor_per_device)

    # allowed devices
    for i in range(n):
        if not t.allowed[i, dev[i]]:
            errors.append(f"allowed: task {names[i]} may not run on {t.device_names[dev[i]]}")

    # durations
    for i in range(n):
        if start[i] < 0:
            errors.append(f"start: task {names[i]} starts at {start[i]} < 0")
        want = start[i] + t.time[i, dev[i]]
        if finish[i] != want:
            errors.append(f"duration: task {names[i]} finishes at {finish[i]}, but start {start[i]} + time "
                          f"{t.time[i, dev[i]]} on {t.device_names[dev[i]]} = {want}")

    # sends and release times
    remote = _remote_devices(t.edges, dev, n) if tf else [[] for _ in range(n)]
    expected_release = finish + np.array([len(r) for r in remote], dtype=np.int64) * t.send_time[dev]
    if release is None:
        release = expected_release
    else:
        release = np.asarray(release, dtype=np.int64).reshape(-1)
        if len(release) != n:
            return [*errors, f"shape: release has {len(release)} entries for {n} tasks"]
        for i in np.flatnonzero(release != expected_release):
            what = f"finish {finish[i]} + {len(remote[i])} sends x {t.send_time[dev[i]]}" if tf else \
                f"its finish {finish[i]}"
            errors.append(f"release: task {names[i]} releases its device at {release[i]}, expected {what} "
                          f"= {expected_release[i]}")

    # precedence with transfer delays
    for e, (u, v) in enumerate(t.edges):
        a, b = int(dev[u]), int(dev[v])
        arrival = int(finish[u])
        how = "same device"
        if a != b:
            delay = int(t.edge_transfer_time(e, a, b))
            if tf:
                k = remote[u].index(b)
                sends = (k + 1) * int(t.send_time[a])
                arrival += sends + delay
                how = f"{k + 1} send(s) of {t.send_time[a]} + transfer {delay}"
            else:
                arrival += delay
                how = f"transfer {delay}"
        if start[v] < arrival:
            errors.append(f"precedence: task {names[v]} starts at {start[v]} before the input of "
                          f"{names[u]} arrives at {arrival} (finish {finish[u]}, {how}; edge {e})")

    # one task at a time per device
    for d in range(m):
        mine = np.flatnonzero(dev == d)
        if len(mine) < 2:
            continue
        order = mine[np.lexsort((release[mine], start[mine]))]
        top_task = int(order[0])  # the earlier interval that ends last
        for i in order[1:]:
            # half-open intervals [start, release) overlap iff each starts before the other ends
            if start[top_task] < release[i] and start[i] < release[top_task]:
                errors.append(f"overlap: tasks {names[top_task]} [{start[top_task]}, {release[top_task]}) and "
                              f"{names[i]} [{start[i]}, {release[i]}) share {t.device_names[d]}")
            if release[i] > release[top_task]:
                top_task = int(i)

    # memory
    if problem.memory:
        for d in range(m):
            mine = np.flatnonzero(dev == d)
            used = int(t.mem[mine, d].sum())
            if used > t.mem_capacity[d]:
                who = ", ".join(names[i] for i in mine[:8]) + (" ..." if len(mine) > 8 else "")
                errors.append(f"memory: {t.device_names[d]} holds {used} > capacity {t.mem_capacity[d]} "
                              f"(tasks {who})")

    # colocation
    groups: dict[str, list[int]] = {}
    for i, g in enumerate(t.colocation or ()):
        if g is not None:
            groups.setdefault(g, []).append(i)
    for g, members in groups.items():
        used_devs = sorted({int(dev[i]) for i in members})
        if len(used_devs) > 1:
            where = ", ".join(f"{names[i]}@{t.device_names[dev[i]]}" for i in members)
            errors.append(f"colocation: group {g!r} spans {len(used_devs)} devices ({where})")
    return errors
