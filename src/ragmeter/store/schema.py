"""The results store's tables (SQLAlchemy Core), at the latest schema version.

A *run* is one system evaluated by one ``ragmeter run`` invocation (an *evaluation*, which groups
the runs of every system of one config). Every other table hangs off ``runs.key``, a small
integer, so that the per-sample table of a million rows stays compact and its primary key is the
order in which the report and dashboard page through it.

What the report and the dashboard read (``docs/dashboard.md``): runs with their gate verdicts
(``runs``, ``gate_results``), metrics with CIs and status counts overall and per stratum
(``metrics``), per-sample values with details (``samples``), each sample's inputs, gold and outputs
for a sample page (``sample_records``), comparisons against the baseline (``comparisons``) and
which tasks ran or were skipped and why (``run_tasks``).

JSON-valued columns are ``Text`` written by :func:`ragmeter.io.jsonutil.dumps` (never NaN), so the
same bytes are stored on SQLite and PostgreSQL.
"""

from __future__ import annotations

from sqlalchemy import (
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
)

__all__ = [
    "SCHEMA_VERSION",
    "comparisons",
    "gate_results",
    "meta",
    "metadata",
    "metrics",
    "run_tags",
    "run_tasks",
    "runs",
    "sample_records",
    "samples",
]

SCHEMA_VERSION = 2
"""The schema version this ragmeter writes; :mod:`ragmeter.store.migrations` upgrades older ones."""

metadata = MetaData()

meta = Table(
    "ragmeter_meta",
    metadata,
    Column("key", String(64), primary_key=True),
    Column("value", Text, nullable=False),
)

runs = Table(
    "runs",
    metadata,
    Column("key", Integer, primary_key=True, autoincrement=True),
    Column("id", String(200), nullable=False, unique=True),
    Column("evaluation_id", String(100), nullable=False),
    Column("project", String(200), nullable=False),
    Column("system", String(200), nullable=False),
    Column("system_version", String(200)),
    Column("created_at", DateTime, nullable=False),  # naive UTC
    Column("finished_at", DateTime),
    Column("ragmeter_version", String(50), nullable=False),
    Column("config_hash", String(64), nullable=False),
    Column("dataset_hash", String(64)),
    Column("dataset_path", Text),
    Column("dataset_split", String(200)),
    Column("n_samples", Integer),
    Column("status", String(20), nullable=False),
    Column("gate_status", String(10)),  # pass | fail | skip | NULL (no rules)
    Column("is_baseline", Boolean, nullable=False, default=False),
    Column("baseline_run_id", String(200)),
    Column("tags", Text),  # JSON list, also in run_tags for filtering
    Column("notes", Text),
    Column("config", Text),  # JSON of the secret-free config
    Column("metadata", Text),  # JSON
    Index("ix_runs_created", "created_at"),
    Index("ix_runs_project_created", "project", "created_at"),
    Index("ix_runs_system_created", "system", "created_at"),
    Index("ix_runs_evaluation", "evaluation_id"),
)

run_tags = Table(
    "run_tags",
    metadata,
    Column("run_key", Integer, ForeignKey("runs.key"), primary_key=True),
    Column("tag", String(200), primary_key=True),
    Index("ix_run_tags_tag", "tag"),
)

run_tasks = Table(
    "run_tasks",
    metadata,
    Column("run_key", Integer, ForeignKey("runs.key"), primary_key=True),
    Column("task", String(50), primary_key=True),
    Column("status", String(20), nullable=False),  # ok | skipped
    Column("reason", Text),
    Column("input_hash", String(64)),
    Column("reused", Boolean, nullable=False, default=False),
    Column("n_units", Integer),
    Column("metrics", Text),  # JSON list of canonical metric names
    Column("metadata", Text),  # JSON
    Column("warnings", Text),  # JSON list
)

metrics = Table(
    "metrics",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_key", Integer, ForeignKey("runs.key"), nullable=False),
    Column("task", String(50), nullable=False),
    Column("metric", String(200), nullable=False),  # canonical name inside the task
    Column("factor", String(200)),  # NULL for the overall value
    Column("level", String(500)),  # NULL for the overall value
    Column("value", Float),
    Column("value_json", Text),  # a non-numeric aggregate (rare), as JSON
    Column("n", Integer, nullable=False),
    Column("ci_low", Float),
    Column("ci_high", Float),
    Column("status_counts", Text),  # JSON {status: count}
    Column("reason", Text),
    Index("ix_metrics_run", "run_key", "task", "metric"),
)

samples = Table(
    "samples",
    metadata,
    Column("run_key", Integer, ForeignKey("runs.key"), primary_key=True),
    Column("task", String(50), primary_key=True),
    Column("metric", String(200), primary_key=True),
    Column("sample_id", String(500), primary_key=True),
    Column("value", Float),
    Column("status", String(30), nullable=False),
    Column("detail", Text),
    # the report and dashboard read one series by value: worst samples, the per-sample table
    # sorted by value, histograms (an index-only scan); schema version 2
    Index("ix_samples_value", "run_key", "task", "metric", "value", "sample_id"),
    sqlite_with_rowid=False,
)

sample_records = Table(
    "sample_records",
    metadata,
    Column("run_key", Integer, ForeignKey("runs.key"), primary_key=True),
    Column("task", String(50), primary_key=True),
    Column("sample_id", String(500), primary_key=True),
    Column("gold_id", String(500)),  # the gold-standard sample the unit belongs to
    Column("strata", Text),  # JSON {factor: value}
    Column("record", Text),  # JSON {input, gold, output}
    sqlite_with_rowid=False,
)

comparisons = Table(
    "comparisons",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_key", Integer, ForeignKey("runs.key"), nullable=False),
    Column("baseline_run_id", String(200), nullable=False),
    Column("task", String(50), nullable=False),
    Column("metric", String(200), nullable=False),
    Column("test", String(50), nullable=False),
    Column("n", Integer),
    Column("mean", Float),
    Column("baseline_mean", Float),
    Column("mean_diff", Float),
    Column("statistic", Float),
    Column("p_value", Float),
    Column("p_adjusted", Float),
    Column("correction", String(20)),
    Column("alpha", Float),
    Column("significant", Boolean),
    Column("ci_low", Float),
    Column("ci_high", Float),
    Column("effect_size", Float),  # Cohen's d_z
    Column("seed", Integer),
    Column("degenerate", Boolean),
    Column("reason", Text),
    Column("detail", Text),  # JSON: the full TestResult of ragmeter.stats
    Index("ix_comparisons_run", "run_key"),
)

gate_results = Table(
    "gate_results",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_key", Integer, ForeignKey("runs.key"), nullable=False),
    Column("position", Integer, nullable=False),
    Column("rule", Text, nullable=False),  # as written, e.g. "retrieval.nDCG@10 >= 0.6"
    Column("kind", String(20), nullable=False),  # min | max | no_regression
    Column("metric", String(250), nullable=False),  # task.metric as asked for
    Column("value", Float),
    Column("threshold", Float),
    Column("p_value", Float),
    Column("baseline_run_id", String(200)),
    Column("verdict", String(10), nullable=False),  # PASS | FAIL | SKIP
    Column("reason", Text),
    Index("ix_gate_results_run", "run_key"),
)
