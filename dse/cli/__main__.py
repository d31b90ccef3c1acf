"""``python -m dse.cli``: the ``dse`` command."""

import sys

from dse.cli.app import main

sys.exit(main())
