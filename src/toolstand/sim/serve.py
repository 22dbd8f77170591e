"""Running the simulator outside an event loop: in a thread (sync callers, the TUI) or forever
(``toolstand sim``)."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from toolstand.sim.personas import MODELS, PERSONAS
from toolstand.sim.server import APIS, SimServer, sim_base_url
from toolstand.spec.cases import Case, load_case_set
from toolstand.spec.contract import Contract, load_contract


@contextlib.contextmanager
def serve_in_thread(cases: list[Case], contract: Contract, **kw: Any) -> Iterator[str]:
    """Serve on a background thread with its own loop; yields the root URL."""
    loop = asyncio.new_event_loop()
    server = SimServer(cases, contract, **kw)
    ready = threading.Event()
    failure: list[BaseException] = []

    def run() -> None:
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(server.start())
        except BaseException as exc:  # surfaced in the caller's thread
            failure.append(exc)
            ready.set()
            loop.close()
            return
        ready.set()
        try:
            loop.run_forever()
        finally:
            loop.run_until_complete(server.stop())
            loop.close()

    thread = threading.Thread(target=run, name="toolstand-sim", daemon=True)
    thread.start()
    ready.wait()
    if failure:
        raise failure[0]
    try:
        yield server.root
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join()


def banner(root: str) -> str:
    """What ``toolstand sim`` prints: the URL, the base URL per API and the models."""
    lines = [f"toolstand simulator (a simulated provider, not a real model) on {root}"]
    lines += [f"  {api:<17} base_url {sim_base_url(root, api)}" for api in APIS]
    lines.append("  models: " + ", ".join(MODELS))
    lines += [f"    sim-{name}: {what}" for name, what in PERSONAS.items()]
    lines.append("  any non-empty API key is accepted; Ctrl-C stops")
    return "\n".join(lines)


def serve_forever(
    cases_path: str | Path | list[str],
    contract_path: str | Path,
    host: str = "127.0.0.1",
    port: int = 0,
    seed: int = 0,
    *,
    latency_s: float = 0.0,
    retry_after_s: float = 0.0,
) -> None:
    """Serve until interrupted, after printing where (``toolstand sim``)."""
    cases = load_case_set(cases_path).cases  # a file or a folder of *.jsonl
    contract = load_contract(contract_path)

    async def main() -> None:
        server = SimServer(
            cases,
            contract,
            host=host,
            port=port,
            seed=seed,
            latency_s=latency_s,
            retry_after_s=retry_after_s,
        )
        root = await server.start()
        print(banner(root), flush=True)
        try:
            await asyncio.Event().wait()
        finally:
            await server.stop()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main())
    print("toolstand simulator stopped", file=sys.stderr)
