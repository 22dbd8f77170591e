"""The cases the Run screen runs: every case file of the config, as a run uses them
(no Textual).

A run is of the config, not of the file open in Cases: a BFCL import keeps a file per
category, and Run lists the cases of all of them. The open file is taken as Cases holds
it (an edit shows at once); the others are read once and again only when they change on
disk, so choosing Run again costs a few ``stat`` calls, not 3,491 cases parsed.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

from toolstand.spec.cases import Case, CaseFile, SharedTools, case_set, load_cases, set_label
from toolstand.tui.model.project import Project
from toolstand.util.problems import LoadError

Stamp = tuple[int, int] | None  # a file's (mtime_ns, size), None when unreadable


def _stamp(path: Path) -> Stamp:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


class LiveCases:
    """The config's cases as one set, rebuilt only when a file of it changed; a thread
    worker may build it while the screen asks for it (one at a time)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._files: dict[Path, tuple[Stamp, CaseFile]] = {}
        self._shared: SharedTools = {}  # a tool repeated across the files is one ToolSpec
        self._key: tuple[object, ...] | None = None
        self._set: CaseFile | None = None
        self._by_id: dict[str, Case] = {}

    def stale(self, project: Project) -> bool:
        """Some file must be read first: ``of`` would take a while (a thread's job)."""
        others = [p for p in project.case_files if p != project.cases_path]
        with self._lock:
            held = dict(self._files)
        return any(p not in held or held[p][0] != _stamp(p) for p in others)

    def of(self, project: Project) -> CaseFile:
        """Every case of ``project``'s config (its one open file when it has one)."""
        with self._lock:
            return self._of(project)

    def _of(self, project: Project) -> CaseFile:
        paths = project.case_files
        if len(paths) <= 1:
            return project.casefile
        files = [self._file(p, project) for p in paths]
        key = (project.config_path, *((f.path, f.sha256) for f in files))
        if key != self._key or self._set is None:
            # the set marks lines of its files (their file, a duplicate id left out):
            # it marks copies, never the lines Cases shows
            copies = [replace(f, lines=[replace(ln) for ln in f.lines]) for f in files]
            assert project.config is not None  # several files: a config names them
            label = set_label(project.config.cases_source)
            self._set = case_set(label, copies, strict=False)
            self._by_id = self._set.by_id()
            self._key = key
        return self._set

    def by_id(self, project: Project) -> dict[str, Case]:
        """The cases of ``of(project)`` by id."""
        with self._lock:
            cases = self._of(project)
            return self._by_id if cases is self._set else cases.by_id()

    def _file(self, path: Path, project: Project) -> CaseFile:
        if path == project.cases_path:
            return project.casefile
        stamp = _stamp(path)
        held = self._files.get(path)
        if held is None or held[0] != stamp or stamp is None:
            try:
                loaded = load_cases(path, strict=False, shared=self._shared)
            except LoadError as exc:  # unreadable now: the run lists the others
                loaded = CaseFile(str(path), [], None, "", exc.problems)
            held = stamp, loaded
            self._files[path] = held
        return held[1]
