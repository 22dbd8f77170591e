"""Line numbers for JSON paths, so an error can point at the line that holds a value.

A small position-only scanner: values come from orjson, this only records where each
path starts. Runs on contracts and config files, which are small.
"""

from __future__ import annotations

import contextlib

_WS = " \t\r\n"


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.line = 1
        self.lines: dict[tuple[str | int, ...], int] = {}
        # the first key written twice in one object, and its line
        self.duplicate: tuple[tuple[str | int, ...], int] | None = None

    def ws(self) -> None:
        t = self.text
        while self.i < len(t) and t[self.i] in _WS:
            if t[self.i] == "\n":
                self.line += 1
            self.i += 1

    def value(self, path: tuple[str | int, ...]) -> None:
        self.ws()
        self.lines[path] = self.line
        if self.i >= len(self.text):
            return
        c = self.text[self.i]
        if c == "{":
            self.i += 1
            self.ws()
            if self.i < len(self.text) and self.text[self.i] == "}":
                self.i += 1
                return
            seen: set[str] = set()
            while self.i < len(self.text):
                self.ws()
                key = self.string()
                if key in seen and self.duplicate is None:
                    self.duplicate = ((*path, key), self.line)
                seen.add(key)
                self.ws()
                self.i += 1  # ':'
                self.value((*path, key))
                self.ws()
                if self.i < len(self.text) and self.text[self.i] == ",":
                    self.i += 1
                    continue
                self.i += 1  # '}'
                return
        elif c == "[":
            self.i += 1
            self.ws()
            if self.i < len(self.text) and self.text[self.i] == "]":
                self.i += 1
                return
            idx = 0
            while self.i < len(self.text):
                self.value((*path, idx))
                idx += 1
                self.ws()
                if self.i < len(self.text) and self.text[self.i] == ",":
                    self.i += 1
                    continue
                self.i += 1  # ']'
                return
        elif c == '"':
            self.string()
        else:
            while self.i < len(self.text) and self.text[self.i] not in ",]}" + _WS:
                self.i += 1

    def string(self) -> str:
        t = self.text
        start = self.i + 1
        self.i += 1
        while self.i < len(t) and t[self.i] != '"':
            if t[self.i] == "\\":
                self.i += 1
            self.i += 1
        raw = t[start : self.i]
        self.i += 1
        if "\\" in raw:
            import json

            try:
                return str(json.loads(f'"{raw}"'))
            except ValueError:
                return raw
        return raw


def line_index(text: str) -> dict[tuple[str | int, ...], int]:
    """Map each JSON path in ``text`` (already known to parse) to its 1-based line."""
    scanner = _Scanner(text)
    with contextlib.suppress(IndexError):
        scanner.value(())
    return scanner.lines


def first_duplicate(text: str) -> tuple[tuple[str | int, ...], int] | None:
    """The path and line of the first key that ``text`` (already known to parse)
    writes twice in one object, or None."""
    scanner = _Scanner(text)
    with contextlib.suppress(IndexError):
        scanner.value(())
    return scanner.duplicate


def line_of(index: dict[tuple[str | int, ...], int], path: tuple[str | int, ...]) -> int | None:
    """The line of the longest prefix of ``path`` that the index knows."""
    for cut in range(len(path), -1, -1):
        line = index.get(path[:cut])
        if line is not None:
            return line
    return None
