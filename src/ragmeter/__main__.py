"""``python -m ragmeter``: the same as the ``ragmeter`` command."""

import sys

from ragmeter.cli.entry import main

sys.exit(main())
