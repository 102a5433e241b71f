"""Which tools exist, what UltraRAG binds to them, and the hints clients see (no SDK import)."""

from __future__ import annotations

from dataclasses import dataclass

from ragmeter.errors import UsageError

__all__ = ["CATALOGUE", "ULTRARAG_TOOLS", "Spec", "select"]


@dataclass(frozen=True)
class Spec:
    """One tool: its UltraRAG I/O spec, the key its result is wrapped in under ``--ultrarag``
    (own tools only), the annotation hints, and the CLI command its messages belong to."""

    name: str
    io: str | None
    command: str
    read_only: bool = True
    open_world: bool = False
    idempotent: bool = True
    wrap: str | None = None


CATALOGUE: tuple[Spec, ...] = (
    Spec("evaluate", "pred_ls,gt_ls,metrics,save_path->eval_res", "answers", read_only=False),
    Spec("evaluate_trec", "run_path,qrels_path,ir_metrics,ks,save_path->eval_res", "trec", False),
    Spec(
        "evaluate_trec_pvalue",
        "run_new_path,run_old_path,qrels_path,ir_metrics,ks,n_resamples,save_path->eval_res",
        "compare",
        read_only=False,
    ),
    Spec("trec", None, "trec"),
    Spec("answers", None, "answers"),
    Spec("grounded", "gold_path,trace_path,k,gates->grounded_res", "grounded", wrap="grounded_res"),
    Spec("steps", "reference_path,responses_path,compat->steps_res", "steps", wrap="steps_res"),
    Spec(
        "judge",
        "judge_input_path,judge_metrics->judge_res",
        "judge",
        read_only=False,
        open_world=True,
        wrap="judge_res",
    ),
    Spec("compare", None, "compare"),
    Spec("gate", None, "gate"),
    Spec(
        "run",
        "config_path->run_res",
        "run",
        read_only=False,
        open_world=True,
        wrap="run_res",
    ),
    Spec("list_runs", None, "runs list"),
    Spec("show_run", None, "runs show"),
    Spec("list_metrics", None, "metrics"),
)

ULTRARAG_TOOLS = ("evaluate", "evaluate_trec", "evaluate_trec_pvalue")
BUILD = Spec("build", None, "mcp", read_only=False)


def select(choice: str, *, ultrarag: bool) -> list[Spec]:
    """The tools ``--tools`` lists: ``all``, ``ultrarag`` or ``NAME,NAME,...`` (plus ``build``
    under ``--ultrarag``).

    >>> [s.name for s in select("ultrarag", ultrarag=True)]
    ['evaluate', 'evaluate_trec', 'evaluate_trec_pvalue', 'build']
    """
    by_name = {s.name: s for s in CATALOGUE}
    if choice == "all":
        chosen = list(CATALOGUE)
    elif choice == "ultrarag":
        chosen = [by_name[n] for n in ULTRARAG_TOOLS]
    else:
        names = [n.strip() for n in choice.split(",") if n.strip()]
        unknown = [n for n in names if n not in by_name and n != "build"]
        if unknown or not names:
            raise UsageError(
                f"--tools {choice!r}: unknown tool {unknown[0] if unknown else ''!r} (expected "
                f"all, ultrarag or names among {', '.join(by_name)})",
                command="mcp",
            )
        chosen = [by_name[n] for n in names if n in by_name]
    if ultrarag:
        chosen.append(BUILD)
    return chosen
