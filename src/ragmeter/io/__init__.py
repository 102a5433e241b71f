"""Readers and writers. Everything that touches a file lives under :mod:`ragmeter.io`.

This package stays import-light: submodules pull in pyarrow or YAML only when used.
"""

from ragmeter.errors import InputError

__all__ = ["InputError"]
