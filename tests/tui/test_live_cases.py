"""The Run screen's cases are the config's, every file of it: the open file as Cases
holds it, the others re-read only when they change on disk (hfix B3)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import orjson

from toolstand.spec.cases import load_cases
from toolstand.tui.model.live_cases import LiveCases
from toolstand.tui.model.project import load_project

ROOT = Path(__file__).resolve().parents[2]


def _split_project(tmp_path: Path) -> Path:
    """The delivery cases in two files of a cases/ folder the config names."""
    shutil.copytree(ROOT / "contracts", tmp_path / "contracts")
    shutil.copytree(ROOT / "prompts", tmp_path / "prompts")
    lines = (ROOT / "cases" / "delivery.jsonl").read_bytes().splitlines(keepends=True)
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "a.jsonl").write_bytes(b"".join(lines[:3]))
    (tmp_path / "cases" / "b.jsonl").write_bytes(b"".join(lines[3:6]))
    config = orjson.loads((ROOT / "config.example.json").read_bytes())
    config["cases"] = "cases"
    (tmp_path / "config.json").write_bytes(orjson.dumps(config))
    return tmp_path


def _ids(path: Path) -> list[str]:
    return [orjson.loads(x)["id"] for x in path.read_bytes().splitlines()]


def test_every_file_is_listed_and_each_change_shows(tmp_path: Path) -> None:
    root = _split_project(tmp_path)
    project = load_project(root)
    a, b = _ids(root / "cases" / "a.jsonl"), _ids(root / "cases" / "b.jsonl")
    cases = LiveCases()
    assert [c.id for c in cases.of(project).cases] == a + b
    assert cases.stale(project) is False  # read once: the screen asks without waiting
    # Cases edits the open file: the set follows at once, without a save
    project.casefile = load_cases(root / "cases" / "a.jsonl", strict=False)
    del project.casefile.lines[0]
    project.casefile.sha256 = "edited"
    assert [c.id for c in cases.of(project).cases] == a[1:] + b
    # another file changed on disk: re-read (its stamp moved)
    other = root / "cases" / "b.jsonl"
    other.write_bytes(other.read_bytes().splitlines(keepends=True)[0])
    os.utime(other, ns=(1, 1))
    assert cases.stale(project) is True
    assert [c.id for c in cases.of(project).cases] == a[1:] + b[:1]
    assert set(cases.by_id(project)) == set(a[1:] + b[:1])
