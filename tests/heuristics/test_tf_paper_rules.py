"""The TF paper simulator's rules, one test per rule, on hand-built graphs.

Every expected makespan, order and value is worked out by hand in the test's docstring from
the rule it checks (``docs/family-dag.md``, "The paper simulator's rules", gives each rule with
its place in the simulator's source). Conventions of the helper: task ``i`` runs on device
``devices[i]``; a crossing tensor of edge ``e`` takes ``tt[e]`` on every link; a send occupies
its device for ``send[d]``; nothing uses memory.
"""

from __future__ import annotations

import numpy as np
import pytest

from dse.cost import CostTables
from dse.errors import InfeasibleError
from dse.heuristics import PARTITIONERS
from dse.heuristics.base import graph_of
from dse.heuristics.paper_sim import remaining_time, remaining_work, run_paper, simulate_paper
from dse.heuristics.partitioners import (
    cp_critical_path,
    cp_partition,
    dfs_paper_partition,
    divide_path_partition,
    importance_batch_partition,
    mean_rate_transfer,
    mean_speed_time,
    round_robin_partition,
    speed_order,
    weight_function_partition,
)
from dse.mapping.dag import DagProblem


def tf_problem(time, edges, tt, send, allowed=None, colocation=(), mem=None, capacity=None,
               per_unit=1.0) -> DagProblem:
    """A TF-rules problem from task times (n, m), edges, per-edge transfer times (or (E, m, m))
    and per-device send times; optionally per-task memory, per-device capacities and the display
    units per time unit (1: the times are in the paper's unit)."""
    time = np.asarray(time, dtype=np.int64)
    n, m = time.shape
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    E = len(edges)
    tt = np.asarray(tt, dtype=np.int64)
    transfer = tt if tt.ndim == 3 else tt.reshape(E, 1, 1) * (1 - np.eye(m, dtype=np.int64))
    tables = CostTables(
        op_names=tuple(f"t{i}" for i in range(n)), device_names=tuple(f"d{d}" for d in range(m)),
        time=time, energy=np.zeros((n, m), dtype=np.int64),
        mem=np.zeros((n, m), dtype=np.int64) if mem is None else np.repeat(np.asarray(mem, dtype=np.int64)[:, None], m, 1),
        allowed=np.ones((n, m), dtype=bool) if allowed is None else np.asarray(allowed, dtype=bool),
        edges=edges, edge_bytes=np.ones(E, dtype=np.int64), idle_power_mw=np.zeros(m, dtype=np.int64),
        mem_capacity=np.full(m, 10**9, dtype=np.int64) if capacity is None else np.asarray(capacity, dtype=np.int64),
        send_time=np.asarray(send, dtype=np.int64), display_time_unit="tu", display_per_time_unit=per_unit,
        transfer_time=transfer, transfer_energy=np.zeros((E, m, m), dtype=np.int64), colocation=colocation)
    return DagProblem(tables, ("makespan",), memory=False, tensor_per_device=True)


def fork() -> tuple[DagProblem, np.ndarray]:
    """a (2) -> b (5) on d0, a -> c (10) on d1; the tensor takes 3, a send 1 on either device."""
    problem = tf_problem([[2, 2], [5, 5], [10, 10]], [(0, 1), (0, 2)], [3, 3], [1, 1])
    return problem, np.array([0, 0, 1])


def test_a_send_is_a_queue_entry_that_waits_its_turn() -> None:
    """Send order and occupancy (``Device.addSendReceiveNodes``, ``Device.schedule``,
    ``FifoScheduler``).

    When a starts, its local successor b and then its send join d0's queue. FIFO takes b
    first: a 0-2, b 2-7, the send 7-8, the tensor arrives at 8 + 3 = 11, c runs 11-21:
    makespan 21. The decoder's own rule sends right after the compute (send 2-3, b 3-8, c
    6-16: 16), so this makespan is the simulator's rule, not the decoder's.
    """
    problem, devices = fork()
    run = simulate_paper(problem, devices, "fifo")
    assert run.makespan == 21
    assert run.order.tolist() == [0, 1, 2]
    assert run.sends.tolist() == [[0, 1, 7, 8, 11]]
    assert problem.schedule(problem.genome(devices, run.order)).makespan == 16


