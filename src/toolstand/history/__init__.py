"""JSONL run histories: reading them, indexing them, querying them, writing them safely.

What the rest of toolstand may import is listed in ``__all__``; the modules behind it:

* ``read``: records line by line at four reading levels, never fatal (a torn or damaged
  line is a HistoryWarning naming the file and line);
* ``shape``, ``columns``, ``fields``: the fixed key order the fast paths slice, the
  columns a row is kept in, and the checks of the fields a row holds;
* ``index`` and ``query``: a million attempts as columns, filtered at C speed;
* ``sidecar`` and ``keep``: the index saved beside the file, kept by the writer;
* ``write``: appending records, flushed one by one, under ``lock`` (one writer at a
  time); ``files``: the run files of a folder, described.

Modules inside this package import each other directly, never through this face (it
imports them all, so going through it from inside would be circular).
"""

from toolstand.history.fields import (
    RunMeta,
    attempt_problem,
    field_problem,
    header_problem,
    judgement_problem,
    outcome_problem,
    turn_types_problem,
)
from toolstand.history.files import RunFile, describe_run_file, list_run_files
from toolstand.history.index import Facet, HistoryIndex
from toolstand.history.keep import SAVE_EVERY, IndexedWriter
from toolstand.history.lock import HistoryBusy, HistoryLock, lock_path, os_error
from toolstand.history.query import (
    FACETS,
    TIME_PRESETS,
    Query,
    QueryResult,
    day_range,
    run_query,
    shown_label,
    value_label,
)
from toolstand.history.read import (
    MAX_LINE_BYTES,
    HistoryWarning,
    bounded_lines,
    decode_summary,
    in_key_order,
    iter_records,
    read_line,
    read_record,
    scan,
    scan_with,
    split_metrics,
    unique_paths,
)
from toolstand.history.report_rows import ODD, ReportRows, record_repair_ended, repair_ended
from toolstand.history.shape import VERDICTS, error_code, flat_row
from toolstand.history.sidecar import FOLDER, MIN_ROWS, open_indexed, sidecar_path
from toolstand.history.write import (
    KEPT,
    AttemptKey,
    HistoryWriteError,
    JsonlWriter,
    attempt_key,
    iter_lines,
    repair_tail,
)

__all__ = [
    "FACETS",
    "FOLDER",
    "KEPT",
    "MAX_LINE_BYTES",
    "MIN_ROWS",
    "ODD",
    "SAVE_EVERY",
    "TIME_PRESETS",
    "VERDICTS",
    "AttemptKey",
    "Facet",
    "HistoryBusy",
    "HistoryIndex",
    "HistoryLock",
    "HistoryWarning",
    "HistoryWriteError",
    "IndexedWriter",
    "JsonlWriter",
    "Query",
    "QueryResult",
    "ReportRows",
    "RunFile",
    "RunMeta",
    "attempt_key",
    "attempt_problem",
    "bounded_lines",
    "day_range",
    "decode_summary",
    "describe_run_file",
    "error_code",
    "field_problem",
    "flat_row",
    "header_problem",
    "in_key_order",
    "iter_lines",
    "iter_records",
    "judgement_problem",
    "list_run_files",
    "lock_path",
    "open_indexed",
    "os_error",
    "outcome_problem",
    "read_line",
    "read_record",
    "record_repair_ended",
    "repair_ended",
    "repair_tail",
    "run_query",
    "scan",
    "scan_with",
    "shown_label",
    "sidecar_path",
    "split_metrics",
    "turn_types_problem",
    "unique_paths",
    "value_label",
]
