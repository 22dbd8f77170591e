"""From a history to numbers a gate can trust: metrics, statistics, renderings, compare.

What the rest of toolstand may import is listed in ``__all__``; the modules behind it:

* ``metrics``: one pass over the history files into a Report (``tally`` holds the
  per-group counters it fills and the metric definitions);
* ``stats``: Wilson intervals, percentiles, exact McNemar, Holm's correction;
* ``categories``: a group's cases pooled per category (BFCL's main axis);
* ``formats``: the Report as the seed's JSON, the error CSV, JUnit XML, a text table;
* ``compare``: a baseline report against the current history (the CI gate);
* ``commands``: ``toolstand report`` and ``toolstand compare`` for the CLI.

Nothing here re-judges: every number is counted from the judgements in the records.
"""

from toolstand.reporting.categories import CategoryRow, by_category
from toolstand.reporting.commands import cmd_compare, cmd_report
from toolstand.reporting.compare import MAX_TRANSPORT_ERRORS, compare, load_report
from toolstand.reporting.formats import (
    dumps_json,
    render_table,
    to_json,
    write_errors_csv,
    write_junit,
)
from toolstand.reporting.metrics import compute, compute_files
from toolstand.reporting.stats import Rate, holm, mcnemar_exact, percentile, two_proportion_drop
from toolstand.reporting.tally import LOWER_IS_BETTER, METRICS, FailedAttempt, GroupStats, Report

__all__ = [
    "LOWER_IS_BETTER",
    "MAX_TRANSPORT_ERRORS",
    "METRICS",
    "CategoryRow",
    "FailedAttempt",
    "GroupStats",
    "Rate",
    "Report",
    "by_category",
    "cmd_compare",
    "cmd_report",
    "compare",
    "compute",
    "compute_files",
    "dumps_json",
    "holm",
    "load_report",
    "mcnemar_exact",
    "percentile",
    "render_table",
    "to_json",
    "two_proportion_drop",
    "write_errors_csv",
    "write_junit",
]