def test_shuffled_hash_set_orders_give_either_fifo_order_of_the_fork() -> None:
    """The simulator appends a started task's successors and sends in a Java hash-set order, which
    changes from run to run; ``shuffle`` draws it. On the fork, FIFO then runs b before the send
    (makespan 21, as above) or the send before b (send 2-3, arrival 6, c 6-16, b 3-8: 16)."""
    problem, devices = fork()
    seen = {simulate_paper(problem, devices, "fifo", shuffle=np.random.default_rng(s)).makespan for s in range(12)}
    assert seen == {16, 21}


def test_pct_sends_the_critical_tensor_first_and_the_receive_takes_no_time() -> None:
    """PCT values on the graph with its send and receive (``Node.calculateRemainedTimeToFinishTillSinkNode``).

    c = 10; the receive = 1 (a send's time on d1) + 10 = 11; the send = 1 + 3 + 11 = 15;
    b = 5; a = 2 + max(5, 15) = 17. After a, PCT takes the send (15 > 5): send 2-3, arrival 6,
    b 3-8; d1 was idle and starts c at the arrival, 6-16 (the receive counts in the value but
    occupies no device): makespan 16.
    """
    problem, devices = fork()
    g = graph_of(problem)
    assert remaining_time(g, devices).tolist() == [17, 5, 10, 15]
    run = simulate_paper(problem, devices, "pct")
    assert run.makespan == 16
    assert run.sends.tolist() == [[0, 1, 2, 3, 6]]
    assert run.start.tolist() == [0, 3, 6]


def test_pct_lets_a_send_wait_behind_more_urgent_compute() -> None:
    """a (2) -> b (10) on d0, a -> c (1) on d1; tensor 1, sends 1.

    Values: c 1, receive 1 + 1 = 2, send 1 + 1 + 2 = 4, b 10, a 12. PCT runs b before the
    send (10 > 4): a 0-2, b 2-12, send 12-13, arrival 14, c 14-15: makespan 15 (the decoder,
    sending right after a, gives a 0-2, send 2-3, c 4-5, b 3-13: 13).
    """
    problem = tf_problem([[2, 2], [10, 10], [1, 1]], [(0, 1), (0, 2)], [1, 1], [1, 1])
    devices = np.array([0, 0, 1])
    assert remaining_time(graph_of(problem), devices).tolist() == [12, 10, 1, 4]
    run = simulate_paper(problem, devices, "pct")
    assert run.makespan == 15 and run.sends.tolist() == [[0, 1, 12, 13, 14]]
    assert problem.schedule(problem.genome(devices, run.order)).makespan == 13


def test_a_tensor_crosses_to_a_device_once() -> None:
    """Tensor-once rule (``Device.addSendReceiveNodes``: one send/receive pair per producer and
    remote device).

    a (2) on d0 feeds b (5) on d0 and c1, c2 (20 each) on d1; tensor 3, sends 1. One send:
    values c 20, receive 21, send 25, b 5, so a 0-2, send 2-3, b 3-8; arrival 6, c1 6-26,
    c2 26-46 (equal values: the earlier queue entry, c1): makespan 46. With c2 on d2 instead
    there are two sends, in device order: 2-3 (arrives 6) and 3-4 (arrives 7); b 4-9, c1 6-26,
    c2 7-27: makespan 27.
    """
    time = [[2, 2, 2], [5, 5, 5], [20, 20, 20], [20, 20, 20]]
    problem = tf_problem(time, [(0, 1), (0, 2), (0, 3)], [3, 3, 3], [1, 1, 1])
    one = simulate_paper(problem, np.array([0, 0, 1, 1]), "pct")
    assert one.makespan == 46 and one.sends.tolist() == [[0, 1, 2, 3, 6]]
    two = simulate_paper(problem, np.array([0, 0, 1, 2]), "pct")
    assert two.makespan == 27 and two.sends.tolist() == [[0, 1, 2, 3, 6], [0, 2, 3, 4, 7]]
    assert two.start.tolist() == [0, 4, 6, 7]


