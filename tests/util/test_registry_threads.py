"""Registries load their plugins once, and threads racing on the first lookup all see them complete."""

from __future__ import annotations

import subprocess
import sys

RACE = """
import threading
from dse.solvers.registry import lookup
from dse.mapping.registry import families
seen = []
def look():
    seen.append((len(lookup("all")), tuple(families())))
threads = [threading.Thread(target=look) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()
print(len(set(seen)), seen[0][0] >= 2, "pipeline" in seen[0][1])
"""


def test_first_lookups_from_many_threads_see_full_registries() -> None:
    # A fresh interpreter, so the registries are empty when the threads start.
    out = subprocess.run([sys.executable, "-c", RACE], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split() == ["1", "True", "True"]
