"""UltraRAG integration: the ``build`` tool and ``ragmeter mcp ultrarag-init``.

At ``ultrarag build`` UltraRAG calls every server's ``build`` tool with the server folder's
``parameter.yaml``; the server writes ``server.yaml`` beside it. Each tool's parameters are
bound, in order, to the names of its I/O spec (``a,b,c->out``): a name that is a key of
``parameter.yaml`` becomes ``$name`` (read from the file), any other name is a pipeline memory
variable. Tools without an I/O spec bind every parameter to its own name. docs/mcp.md walks
through a pipeline.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragmeter.errors import UsageError
from ragmeter.mcp.catalogue import Spec
from ragmeter.mcp.paths import shown_as
from ragmeter.mcp.settings import Settings

__all__ = ["BuildTool", "binding", "init_folder", "server_entry"]


def binding(name: str, params: dict[str, Any]) -> str:
    """``$name`` for a key of ``parameter.yaml``, else the bare memory-variable name."""
    return f"${name}" if name in params and not name.startswith("$") else name


def server_entry(names: Sequence[str], io: str | None, params: dict[str, Any]) -> dict[str, Any]:
    """One tool's entry of ``server.yaml``: ``input`` (parameter → binding) and ``output``.

    >>> server_entry(["run_path", "metrics"], "run_path,ir_metrics->eval_res", {"ir_metrics": []})
    {'input': {'run_path': 'run_path', 'metrics': '$ir_metrics'}, 'output': ['eval_res']}
    """
    inputs, outputs = io.split("->", 1) if io and "->" in io else (io, None)
    specs = [s.strip() for s in inputs.split(",")] if inputs else list(names)
    pairs = zip(names, specs, strict=False)  # UltraRAG binds positionally; extras stay unbound
    entry: dict[str, Any] = {"input": {n: binding(s, params) for n, s in pairs}}
    if outputs is not None and outputs.strip() and outputs.strip().lower() != "none":
        entry["output"] = [binding(o.strip(), params) for o in outputs.split(",")]
    return entry


class BuildTool:
    """The ``build`` tool, which knows the tools this server serves."""

    def __init__(self, settings: Settings, specs: Sequence[Spec]) -> None:
        self.settings = settings
        self.specs = [s for s in specs if s.name != "build"]
        self.functions: dict[str, Any] = {}

    def _params(self, name: str) -> list[str]:
        from ragmeter.mcp.compat import CompatTools
        from ragmeter.mcp.judge_tool import JudgeTool
        from ragmeter.mcp.tools import OwnTools

        for cls in (CompatTools, OwnTools, JudgeTool):
            fn = getattr(cls, name, None)
            if fn is not None:
                return [p for p in inspect.signature(fn).parameters if p != "self"]
        raise KeyError(name)  # pragma: no cover - the catalogue names only existing tools

    def build(self, parameter_file: str) -> dict[str, Any]:
        """Write server.yaml beside an UltraRAG parameter.yaml (UltraRAG's build step).

        parameter_file: the server folder's parameter.yaml (inside the server's roots).
        """
        import yaml

        from ragmeter.io.files import atomic_write

        s = self.settings
        s.refuse_write("build", "parameter_file")
        cfg_path = s.roots.resolve(parameter_file)
        base = Path(parameter_file).parent
        params: dict[str, Any] = {}
        if cfg_path.exists():
            from ragmeter.io.yamlmap import load_yaml

            with shown_as({cfg_path: parameter_file}):
                data, _ = load_yaml(cfg_path)
            if data is not None and not isinstance(data, dict):
                raise UsageError(
                    f"{parameter_file}: expected a mapping of parameters", command="mcp"
                )
            params = dict(data or {})
        server_path = str(params.get("path", base / "src" / f"{cfg_path.parent.name}.py"))
        if not s.roots.resolve(server_path).exists():
            raise UsageError(f"build: server code not found: {server_path}", command="mcp")
        doc = {
            "path": server_path,
            "parameter": parameter_file,
            "tools": {
                spec.name: server_entry(self._params(spec.name), spec.io, params)
                for spec in self.specs
            },
            "prompts": {},
        }
        out_name = (
            os.path.join(os.fspath(base), "server.yaml") if str(base) != "." else "server.yaml"
        )
        target = s.roots.for_writing(out_name)
        with atomic_write(target) as fh:
            yaml.safe_dump(doc, fh, allow_unicode=True, sort_keys=False)
        return {"server_yaml": out_name, "tools": list(doc["tools"])}


PARAMETERS = """\
# ragmeter's evaluation server for UltraRAG pipelines (ragmeter mcp --ultrarag).
# UltraRAG's own evaluation keys come first and keep their meaning, so parameter files
# written for UltraRAG's evaluation server work unchanged. See ragmeter's docs/mcp.md.