def test_equal_values_go_to_the_earlier_queue_entry() -> None:
    """Tie-breaking (the schedulers' strict ``>`` scan over the linked-list queue: the earlier
    entry wins, whatever its index).

    Tasks a (0), y (1), p (2), x (3); a -> x on d0, p -> y with p on d1 and y on d0; a takes 2,
    p 1, x and y 4; tensors and sends take no time. x joins d0's queue when a starts (0); p's
    tensor arrives at 1, and d0 takes it in at its next decision (2), so y joins after x.
    x and y both have the PCT value 4: x runs first though y has the lower index: a 0-2,
    x 2-6, y 6-10: makespan 10.
    """
    time = [[2, 2], [4, 4], [1, 1], [4, 4]]
    problem = tf_problem(time, [(0, 3), (2, 1)], [0, 0], [0, 0])
    run = simulate_paper(problem, np.array([0, 0, 1, 0]), "pct")
    assert run.start.tolist() == [0, 6, 0, 2] and run.makespan == 10


def test_fifo_takes_arrived_tensors_in_the_order_they_were_sent() -> None:
    """FIFO queue order for arrivals (``Device.receivePastData`` walks its receive list in the order
    the sends were made).

    d0: p1 (1) and p2 (1), each feeding c1 / c2 (1 each) on d1; p1's tensor takes 6, p2's 1;
    sends 1. d1 runs L (10) from 0. FIFO on d0: p1 0-1, p2 1-2, send of p1 2-3 (arrives 9),
    send of p2 3-4 (arrives 5). At 10 d1 takes both in, p1's first (sent first, though it
    arrived later): c1 10-11, c2 11-12: makespan 12.
    """
    problem = tf_problem([[1, 1], [1, 1], [1, 1], [1, 1], [10, 10]], [(0, 2), (1, 3)], [6, 1], [1, 1])
    run = simulate_paper(problem, np.array([0, 0, 1, 1, 1]), "fifo")
    assert run.sends.tolist() == [[0, 1, 2, 3, 9], [1, 1, 3, 4, 5]]
    assert run.start.tolist() == [0, 1, 10, 11, 0] and run.makespan == 12


def test_lro_counts_a_send_and_a_receive_as_work() -> None:
    """LRO values (``Node.calculateRemainedOperationsTillSinkNode``: a send and a receive are 10
    operations each, here one send's mean time).

    The graph of the PCT test above on two identical devices: c 1, the send 1 + (1 + 1) = 3,
    b 10, a 2 + 10 = 12. LRO runs b before the send, as PCT did: makespan 15.
    """
    problem = tf_problem([[2, 2], [10, 10], [1, 1]], [(0, 1), (0, 2)], [1, 1], [1, 1])
    devices = np.array([0, 0, 1])
    assert remaining_work(graph_of(problem), devices).tolist() == [12.0, 10.0, 1.0, 3.0]
    assert simulate_paper(problem, devices, "lro").makespan == 15


def test_msr_scores_a_send_to_an_idle_device_highest() -> None:
    """MSR (``HighDegreeVerticesFirstScheduler.getValueForNode``).

    a (2) -> b (5) on d0, a -> c (10) on d1 (tensor 3, sends 1), and b -> e1..e4 (1 each, d0),
    so b scores 4 (one per local successor). The send scores 3, plus 5 when d1 has nothing
    ready: 8 > 4, so a 0-2, send 2-3 (arrives 6), b 3-8, e1-e4 8-12, c 6-16: makespan 16.
    With two more sources L1, L2 (20 each) on d1, d1 still holds L2 when a ends, the send
    scores 3 < 4: b 2-7, send 7-8 (e's score 0; arrives 11), e1-e4 8-12; d1 runs L1 0-20, then
    L2 (PCT tie-break 20 > 10) 20-40, c 40-50: makespan 50.
    """
    time = [[2, 2], [5, 5], [10, 10], [1, 1], [1, 1], [1, 1], [1, 1]]
    edges = [(0, 1), (0, 2), (1, 3), (1, 4), (1, 5), (1, 6)]
    problem = tf_problem(time, edges, [3] * 6, [1, 1])
    idle = simulate_paper(problem, np.array([0, 0, 1, 0, 0, 0, 0]), "msr")
    assert idle.makespan == 16 and idle.sends.tolist() == [[0, 1, 2, 3, 6]]
    busy_problem = tf_problem([*time, [20, 20], [20, 20]], edges, [3] * 6, [1, 1])
    busy = simulate_paper(busy_problem, np.array([0, 0, 1, 0, 0, 0, 0, 1, 1]), "msr")
    assert busy.sends.tolist() == [[0, 1, 7, 8, 11]]
    assert busy.start[[7, 8, 2]].tolist() == [0, 20, 40] and busy.makespan == 50


