"""The files the TUI works on, found and loaded without Textual.

The contract must load (the editor validates against it). Its meta-schema check is left
for after the TUI's first frame (``Project.contract_problems``: jsonschema's import and
check are a tenth of the start); what it finds ends the TUI with the problems that
``load_project`` would have raised, on stderr as before. The case file loads leniently:
a broken line is listed with its problem instead of hiding the rest. A missing or broken
config only disables live runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import orjson

from toolstand.spec.cases import CaseFile, case_paths, count_rows, load_cases
from toolstand.spec.config import Config, find_config, load_config
from toolstand.spec.contract import Contract, meta_problems, parse_contract
from toolstand.util.canonical import sha256_hex
from toolstand.util.problems import LoadError, Problem, read_file

# without a usable config: the one file of each kind in the project's folders
LAYOUT = (("contracts", "*.json", "--tools"), ("cases", "*.jsonl", "--cases"))


@dataclass
class Project:
    root: Path
    contract: Contract
    contract_path: Path
    casefile: CaseFile
    cases_path: Path
    config: Config | None = None
    config_path: Path | None = None
    config_problems: list[Problem] = field(default_factory=list)
    system: str | None = None
    prompt_version: str | None = None
    prompt_hash: str | None = None
    # the contract's text while its meta-schema check is still to come
    unchecked_contract: bytes | None = None

    @property
    def runs_dir(self) -> Path:
        return self.root / "runs"

    @property
    def case_files(self) -> list[Path]:
        """Every case file of the config (one, a list, or a folder's), else the one open."""
        if self.config is None:
            return [self.cases_path]
        return case_paths(self.config.cases_source) or [self.cases_path]

    def case_line(self, case_id: str) -> tuple[Path, str] | None:
        """The file and line text of ``case_id``: the open file first, then the config's
        other case files (a BFCL import keeps a file per category)."""
        for ln in self.casefile.lines:
            if ln.case is not None and ln.case.id == case_id:
                return self.cases_path, ln.text
        for path in self.case_files:
            if path == self.cases_path:
                continue
            found = find_line(path, case_id)
            if found is not None:
                return path, found
        return None

    def case_text(self, case_id: str) -> str | None:
        found = self.case_line(case_id)
        return found[1] if found is not None else None

    def contract_problems(self) -> list[Problem]:
        """What the contract's meta-schema check finds, which ``load_project`` left out
        (each a problem ``toolstand check`` names too); checked once, none after."""
        text, self.unchecked_contract = self.unchecked_contract, None
        if text is None:
            return []
        return meta_problems(self.contract, text, str(self.contract_path))

    def reload_cases(self) -> None:
        """Re-read the case file from disk (after an edit refused as stale)."""
        self.casefile = load_cases(self.cases_path, strict=False)


def count_cases(path: Path) -> int | None:
    """How many rows the case list shows for ``path`` (spec.cases.count_rows: cases and
    broken lines), no case parsed; None when it cannot be read."""
    try:
        return count_rows(path.read_bytes())
    except OSError:
        return None


def find_line(path: Path, case_id: str) -> str | None:
    """The line of ``path`` holding case ``case_id`` (only its JSON read, not the case)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    needle = orjson.dumps(case_id)
    for raw in data.splitlines():
        if needle not in raw:  # most lines cost a byte search, not a parse
            continue
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if isinstance(obj, dict) and obj.get("id") == case_id:
            return raw.decode("utf-8", errors="replace")
    return None


def _under(root: Path, path: str | None) -> Path | None:
    if path is None:
        return None
    p = Path(path)
    return p if p.is_absolute() else root / p


def _only(root: Path, kind: int) -> Path:
    """The one contract (kind 0) or case file (kind 1) in the project's folder, when no
    config names it; more or none is a LoadError saying which option to give."""
    folder, pattern, option = LAYOUT[kind]
    found = sorted(p for p in (root / folder).glob(pattern) if not p.name.endswith(".lock.json"))
    if len(found) != 1:
        names = ", ".join(p.name for p in found) or "nothing"
        message = f"no config names it and {folder}/ holds {names}: give {option} or a config"
        raise LoadError([Problem(str(root / folder), None, "$", message)])
    return found[0]


def load_project(
    root: Path, config: str | None = None, cases: str | None = None, tools: str | None = None
) -> Project:
    """Load what the TUI needs; a LoadError names file:line when the contract is unusable."""
    config_path = find_config(root, config)
    cfg: Config | None = None
    problems: list[Problem] = []
    if config_path is not None:
        try:
            cfg = load_config(config_path)
        except LoadError as exc:
            problems = exc.problems
    tools_path = _under(root, tools) or (cfg.resolve(cfg.tools) if cfg else _only(root, 0))
    cases_path = _under(root, cases) or (cfg.first_case_file if cfg else _only(root, 1))
    assert tools_path is not None and cases_path is not None
    text = read_file(tools_path)
    try:
        contract = parse_contract(text, str(tools_path), meta=False)
    except LoadError:
        parse_contract(text, str(tools_path))  # raises them with the meta-schema's, as ever
        raise
    casefile = load_cases(cases_path, strict=False)  # raises only when unreadable
    project = Project(root, contract, tools_path, casefile, cases_path, cfg, config_path, problems)
    project.unchecked_contract = text
    if cfg is not None and cfg.prompt_path is not None:
        try:
            raw = cfg.prompt_path.read_bytes()
        except OSError as exc:
            project.config_problems.append(
                Problem(str(config_path), None, "$.system_prompt", f"cannot read: {exc.strerror}")
            )
        else:
            project.system = raw.decode("utf-8")
            project.prompt_version = cfg.prompt_path.stem
            project.prompt_hash = sha256_hex(raw)
    return project