# evaluate: answer metrics (acc em stringem coverem f1 rouge-1 rouge-2 rouge-l)
metrics: [acc, em, stringem, coverem, f1, rouge-1, rouge-2, rouge-l]
# evaluate / evaluate_trec / evaluate_trec_pvalue write eval_res here, timestamped
save_path: output/evaluate_results.json
# evaluate_trec and evaluate_trec_pvalue: families and cutoffs
ir_metrics: [mrr, map, recall, ndcg, precision]
ks: [1, 5, 10, 20, 50, 100]
qrels_path: data/qrels.txt
run_path: data/run.txt
# evaluate_trec_pvalue: the new run is A, the old run is B
run_new_path: data/run_new.txt
run_old_path: data/run_old.txt
n_resamples: 10000

# grounded: gold JSONL (qid, answerable, gold_claim_substr, gold_citations) and traces
gold_path: data/grounded_gold.jsonl
trace_path: data/grounded_trace.jsonl
# grounded: cutoff of recall@k, and the gates (a failed gate is "pass": false)
k: 5
gates: precision=0.80,chr=0.75,under=0.05,over=0.10
# steps: graphrag-eval reference templates and agent responses
reference_path: data/reference.yaml
responses_path: data/responses.jsonl
# steps: null (ragmeter's numbers), graphrag-eval-6 or graphrag-eval-5
compat: null
# judge: LLM-judged samples and metrics (endpoint and budget: the server's own config)
judge_input_path: data/judge_input.jsonl
judge_metrics: [faithfulness]
# run: a whole ragmeter.yaml evaluation
config_path: ragmeter.yaml
"""

LAUNCHER = '''\
"""ragmeter's evaluation server for UltraRAG, started by UltraRAG as `python <this file>`.

Standard library only. If ragmeter (with its mcp extra) is importable here, it serves in this
process. Otherwise the command in the RAGMETER_MCP environment variable is run with this
process's stdin, stdout and stderr, for example a ragmeter installed in its own environment:
RAGMETER_MCP="/opt/ragmeter/bin/ragmeter mcp --ultrarag --root ."
"""

import importlib.util
import os
import shlex
import subprocess
import sys


def main() -> int:
    if importlib.util.find_spec("ragmeter") and importlib.util.find_spec("mcp"):
        from ragmeter.mcp import serve

        return serve(["--ultrarag", "--root", "."])
    command = os.environ.get("RAGMETER_MCP", "").strip()
    if not command:
        sys.stderr.write(
            "ragmeter mcp: ragmeter is not installed here; pip install 'ragmeter[mcp]' or set "
            "RAGMETER_MCP to a 'ragmeter mcp --ultrarag' command\\n"
        )
        return 2
    return subprocess.call(shlex.split(command))


if __name__ == "__main__":
    sys.exit(main())
'''

README = """\
# {folder}: ragmeter as UltraRAG's evaluation server

This folder was written by `ragmeter mcp ultrarag-init`. UltraRAG starts
`src/{folder}.py` over stdio; it serves ragmeter's `evaluate`, `evaluate_trec` and
`evaluate_trec_pvalue` with UltraRAG's parameter names and result shape, plus `grounded`,
`steps` and `run`. Edit `parameter.yaml`, then `ultrarag build` your pipeline:

```yaml
servers:
  benchmark: servers/benchmark
  {name}: servers/{folder}
pipeline:
- benchmark.get_data
- {name}.evaluate
```

Under the key `evaluation`, it replaces UltraRAG's own evaluation server, and pipelines
written for that server (`evaluation.evaluate_trec`, ...) run unchanged. Without ragmeter
in UltraRAG's environment, set `RAGMETER_MCP` to a `ragmeter mcp --ultrarag --root .`
command from another environment.
"""


def init_folder(directory: str, *, name: str | None = None, force: bool = False) -> list[Path]:
    """Write ``parameter.yaml``, ``src/<folder>.py`` and ``README.md`` into ``directory``."""
    from ragmeter.io.files import atomic_write

    root = Path(directory)
    folder = root.resolve().name
    files = {
        root / "parameter.yaml": PARAMETERS,
        root / "src" / f"{folder}.py": LAUNCHER,
        root / "README.md": README.format(folder=folder, name=name or "evaluation"),
    }
    existing = [p for p in files if p.exists()]
    if existing and not force:
        raise UsageError(
            f"{existing[0]} exists (add --force to overwrite)", command="mcp ultrarag-init"
        )
    for path, text in files.items():
        with atomic_write(path) as fh:
            fh.write(text)
    return list(files)