def cp_problem(allowed=None) -> DagProblem:
    """Speeds 1, 4, 2 (d1 fastest, then d2, then d0): chain a -> b -> c (8 operations each) and two
    free tasks x, y (4 operations); every tensor 8 bytes, rates from d0: 2 to d1 and 4 to d2."""
    ops = np.array([8, 8, 8, 4, 4])
    speed = np.array([1, 4, 2])
    time = ops[:, None] // speed[None, :]
    rate = np.array([[0, 2, 4], [2, 0, 4], [4, 4, 0]])
    tt = np.zeros((2, 3, 3), dtype=np.int64)
    off = rate > 0
    tt[:, off] = 8 // rate[off]
    return tf_problem(time, [(0, 1), (1, 2)], tt, [10, 2, 5], allowed)


def test_cp_rank_uses_the_mean_speed_and_device_zeros_mean_rate() -> None:
    """``PartitioningPreprocessor.preprocess``: a task's rank weight is ``#ops / mean speed`` and a
    tensor's ``size / (sum of device 0's rates / devices)``.

    a: 8 operations at the mean speed 7/3 = 24/7; from its times 8, 2, 4: 3 / (1/8 + 1/2 + 1/4)
    = 24/7. Its tensor: 8 bytes at (0 + 2 + 4) / 3 = 2 per unit = 4; from the transfer times
    4 (to d1) and 2 (to d2): 3 / (1/4 + 1/2) = 4. The path from the entry of largest rank:
    a -> b -> c.
    """
    g = graph_of(cp_problem())
    assert mean_speed_time(g)[0] == pytest.approx(24 / 7)
    assert mean_rate_transfer(g).tolist() == pytest.approx([4.0, 4.0, 0.0, 0.0, 0.0])
    assert cp_critical_path(g).tolist() == [0, 1, 2]


def test_cp_rank_counts_a_constrained_tasks_operations() -> None:
    """``#operations / averageComputationSpeed`` does not depend on where a task may run. The CP
    problem with b allowed on d2 only and, as the TF importer writes it, time 0 on d0 and d1. The
    speeds come from the tasks every device may run: a, c, x, y take 24, 6 and 12 in all on d0, d1, d2,
    so the speeds are 1/24, 1/6, 1/12 over their mean 7/72: 3/7, 12/7, 6/7. b's time at the mean speed,
    its time on d2 (4) times 6/7, is 24/7 like a's and c's (the harmonic mean of b's row gave 0). The
    devices by speed: d1, d2, d0."""
    allowed = np.ones((5, 3), dtype=bool)
    allowed[1, :2] = False
    problem = cp_problem(allowed)
    time = problem.tables.time.copy()
    time[1, :2] = 0
    g = graph_of(tf_problem(time, [(0, 1), (1, 2)], problem.tables.transfer_time, [10, 2, 5], allowed))
    assert mean_speed_time(g)[:3].tolist() == pytest.approx([24 / 7] * 3)
    assert speed_order(g).tolist() == [1, 2, 0]


def test_cp_places_the_path_on_the_fastest_device_and_the_rest_by_load_before_adding() -> None:
    """``AssignLongestPath.partition``: the path a, b, c goes to d1 (fastest); then x and y in
    topological order to the device with the least load *before* adding them
    (``getDeviceIdToAssignNonCriticalPathComponent``): loads d0 0, d1 6, d2 0, so x -> d0
    (tie, lower index), then d0 holds 4, so y -> d2. (The rule "least load after adding" would
    put x on d2: 0 + 2 < 0 + 4.)
    """
    assert PARTITIONERS["cp"](cp_problem()).tolist() == [1, 1, 1, 0, 2]


def test_cp_scan_skips_the_device_after_one_that_cannot_take_the_task() -> None:
    """``AssignLongestPath.getDeviceIdToAssignComponentTo`` steps past the next device after one
    that cannot take the task (its loop adds 1 twice).

    b may not run on d1: the scan tries d1 (no), skips d2 and takes d0, although d2 is faster.
    Loads then d0 8, d1 4 (a and c), d2 0: x -> d2; d2 then holds 2, still the least: y -> d2.
    """
    allowed = np.ones((5, 3), dtype=bool)
    allowed[1, 1] = False
    assert PARTITIONERS["cp"](cp_problem(allowed)).tolist() == [1, 0, 1, 2, 2]


