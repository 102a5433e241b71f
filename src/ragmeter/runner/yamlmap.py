"""Moved to :mod:`ragmeter.io.yamlmap` (the YAML line-map loader sits in ``io``, below every
package that reads YAML); this alias keeps the old import path working and is deprecated."""

from __future__ import annotations

from ragmeter.io.yamlmap import LineMap, format_path, load_yaml

__all__ = ["LineMap", "format_path", "load_yaml"]
