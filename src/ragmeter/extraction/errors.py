"""Old import path of :mod:`ragmeter.records.errors`, kept so existing imports keep working.

The records moved below ``ragmeter.io`` so that the readers no longer import this package back.
This name is the very same module object, so attributes, private helpers and monkeypatches behave
exactly as before.
"""

import sys

from ragmeter.records import errors as _module

sys.modules[__name__] = _module