def test_hash_is_the_simulators_round_robin() -> None:
    """``Hashing.partition``: colocation groups first, then the other tasks in a hash order (ours:
    crc32 of the names), each to the round-robin counter's device or the next that can take it.

    Tasks t0..t4 on two devices, t1 and t3 colocated. crc32: t4 725,506,744 < t0 743,677,601 <
    t2 3,260,940,173. The group goes to d0 (counter 0), then t4 d1, t0 d0, t2 d1. With t0 barred
    from d0, it probes on to d1 and the counter still moves by one: t2 d1.
    """
    time = [[1, 1]] * 5
    coloc = (None, "g", None, "g", None)
    problem = tf_problem(time, [(0, 1)], [1], [1, 1], colocation=coloc)
    assert round_robin_partition(problem).tolist() == [0, 0, 1, 0, 1]
    allowed = np.ones((5, 2), dtype=bool)
    allowed[0, 0] = False
    barred = tf_problem(time, [(0, 1)], [1], [1, 1], allowed, colocation=coloc)
    assert round_robin_partition(barred).tolist() == [1, 0, 1, 0, 1]
    assert run_paper(problem, "hash+fifo").devices.tolist() == [0, 0, 1, 0, 1]


def test_batchsplit_cuts_the_importance_order_into_equal_counts_by_device_index() -> None:
    """``RangeBasedImportancePartitioning.partition``: a -> b (4 operations each) and two free tasks c
    (2) and d (1) on a slow d0 (speed 1) and a fast d1 (speed 2). Longest paths through the
    tasks: a 8, b 8, c 2, d 1 (operations; the order is the same in time at the mean speed), so
    the order is a, b, c, d; with 4 / 2 = 2 tasks per device, a and b go to device int(0 / 2) =
    int(1 / 2) = 0, c and d to 1: the most important half on the slow device, as the simulator
    indexes its devices unsorted. With b barred from d0 it probes on to d1.
    """
    time = [[4, 2], [4, 2], [2, 1], [1, 1]]
    problem = tf_problem(time, [(0, 1)], [1], [1, 1])
    assert importance_batch_partition(problem).tolist() == [0, 0, 1, 1]
    allowed = np.ones((4, 2), dtype=bool)
    allowed[1, 0] = False
    barred = tf_problem(time, [(0, 1)], [1], [1, 1], allowed)
    assert importance_batch_partition(barred).tolist() == [0, 1, 1, 1]
    assert run_paper(problem, "batchsplit+pct").devices.tolist() == [0, 0, 1, 1]


def check_run(problem: DagProblem, run) -> None:
    """An independent check of a simulated run: durations, one send per tensor and remote device,
    no overlap on a device (tasks and sends), every input there before its consumer starts."""
    t = problem.tables
    dev, start, finish = run.devices, run.start, run.finish
    n = t.n_ops
    assert (finish - start == t.time[np.arange(n), dev]).all()
    busy: dict[int, list[tuple[int, int]]] = {d: [] for d in range(t.n_dev)}
    for i in range(n):
        busy[int(dev[i])].append((int(start[i]), int(finish[i])))
    arrival = {}
    for producer, b, s0, s1, at in run.sends.tolist():
        assert s1 - s0 == t.send_time[dev[producer]] and s0 >= finish[producer]
        first = int(np.flatnonzero(t.edges[:, 0] == producer)[0])
        assert at == s1 + int(t.edge_transfer_time(first, int(dev[producer]), b))
        assert (producer, b) not in arrival
        arrival[(producer, b)] = at
        busy[int(dev[producer])].append((s0, s1))
    needed = {(int(u), int(dev[w])) for u, w in t.edges.tolist() if dev[u] != dev[w]}
    assert set(arrival) == needed
    for spans in busy.values():
        spans.sort()
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False))
    for u, w in t.edges.tolist():
        ready = finish[u] if dev[u] == dev[w] else arrival[(u, int(dev[w]))]
        assert start[w] >= ready
    assert run.makespan == finish.max()


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("rule", ["fifo", "lro", "pct", "msr"])
def test_every_simulated_run_is_a_valid_schedule(seed: int, rule: str) -> None:
    """Random graphs (8-14 tasks, 2-4 devices, fan-out), random devices, with and without shuffled
    hash-set orders: every run passes the independent check above."""
    from dse.cost.synthetic import random_tables

    rng = np.random.default_rng(seed)
    t = random_tables(seed, n_ops=int(rng.integers(8, 15)), n_dev=int(rng.integers(2, 5)), disallow=0.0,
                      max_preds=3)
    t = t.replaced(send_time=rng.integers(1, 6, size=t.n_dev).astype(np.int64))
    problem = DagProblem(t, ("makespan",), memory=False, tensor_per_device=True)
    devices = rng.integers(0, t.n_dev, size=t.n_ops)
    check_run(problem, simulate_paper(problem, devices, rule))
    check_run(problem, simulate_paper(problem, devices, rule, shuffle=np.random.default_rng(seed)))


