"""Pareto plots drawn by a forked child (:mod:`dse.viz.picture_process`): the same file as drawn here, and a
dead child leaves the drawing to the caller. The fork needs a process where matplotlib is not loaded and no
other thread runs, so the checks run in a fresh interpreter."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = r"""
import os, signal, sys
import dse
from dse.viz.figures import save
from dse.viz.fronts import plot_fronts
from dse.viz import picture_process
from dse.viz.picture_process import PictureProcess

problem = dse.load_problem("quickstart")
front = dse.solve(problem, "exhaustive", seed=0)
child_drawn, here_drawn = sys.argv[1], sys.argv[2]
with PictureProcess.start(shared=problem.objectives) as pictures:
    print("drawn by the child", pictures.draw_fronts([front], 0.1, child_drawn))
    pid = pictures.pid
    print("second plot", pictures.draw_fronts([front, front], None, os.path.join(os.path.dirname(child_drawn), "second.png")))
print("child ended", pictures.pid is None)
dead = PictureProcess.start(shared=problem.objectives)
os.kill(dead.pid, signal.SIGKILL)
print("dead child draws", dead.draw_fronts([front], None, os.path.join(os.path.dirname(child_drawn), "dead.png")), dead.pid)
later = os.path.join(os.path.dirname(child_drawn), "later.png")
with PictureProcess.start(shared=problem.objectives) as pictures:
    print("taken to draw later", pictures.draw_later([front], 0.1, later))
    pictures.settle()
    print("in place once settled", os.path.exists(later), pictures.pid is not None)
    pictures.draw_later([front, front], None, os.path.join(os.path.dirname(child_drawn), "later2.png"))
print("in place once closed", os.path.exists(os.path.join(os.path.dirname(child_drawn), "later2.png")))
dead = PictureProcess.start(shared=problem.objectives)
dead_later = os.path.join(os.path.dirname(child_drawn), "dead_later.png")
dead.draw_later([front], 0.1, dead_later)
os.kill(dead.pid, signal.SIGKILL)
print("a plot its child died on: matplotlib loaded here", "matplotlib.figure" in sys.modules)
dead.settle()
print("is drawn here", os.path.exists(dead_later), dead.pid, "matplotlib loaded here", "matplotlib.figure" in sys.modules)
print("then matplotlib loaded here", "matplotlib.figure" in sys.modules)
picture_process.MAX_PARENT_RSS = 1  # a parent past the memory bound forks no child
print("no child past the memory bound", PictureProcess.start() is None)
picture_process.MAX_PARENT_RSS = 1 << 30
save(plot_fronts([front], error=0.1), here_drawn)
print("no child once loaded", PictureProcess.start() is None)
"""


@pytest.mark.slow
def test_the_child_draws_the_same_file_and_a_dead_one_leaves_it_to_the_caller(tmp_path: Path) -> None:
    child, here = tmp_path / "child.png", tmp_path / "here.png"
    run = subprocess.run([sys.executable, "-c", SCRIPT, str(child), str(here)], capture_output=True, text=True,
                         timeout=120, stdin=subprocess.DEVNULL)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["drawn by the child True", "second plot True", "child ended True",
                                       "dead child draws False None", "taken to draw later True",
                                       "in place once settled True True", "in place once closed True",
                                       "a plot its child died on: matplotlib loaded here False",
                                       "is drawn here True None matplotlib loaded here True",
                                       "then matplotlib loaded here True",
                                       "no child past the memory bound True",
                                       "no child once loaded True"]
    assert child.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert child.read_bytes() == here.read_bytes()  # the same plot, byte for byte
    assert (tmp_path / "second.png").stat().st_size > 0
    assert not (tmp_path / "dead.png").exists()
    # drawn later by the child (replaced atomically), and by the caller when its child died: the same plot
    assert (tmp_path / "later.png").read_bytes() == here.read_bytes()
    assert (tmp_path / "dead_later.png").read_bytes() == here.read_bytes()
