"""A run's identity: what makes two configured runs send different requests.

Two runs of one provider and model may still differ in what they send: the wire API,
the base URL, the options (strict tools, ``store``, ...), the Anthropic version,
parallel tool calls, the temperature or the output token limit. Their attempts must
never share a ``--resume`` key or a report group, so each attempt records its run's
identity (``run_identity``): a digest of exactly those fields, computed from the run
header's ``runs[i]`` entry and ``settings`` as written (base URLs already redacted).
A reader computes the same digest from a header, which is how a record written before
the field existed finds its run (``header_identities``).

Left out, on purpose: what only paces, routes, prices or labels a run (api_key_env,
requests_per_minute, proxy, prices, simulated) and the matrix arms that have keys of
their own (mode, stream, feedback). The contract, cases and prompt are hashed in the
header and compared apart (``compare`` notes a change of them). An option spelled out at
its default value (``anthropic_version: "2023-06-01"``) reads as another run than the
same option left out: the digest is of what the header says, not of the bytes sent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from toolstand.util.canonical import canonical_hash

if TYPE_CHECKING:  # the readers import this module: they must not pay for pydantic
    from toolstand.spec.config import Config, RunSpec

REQUEST_FIELDS: tuple[str, ...] = (
    *("provider", "model", "api", "base_url", "anthropic_version", "parallel_tool_calls"),
    "options",
)
SETTING_FIELDS: tuple[str, ...] = ("temperature", "max_output_tokens")
DIGEST_CHARS = 16


def identity_parts(run: Any, settings: Any) -> dict[str, Any] | None:
    """The fields of a header's run entry and settings that shape its requests (None
    and empty options left out, so an older header without them reads the same)."""
    if not isinstance(run, Mapping):
        return None
    parts = {k: run[k] for k in REQUEST_FIELDS if run.get(k) not in (None, {})}
    if isinstance(parts.get("options"), Mapping):
        options = {k: v for k, v in parts["options"].items() if v is not None}
        parts.pop("options")
        if options:
            parts["options"] = options
    if isinstance(settings, Mapping):
        parts.update((k, settings[k]) for k in SETTING_FIELDS if settings.get(k) is not None)
    return parts


def run_identity(run: Any, settings: Any) -> str | None:
    """The identity of a header's run entry under its settings; None when the entry is
    not an object or holds a value JSON cannot hash."""
    parts = identity_parts(run, settings)
    if parts is None:
        return None
    try:
        return canonical_hash(parts)[:DIGEST_CHARS]
    except TypeError:
        return None


# each run a header lists: its (provider, model, api), identity and identity parts
RunIdentities = list[tuple[tuple[str, str, str | None], str, dict[str, Any]]]


def header_identities(header: Mapping[str, Any]) -> RunIdentities:
    """Each run of a header: its (provider, model, api), identity and identity parts."""
    out: RunIdentities = []
    runs = header.get("runs")
    settings = header.get("settings")
    for run in runs if isinstance(runs, list) else []:
        ident = run_identity(run, settings)
        parts = identity_parts(run, settings)
        if ident is None or parts is None:
            continue
        api = run.get("api")
        slot = (str(run.get("provider")), str(run.get("model")), api if type(api) is str else None)
        out.append((slot, ident, parts))
    return out


class HeaderRuns:
    """The runs the headers list, by run_id: how a record without ``run_identity`` (one
    written before it existed) finds its run, and how a report describes a run."""

    def __init__(self) -> None:
        self.by_run: dict[str, dict[tuple[str, str, str | None], list[str]]] = {}
        self.parts: dict[str, dict[str, Any]] = {}  # identity -> its fields

    def add(self, header: Mapping[str, Any]) -> None:
        run_id = header.get("run_id")
        if type(run_id) is not str:
            return
        runs = self.by_run.setdefault(run_id, {})
        for slot, ident, parts in header_identities(header):
            found = runs.setdefault(slot, [])
            if ident not in found:
                found.append(ident)
            self.parts.setdefault(ident, parts)

    def merged(self, headers: list[dict[str, Any]]) -> HeaderRuns:
        """A copy of these runs with ``headers``' added."""
        out = HeaderRuns()
        out.by_run = {
            rid: {k: list(v) for k, v in slots.items()} for rid, slots in self.by_run.items()
        }
        out.parts = dict(self.parts)
        for h in headers:
            out.add(h)
        return out

    def candidates(self, run_id: Any, provider: Any, model: Any, api: Any) -> list[str]:
        """The identities of the runs the headers of ``run_id`` list with this provider,
        model and api: one for a record whose run is settled, several when two runs of
        one header differed only in what records before run_identity did not keep."""
        if type(run_id) is not str:
            return []
        slot = (str(provider), str(model), api if type(api) is str else None)
        return self.by_run.get(run_id, {}).get(slot, [])

    def resolve(self, run_id: Any, provider: Any, model: Any, api: Any) -> str | None:
        """The identity of an older record's run, or None when its headers do not settle it."""
        found = self.candidates(run_id, provider, model, api)
        return found[0] if len(found) == 1 else None


def _flat(parts: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in parts.items():
        if isinstance(v, Mapping):
            out.update((f"{k}.{sub}", x) for sub, x in v.items())
        else:
            out[k] = v
    return out


def _show(value: Any) -> str:
    if value is True or value is False or value is None:
        return str(value).lower()
    return str(value)


def distinguishing(
    described: list[Mapping[str, Any] | None], shown: tuple[str, ...]
) -> list[list[str]]:
    """For runs that would otherwise read the same, what tells each apart: the identity
    fields whose values differ among them (``shown``: fields the label already says),
    e.g. ``options.strict true`` against ``options.strict not set``. A run whose fields
    are unknown (a record older than run identities whose header does not settle it)
    reads "run not recorded"."""
    flats = [None if d is None else _flat(d) for d in described]
    names: list[str] = []
    for f in flats:
        for k in f or {}:
            if k not in names and k not in shown:
                names.append(k)
    differing = [k for k in names if len({repr(f.get(k, ...)) for f in flats if f is not None}) > 1]
    return [
        ["run not recorded"]
        if f is None
        else [f"{k} {_show(f[k])}" if k in f else f"{k} not set" for k in differing]
        for f in flats
    ]


def config_identity(config: Config, spec: RunSpec) -> str | None:
    """The identity a run of ``config`` writes: the same digest a reader computes from
    the header the runner writes for it (run/inputs.header)."""
    settings = {"temperature": config.temperature, "max_output_tokens": config.max_output_tokens}
    return run_identity(spec.model_dump(mode="json", exclude_none=True), settings)
