"""The ``ragmeter`` command. Each command group lives in its own module here; see app.py."""