def test_the_paper_simulation_needs_the_tf_rules() -> None:
    problem, devices = fork()
    plain = DagProblem(problem.tables, ("makespan",), memory=False, tensor_per_device=False)
    with pytest.raises(ValueError, match="tensor_per_device"):
        simulate_paper(plain, devices, "pct")
    with pytest.raises(ValueError, match="unknown scheduler"):
        simulate_paper(problem, devices, "nope")
    with pytest.raises(ValueError, match="unknown pair 'cp\\+nope'.*schedulers: fifo"):
        run_paper(problem, "cp+nope")


def test_run_paper_partitions_then_simulates() -> None:
    """cp, then PCT, on the fork (identical devices).

    Ranks (``Node.calculateUpwardsRank``): the tensor at device 0's mean rate takes 2 / (1/3) = 6;
    the exits report in index order: b (5) first, so a holds 5 + 6 = 11; c's 10 does not beat 11,
    so a keeps b and ends at 11 + 2 = 13. The path a -> b goes to d0 (equal speeds: the lower
    index); c then goes to d1 (load 0 < 7). PCT values: b 5, the send 1 + 3 + (1 + 10) = 15, c 10,
    a 2 + 15 = 17. a 0-2; the send (15) before b (5): send 2-3, arrival 6, c 6-16 on d1; b 3-8
    on d0: makespan 16.
    """
    problem, _ = fork()
    run = run_paper(problem, "cp+pct")
    assert run.devices.tolist() == [0, 0, 1]
    assert run.makespan == 16 and run.sends.tolist() == [[0, 1, 2, 3, 6]]


def test_cp_rank_keeps_the_first_successor_unless_a_later_one_beats_its_held_value() -> None:
    """``Node.calculateUpwardsRank`` compares a later successor's rank with the value the task holds
    (first successor's rank + the task's tensor time), not with the first successor's rank.

    The fork: b (rank 5) reports first, a holds 11; c (rank 10 > 5, but not > 11) does not take
    over, so the path is a -> b although c's rank is larger. When c reports first (the exits in
    the other order), a holds 16 and b's 5 does not take over: a -> c.
    """
    problem, _ = fork()
    g = graph_of(problem)
    assert cp_critical_path(g).tolist() == [0, 1]

    class Reversed:
        def permutation(self, k: int) -> np.ndarray:
            return np.arange(k)[::-1]

    assert cp_critical_path(g, shuffle=Reversed()).tolist() == [0, 2]  # type: ignore[arg-type]


def test_cp_strict_fails_where_the_simulators_scan_finds_no_device() -> None:
    """``AssignLongestPath.getDeviceIdToAssignComponentTo`` returns -1 (the run fails) when its
    skipping scan finds no device; ``strict`` says so instead of taking another device.

    b (on the path a -> b -> c) may run on d2 only; devices by speed d1, d2, d0: the scan tries d1
    (no), skips d2, tries d0 (no) and ends."""
    problem = cp_problem(allowed=np.array([[1, 1, 1], [0, 0, 1], [1, 1, 1], [1, 1, 1], [1, 1, 1]], dtype=bool))
    with pytest.raises(InfeasibleError, match="finds no device for task"):
        cp_partition(problem, strict=True)
    assert cp_partition(problem)[1] == 2


