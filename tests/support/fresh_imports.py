"""Import every toolstand module on its own, each as if it came first; run as ``-c`` source.

Prints how many modules it found, then one line per module that failed to import.

``importlib.import_module("toolstand.a.b")`` with nothing of toolstand loaded first
imports ``toolstand``, then ``toolstand.a`` to its end, and only then ``b``, in the
state ``toolstand.a`` left behind. So each package is imported fresh once, and a fork
of that state imports each of its modules: the child starts from exactly the state a
fresh import of the module reaches before the module itself runs, and the package's
own import is not paid again per module. Nothing of a sibling is ever loaded in a
child, so a module that leans on a sibling imported first still fails.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import os
import pkgutil
import sys


def _names() -> list[str]:
    """Every module and package of toolstand but ``__main__``, by full name.

    Each is imported once here, so what they import from outside toolstand is loaded
    before the forks and not again in each child; then toolstand itself is forgotten.
    """
    import toolstand

    found = [
        m.name
        for m in pkgutil.walk_packages(toolstand.__path__, "toolstand.")
        if not m.name.endswith("__main__")
    ]
    for name in found:
        with contextlib.suppress(Exception):  # its own fresh import below says why
            importlib.import_module(name)
    for loaded in [m for m in sys.modules if m == "toolstand" or m.startswith("toolstand.")]:
        del sys.modules[loaded]
    return found


def _say(line: str) -> None:
    os.write(1, (line + "\n").encode())


def _under(package: str, names: list[str]) -> list[str]:
    return [n for n in names if n.rpartition(".")[0] == package]


def _import_each(package: str, names: list[str]) -> None:
    """In a process where ``package`` is freshly imported, import each child in a fork."""
    for name in _under(package, names):
        sys.stdout.flush()  # or the fork would print it twice
        gc.freeze()  # the child's collections then skip (and do not copy) what it inherits
        pid = os.fork()
        if pid == 0:
            status = 1  # anything that escapes (SystemExit too) ends the child, not its loop
            try:
                _import_one(name, names)
                status = 0
            finally:
                sys.stdout.flush()
                os._exit(status)
        _, status = os.waitpid(pid, 0)
        if status != 0:
            _say(f"{name}: child ended with status {status}")


def _import_one(name: str, names: list[str]) -> None:
    try:
        importlib.import_module(name)
    except Exception as exc:
        # its modules cannot import on their own either: each imports it first
        for failed in [name, *(n for n in names if n.startswith(name + "."))]:
            _say(f"{failed}: {exc!r}")
    else:
        _import_each(name, names)


def main() -> None:
    names = _names()
    _say(str(len(names)))
    importlib.import_module("toolstand")
    _import_each("toolstand", names)


if __name__ == "__main__":
    main()
