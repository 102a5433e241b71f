"""``python -m ragmeter``: the same as the ``ragmeter`` command."""

from ragmeter.cli.entry import console

console()