def icp_problem(per_unit: float = 1.0) -> DagProblem:
    """a (4 operations) -> b (2) -> c (3) and a -> x (10) on two devices of speed 1; b may run on d1
    only (a device constraint)."""
    allowed = np.ones((4, 2), dtype=bool)
    allowed[1, 0] = False
    return tf_problem([[4, 4], [0, 2], [3, 3], [10, 10]], [(0, 1), (1, 2), (0, 3)], [1, 1, 1], [1, 1], allowed,
                      per_unit=per_unit)


def test_icp_takes_the_path_to_the_sink_with_most_operations_before_it() -> None:
    """``DividePathPartitioning.getLongestPath`` (with ``Node.calculateOpsTillNodeWithoutSendReceive``),
    ``assignPath``, ``getAssignmentDevice``; ``graph/Path.java``: ``addNode``.

    Round 1: the operations before each task: b 4, c 4 + 2 = 6, x 4. The sinks c (6) and x (4): c,
    although a -> x holds more operations (14 > 9): the sink's own operations do not count. The
    path c, b, a (from the sink) forms subpaths from the sink end: [c], then b (constrained) closes
    it and starts [b], which a joins. [b, a] goes first, to d1 (b's only device): load d1 4 + 2 =
    6; [c] to the device of least load, d0 (0 < 6): load 3. Only the path's edges leave the graph:
    a keeps its edge to x and stays a source. Round 2: a (assigned) -> x; the subpath [x] goes to
    d0 (3 < 6). Devices [1, 1, 0, 0]; no tie arises, so every hash-set order gives them.
    """
    problem = icp_problem()
    assert divide_path_partition(problem).tolist() == [1, 1, 0, 0]
    for seed in range(4):
        assert divide_path_partition(problem, shuffle=np.random.default_rng(seed)).tolist() == [1, 1, 0, 0]
    assert run_paper(problem, "icp+fifo").devices.tolist() == [1, 1, 0, 0]


def test_icp_compares_loads_in_whole_time_units() -> None:
    """``DividePathPartitioning.getAssignmentDevice`` divides integers:
    ``getSumOfOperationsOfAlreadyAssignedNodes() / getNumberOfOperations()``.

    a (6) -> b (3) and c (2) -> d (2) on two equal devices. The operations before the sinks: b 6,
    d 2, so a, b go first, to d0 (both empty: the lower index): load 9. Then c, d: with times in
    tenths of a unit, d0's load is 0.9 units, 0 when truncated, a tie with d1: d0. In whole units
    (the same times in units) 9 > 0: d1.
    """
    time = [[6, 6], [3, 3], [2, 2], [2, 2]]
    tenths = tf_problem(time, [(0, 1), (2, 3)], [1, 1], [1, 1], per_unit=0.1)
    assert divide_path_partition(tenths).tolist() == [0, 0, 0, 0]
    units = tf_problem(time, [(0, 1), (2, 3)], [1, 1], [1, 1])
    assert divide_path_partition(units).tolist() == [0, 0, 1, 1]


def mite_problem(mem=None) -> DagProblem:
    """a (4 operations) -> b (2) and c (4) on d0 (speed 2) and d1 (speed 1); a's tensor takes 3 units
    on the link; RAM 100 per device."""
    return tf_problem([[2, 4], [2, 4], [1, 2]], [(0, 2)], [3], [1, 1], mem=mem, capacity=[100, 100])


def test_mite_multiplies_traffic_execution_importance_and_memory_fill() -> None:
    """``WeightFunctionPartitioning.getDeviceIdToAssignComponentTo``, ``calculateImportance``;
    ``PartitioningStrategy.additionalTraffic``, ``getExecutionTimeForDevice``.

    Longest paths of operations through the tasks: a 6, c 4, b 6 (over 6: importance 1, 2/3, 1);
    d1's speed is half d0's. Tasks in topological order a, c, b; every device can take each.
    a: execution 2 and 4 (over 4: 0.5, 1), no traffic (factor 1), importance-speed 1 - 1 = 0 (counts
    0.000001) and 1 - 0.5 = 0.5, both devices empty (fill 1 / 10 each): d0 (5e-8 < 0.05). With a's 10
    bytes of RAM d0 is 0.1 full. c: execution 4 and 4 (1, 1), importance-speed 1 - 2/3 = 1/3 and
    1 - 1/3 = 2/3, fill 0.1 and (empty) 0.1 / 10: d0 1/30 > d1 2/300: d1. b: execution 3 and 6
    (0.5, 1); traffic 0 on d0 (0.000001), 3 on d1 (1); importance-speed 0.000001 and 0.5: d0.
    Devices [0, 1, 0]. Without RAM booked (every fill counts 0.1), c goes to d0 (1/30 < 2/30).
    """
    assert weight_function_partition(mite_problem(mem=[10, 10, 0])).tolist() == [0, 1, 0]
    assert weight_function_partition(mite_problem()).tolist() == [0, 0, 0]
    assert run_paper(mite_problem(mem=[10, 10, 0]), "mite+pct").devices.tolist() == [0, 1, 0]


