"""What a run is made of: the config, contract, cases and prompt, loaded once, and the
run header that records them (design.md, History)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from toolstand import __version__
from toolstand.attempt.plan import Target
from toolstand.spec.cases import CaseFile
from toolstand.spec.config import Config
from toolstand.spec.contract import Contract
from toolstand.spec.identity import config_identity
from toolstand.util.problems import Problem


@dataclass
class Inputs:
    config: Config
    config_path: str
    contract: Contract
    contract_path: Path
    casefile: CaseFile
    cases_path: Path
    system: str | None
    prompt_version: str | None
    prompt_hash: str | None


def header(inputs: Inputs, run_id: str, *, resumed: bool = False) -> dict[str, Any]:
    c = inputs.config
    return {
        "type": "run",
        "schema_version": 1,
        "run_id": run_id,
        "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "resumed": resumed,
        "toolstand_version": __version__,
        "config": inputs.config_path,
        "contract": {
            "name": inputs.contract.name,
            "version": inputs.contract.version,
            "hash": inputs.contract.hash,
            "path": str(inputs.contract_path),
        },
        "cases": {
            "path": str(inputs.cases_path),
            "hash": inputs.casefile.sha256,
            "version": inputs.casefile.cases_version,
            "count": len(inputs.casefile.cases),
            **({"files": inputs.casefile.files} if inputs.casefile.files else {}),
        },
        "prompt": {
            "version": inputs.prompt_version,
            "hash": inputs.prompt_hash,
            "path": str(c.prompt_path),
        },
        "settings": {
            "temperature": c.temperature,
            "max_output_tokens": c.max_output_tokens,
            "repetitions": c.repetitions,
            "parallelism": c.parallelism,
            "modes": list(c.modes),
            "retry": c.retry.model_dump(),
            "timeouts": c.timeouts.model_dump(),
            **({"repair": c.repair.model_dump()} if c.repair is not None else {}),
            "stream": c.stream,
            "stream_idle_timeout_s": c.stream_idle_timeout_s,
            "max_response_bytes": c.max_response_bytes,
            # the simulator's seed, latency and any forced faults: its answers depend on them
            **({"sim": c.sim.model_dump()} if any(r.simulated for r in c.runs) else {}),
        },
        "runs": [
            {**r.model_dump(mode="json", exclude_none=True), "simulated": r.simulated}
            for r in inputs.config.runs
        ],
        # keys never written, but too short to be scrubbed from text (redact.py)
        "short_keys": c.short_keys(),
    }


def missing_keys(config: Config, config_path: str) -> list[Problem]:
    """Runs whose key variable is unset (the simulator needs none)."""
    out = []
    for i, r in enumerate(config.runs):
        if r.simulated:
            continue
        if not r.api_key_env:
            out.append(
                Problem(
                    config_path,
                    None,
                    f"$.runs[{i}].api_key_env",
                    "name the environment variable that holds the key",
                )
            )
        elif not os.environ.get(r.api_key_env):
            out.append(
                Problem(
                    config_path,
                    None,
                    f"$.runs[{i}].api_key_env",
                    f"environment variable {r.api_key_env} is not set",
                )
            )
    return out


@contextlib.asynccontextmanager
async def targets_for(inputs: Inputs, seed: int | None = None) -> AsyncIterator[list[Target]]:
    """Concrete targets; starts the embedded simulator when a run names it."""
    config = inputs.config
    sim = None
    root = None
    if any(r.simulated for r in config.runs):
        from toolstand.sim import SimServer

        sim = SimServer(
            inputs.casefile.cases,
            inputs.contract,
            seed=config.sim.seed if seed is None else seed,
            latency_s=config.sim.latency_s,
            retry_after_s=config.sim.retry_after_s,
            timeout_hold_s=config.sim.timeout_hold_s,
            fault_rates=config.sim.fault_rates,
            stream_chunks=config.sim.stream_chunks,
            stream_faults=config.sim.stream_faults,
        )
        root = await sim.start()
    try:
        targets = []
        for r in config.runs:
            if r.simulated:
                from toolstand.sim import sim_base_url

                assert root is not None
                targets.append(
                    Target.make(
                        r,
                        sim_base_url(root, r.api),
                        os.environ.get(r.api_key_env or "") or "sim-key",
                        config_identity(config, r),
                    )
                )
            else:
                key = os.environ.get(r.api_key_env or "")
                targets.append(Target.make(r, r.base_url, key, config_identity(config, r)))
        yield targets
    finally:
        if sim is not None:
            await sim.stop()
