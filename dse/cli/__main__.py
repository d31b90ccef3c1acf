"""``python -m dse.cli``: the ``dse`` command."""

from dse.cli.app import run

run()