def dfs_problem(tt: int) -> DagProblem:
    """a (1 operation) -> c (4), b (3) -> c, b -> d (2) on two devices of speed 1; each tensor takes
    ``tt`` on the link."""
    return tf_problem([[1, 1], [3, 3], [4, 4], [2, 2]], [(0, 2), (1, 2), (1, 3)], [tt] * 3, [1, 1])


def test_dfs_walks_from_the_most_important_source_and_weighs_execution_by_traffic() -> None:
    """``DFSPartitioning.partition``, ``dfs``, ``getDeviceIdToAssignComponentTo``.

    Longest paths of operations through the sources: a 1 + 4 = 5, b 3 + 4 = 7, so the walk starts at
    b: b, c, d, then a. Free links (no traffic anywhere: factor 1), the execution factor alone: b
    3 / 3 on both, d0; c 7 and 4, d1; d 5 and 6, d0; a 6 and 5, d1: devices [1, 0, 1, 0] (index
    order a, b, c, d would give [0, 1, 0, 1]). With tensors of 5 units: c on d0 has no traffic
    (0.000001) and on d1 b's tensor (1): d0; d likewise; a on d1 would send to c on d0: d0.
    Devices [0, 0, 0, 0].
    """
    assert dfs_paper_partition(dfs_problem(0)).tolist() == [1, 0, 1, 0]
    assert dfs_paper_partition(dfs_problem(5)).tolist() == [0, 0, 0, 0]
    assert run_paper(dfs_problem(0), "dfs+fifo").devices.tolist() == [1, 0, 1, 0]


def test_the_simulators_partitioners_fail_where_no_device_can_take_a_task() -> None:
    """The simulator leaves a task no device can take unassigned (``getDeviceIdToAssignComponentTo``
    returns -1, ``DividePathPartitioning.assignPath`` prints "no valid partitioning"); ``strict``
    (``run_paper``) raises, otherwise the task goes to the fastest device that can take it.

    c needs 60 bytes of RAM, a and b 50; devices of 100 (the problem's memory constraint on). ICP's
    one path a -> b -> c forms one subpath of 160 bytes, which no device can take. Not strict: a and
    b go to d0 (equal times: the lower index), c no longer fits there: d1. With c needing 150 bytes,
    MITE and DFS find no device for c."""
    problem = tf_problem([[1, 1], [1, 1], [1, 1]], [(0, 1), (1, 2)], [1, 1], [1, 1], mem=[50, 50, 60],
                         capacity=[100, 100])
    memory = DagProblem(problem.tables, ("makespan",), memory=True, tensor_per_device=True)
    with pytest.raises(InfeasibleError, match="icp: the simulator finds no device"):
        divide_path_partition(memory, strict=True)
    with pytest.raises(InfeasibleError, match="icp"):
        run_paper(memory, "icp+fifo")
    assert divide_path_partition(memory).tolist() == [0, 0, 1]
    big = tf_problem([[1, 1], [1, 1], [1, 1]], [(0, 1), (1, 2)], [1, 1], [1, 1], mem=[10, 10, 150],
                     capacity=[100, 100])
    big_memory = DagProblem(big.tables, ("makespan",), memory=True, tensor_per_device=True)
    with pytest.raises(InfeasibleError, match="mite: the simulator finds no device for task 't2'"):
        run_paper(big_memory, "mite+pct")
    with pytest.raises(InfeasibleError, match="dfs: the simulator finds no device for task 't2'"):
        run_paper(big_memory, "dfs+pct")
