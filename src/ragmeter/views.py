"""Views every result type shares: ``summary``, ``to_pandas()`` and ``to_csv()``.

Kept free of numpy, pyarrow and pandas at import: report modules that import it stay light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

__all__ = ["ReportViews", "SummaryDict", "require_pandas", "table_csv"]


def require_pandas(what: str) -> Any:
    """``import pandas``, or a one-line :class:`MissingDependencyError` naming the extra."""
    try:
        import pandas
    except ImportError:
        from ragmeter.errors import MissingDependencyError

        raise MissingDependencyError(f"{what} needs pandas", extra="pandas") from None
    return pandas


def table_csv(table: pa.Table) -> str:
    """An Arrow table as CSV text: a header, then one line per row; floats in full precision
    (``repr``), nulls as empty fields."""
    import csv
    import io

    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(table.column_names)
    columns = [table.column(c).to_pylist() for c in table.column_names]
    for row in zip(*columns, strict=True):
        writer.writerow(["" if v is None else repr(v) if isinstance(v, float) else v for v in row])
    return buf.getvalue()


class SummaryDict(dict):  # type: ignore[type-arg]
    """The ``summary`` of a result: a dict, still callable as the old ``summary()`` method.

    ``summary`` is a property on every result type; :class:`ragmeter.runner.EvaluationResult`
    once spelled it as a method, so calling it keeps working with a :class:`DeprecationWarning`.
    """

    def __call__(self) -> SummaryDict:
        import warnings

        warnings.warn(
            "EvaluationResult.summary() is deprecated: summary is a property, as on every "
            "result type (use result.summary)",
            DeprecationWarning,
            stacklevel=2,
        )
        return self


class ResultLike(Protocol):
    """What :class:`ReportViews` needs of a result: :class:`ragmeter.result.Result` has it.

    A protocol rather than the class itself, so this module stays below ``ragmeter.result``
    (which imports it) and the two never import each other.
    """

    @property
    def summary(self) -> dict[str, float | int | str | None]: ...

    def to_pandas(self) -> pd.DataFrame: ...

    def to_csv(self) -> str: ...


class ReportViews:
    """``summary``, ``to_pandas()`` and ``to_csv()`` of a report object, through its Result.

    Report objects that keep an upstream shape (extraction reports, grounded QA) convert with
    ``to_result()``; these views make them read like every other result type.
    """

    def to_result(self) -> ResultLike:  # pragma: no cover - every user defines it
        raise NotImplementedError

    @property
    def summary(self) -> dict[str, float | int | str | None]:
        """Aggregate values by metric name (those of :meth:`to_result`)."""
        return self.to_result().summary

    def to_pandas(self) -> pd.DataFrame:
        """The long per-sample table of :meth:`to_result` as a DataFrame (needs pandas)."""
        return self.to_result().to_pandas()

    def to_csv(self) -> str:
        """The long per-sample table of :meth:`to_result` as CSV."""
        return self.to_result().to_csv()
