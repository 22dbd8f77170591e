"""Where BFCL's data is read from: a data folder, a ``bfcl_eval-*.whl`` (read as a zip,
nothing installed) or the ``bfcl_eval`` package if it is importable.

BFCL's ``*.json`` files are JSON Lines: one entry an line. Questions live in
``BFCL_v4_<category>.json``, possible answers in ``possible_answer/`` under the same
name (the irrelevance categories have none).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import io
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from toolstand.util.problems import LoadError, Problem

CATEGORIES: tuple[str, ...] = (
    "simple_python",
    "multiple",
    "parallel",
    "parallel_multiple",
    "irrelevance",
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
    "live_irrelevance",
    "live_relevance",
)
# categories BFCL has that one question and one answer cannot express, and why
REFUSED: dict[str, str] = {
    "simple_java": "answers are Java source, checked by BFCL's Java type converter",
    "simple_javascript": "answers are JavaScript source, checked by BFCL's JS type converter",
    "multi_turn_base": "multi-turn: judged on the state of BFCL's executable Python classes",
    "multi_turn_miss_func": "multi-turn: judged on the state of BFCL's executable classes",
    "multi_turn_miss_param": "multi-turn: judged on the state of BFCL's executable classes",
    "multi_turn_long_context": "multi-turn: judged on the state of BFCL's executable classes",
    "memory": "memory: needs BFCL's prerequisite conversations and memory backends",
    "web_search": "web search: answers come from live search results",
    "format_sensitivity": "format sensitivity: prompt-format variants of other categories",
}
WHEEL_PREFIX = "bfcl_eval/data/"
# BFCL's largest data file is ~4 MB (live_multiple); a member or file past this is no
# BFCL data, and reading it whole could take all memory (a 3 MB zip can hold 3 GB)
MAX_FILE_BYTES = 64 << 20
MAX_WHEEL_MEMBERS = 10_000
_WHEEL_VERSION = re.compile(r"bfcl_eval-([^-]+)-")


@dataclass
class BfclSource:
    """Reads BFCL's data files by their name under the data folder."""

    label: str
    version: str
    folder: Path | None = None
    wheel: zipfile.ZipFile | None = None
    _names: set[str] = field(default_factory=set)

    def read(self, name: str) -> bytes | None:
        """The file's bytes, or None when the source has no such file; a LoadError for
        one over ``MAX_FILE_BYTES``, decoded, whatever its header claims."""
        if self.wheel is not None:
            member = WHEEL_PREFIX + name
            if member not in self._names:
                return None
            with self.wheel.open(member) as fh:
                data = fh.read(MAX_FILE_BYTES + 1)
        else:
            assert self.folder is not None
            path = self.folder / name
            if not path.is_file():
                return None
            with path.open("rb") as fh:
                data = fh.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            raise LoadError(
                [
                    Problem(
                        f"{self.label}: {name}",
                        None,
                        "$",
                        f"larger than {MAX_FILE_BYTES >> 20} MB; BFCL's data files are a few"
                        " MB: not read",
                    )
                ]
            )
        return data

    def entries(self, name: str) -> list[tuple[int, dict[str, Any]]] | None:
        """The file's entries with their line numbers, one JSON object a line (blank lines
        skipped); None when the file is absent."""
        data = self.read(name)
        if data is None:
            return None
        out = []
        where = f"{self.label}: {name}"
        # line by line, never a list of them: a file of blank lines is one line each
        for number, line in enumerate(io.BytesIO(data), start=1):
            if not line.strip():
                continue
            try:
                entry = orjson.loads(line)
            except orjson.JSONDecodeError as exc:
                raise LoadError([Problem(where, number, "$", f"not JSON: {exc}")]) from None
            if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
                raise LoadError(
                    [Problem(where, number, "$", "a BFCL entry is an object with an id")]
                )
            out.append((number, entry))
        return out

    def close(self) -> None:
        if self.wheel is not None:
            self.wheel.close()


def open_source(source: str) -> BfclSource:
    """Open SOURCE: a folder, a ``.whl`` file, or ``installed``; a LoadError says why not."""
    if source == "installed":
        return _installed()
    path = Path(source)
    if path.is_file() and path.suffix == ".whl":
        return _wheel(path)
    if path.is_dir():
        folder = path / "data" if (path / "data" / "possible_answer").is_dir() else path
        if not any(folder.glob("BFCL_v4_*.json")):
            raise _refuse(source, "no BFCL_v4_*.json here (give BFCL's data folder)")
        return BfclSource(str(path), _folder_version(folder), folder=folder)
    raise _refuse(source, "give a BFCL data folder, a bfcl_eval-*.whl file, or installed")


def _wheel(path: Path) -> BfclSource:
    try:
        wheel = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise _refuse(str(path), f"not a readable wheel: {exc}") from None
    if len(wheel.infolist()) > MAX_WHEEL_MEMBERS:
        wheel.close()
        raise _refuse(str(path), f"more than {MAX_WHEEL_MEMBERS} members: not a BFCL wheel")
    names = set(wheel.namelist())
    if not any(n.startswith(WHEEL_PREFIX + "BFCL_v4_") for n in names):
        wheel.close()
        raise _refuse(str(path), f"no {WHEEL_PREFIX}BFCL_v4_*.json in this wheel")
    match = _WHEEL_VERSION.search(path.name)
    version = match.group(1) if match else "unknown"
    return BfclSource(str(path), version, wheel=wheel, _names=names)


def _installed() -> BfclSource:
    spec = importlib.util.find_spec("bfcl_eval")
    if spec is None or not spec.submodule_search_locations:
        raise _refuse("installed", "the bfcl_eval package is not importable here")
    folder = Path(next(iter(spec.submodule_search_locations))) / "data"
    try:
        version = importlib.metadata.version("bfcl-eval")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    return BfclSource("installed bfcl_eval", version, folder=folder)


def _folder_version(folder: Path) -> str:
    """A folder carries no version; one inside an unpacked wheel names it in its parent."""
    for parent in folder.resolve().parents:
        for dist in parent.glob("bfcl_eval-*.dist-info"):
            return dist.name.removeprefix("bfcl_eval-").removesuffix(".dist-info")
    return "unknown"


def _refuse(source: str, message: str) -> LoadError:
    return LoadError([Problem(source, None, "$", message)])
