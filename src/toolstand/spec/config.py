"""The run configuration: which providers and models, with what settings.

Relative paths are relative to the config file's folder. Keys never live here: a run
names the environment variable that holds its key (``api_key_env``). Values are strict
(``"3"`` or ``true`` is not a number), and a ``base_url`` is checked when the file loads:
a run that could only fail must not start.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_serializer,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from toolstand.spec.cases import case_paths
from toolstand.types import (
    FEEDBACK_STYLES,
    MODES,
    SIM_FAULTS,
    STREAM_FAULT_IDS,
    Api,
    FeedbackStyle,
    Mode,
)
from toolstand.util.jsonpos import line_index, line_of
from toolstand.util.printable import visible
from toolstand.util.problems import (
    LoadError,
    Problem,
    json_document,
    json_path,
    pydantic_message,
    read_file,
)
from toolstand.util.redact import MIN_SECRET_LEN, redact_url, url_secrets

# ``stream``: false (the default), true, or "both": an arm of the matrix per value
StreamSetting = bool | Literal["both"]
DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024


def stream_arms(setting: StreamSetting | None) -> list[bool]:
    """The stream arms a setting asks for: [False], [True], or both, non-streamed first."""
    if setting == "both":
        return [False, True]
    return [bool(setting)]


def _default_modes() -> list[Mode]:
    return ["auto"]


def base_url_problem(url: str) -> str | None:
    """What is wrong with a ``base_url`` that is not ``sim``, or None: it must be an
    http(s) URL with a host and, if it names a port, one in 1-65535."""
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        return f"not a URL ({exc})"
    try:
        port = parts.port
    except ValueError:
        return "the port must be a number in 1-65535"
    if parts.scheme not in ("http", "https"):
        got = f"scheme {parts.scheme!r}" if parts.scheme else "no scheme"
        return f"the scheme must be http or https ({got})"
    if not parts.hostname:
        return "no host"
    if port == 0:
        return "the port must be a number in 1-65535"
    if not url.isprintable() or " " in url:
        return "a URL holds no spaces or control characters"
    return None


class _Strict(BaseModel):
    # a config is typed by hand: "3" or true where a number goes is a mistake to point
    # at, not a value to guess from
    model_config = ConfigDict(extra="forbid", strict=True)


class Prices(_Strict):
    input_per_mtok: float = Field(ge=0)
    output_per_mtok: float = Field(ge=0)


class RunOptions(_Strict):
    """API-specific settings of one run (``runs[i].options``); each one is taken only by
    the APIs that ``OPTIONS_BY_API`` lists for it, and the adapters read them from
    ``RequestSettings.options``."""

    # send the tools in strict mode, the schema rewritten as that mode requires
    strict: bool | None = None
    # openai-responses: whether the provider keeps the response (omitted: its default)
    store: bool | None = None
    # openai-chat: which field carries max_output_tokens (Ollama reads only max_tokens)
    max_tokens_param: Literal["max_completion_tokens", "max_tokens"] | None = None
    # gemini: the schema field of a function declaration
    gemini_schema: Literal["parametersJsonSchema", "parameters"] | None = None


OPTIONS_BY_API: dict[Api, tuple[str, ...]] = {
    "openai-chat": ("strict", "max_tokens_param"),
    "openai-responses": ("strict", "store"),
    "anthropic": ("strict",),
    "gemini": ("gemini_schema",),
}


def option_problem(api: str, key: str) -> str | None:
    """Why ``options.<key>`` cannot go with ``api``, or None when it can."""
    allowed = next((keys for name, keys in OPTIONS_BY_API.items() if name == api), None)
    if allowed is None or key in allowed:
        return None
    return f"{api} takes no option {key!r}; its options: {', '.join(allowed)}"


class RunSpec(_Strict):
    """One provider/model pair to run."""

    provider: str = Field(min_length=1)
    model: str = Field(min_length=1)
    api: Api = "openai-chat"
    base_url: str = Field(min_length=1)
    api_key_env: str | None = None
    anthropic_version: Literal["2023-06-01", "2026-10-21"] | None = None
    parallel_tool_calls: bool | None = None
    requests_per_minute: float | None = Field(default=None, gt=0)
    prices: Prices | None = None
    options: RunOptions | None = None
    # the only proxy a run's requests take: HTTP(S)_PROXY and ALL_PROXY from the
    # environment are ignored (they would send the key to a host no config names)
    proxy: str | None = None
    # streamed requests for this run (None: the config's top-level ``stream``)
    stream: StreamSetting | None = None

    @model_validator(mode="before")
    @classmethod
    def _options_fit_api(cls, data: object) -> object:
        # before validation, so an unknown key is named with the options its API takes
        if isinstance(data, dict) and isinstance(data.get("options"), dict):
            api = data.get("api", "openai-chat")
            for key in data["options"]:
                problem = option_problem(api, key) if isinstance(api, str) else None
                if problem is not None:
                    raise PydanticCustomError("run_option", problem, {"option": key})
        return data

    def adapter_options(self) -> dict[str, object]:
        """What the adapter reads from ``RequestSettings.options``: the options set,
        and ``anthropic_version``."""
        out: dict[str, object] = {}
        if self.anthropic_version:
            out["anthropic_version"] = self.anthropic_version
        if self.options is not None:
            out.update(self.options.model_dump(exclude_none=True))
        return out

    @field_validator("base_url")
    @classmethod
    def _base_url(cls, v: str) -> str:
        if v != "sim":
            problem = base_url_problem(v)
            if problem is not None:
                raise ValueError(
                    f'{problem}: give "sim" or an http(s) URL with a host, such as '
                    f"https://api.openai.com/v1 (got '{visible(redact_url(v))}')"
                )
        return v

    @field_validator("proxy")
    @classmethod
    def _proxy(cls, v: str | None) -> str | None:
        problem = None if v is None else base_url_problem(v)
        if problem is not None:
            raise ValueError(
                f"{problem}: a proxy is an http(s) URL with a host, such as "
                f"http://proxy.internal:3128 (got '{visible(redact_url(v or ''))}')"
            )
        return v

    @field_serializer("proxy")
    def _dump_proxy(self, v: str | None) -> str | None:
        return None if v is None else redact_url(v)

    @field_serializer("base_url")
    def _dump_base_url(self, v: str) -> str:
        # a RunSpec is dumped only into records and views, never back into a config: no
        # userinfo, no key= query parameter (the header's runs[] would keep it)
        return redact_url(v)

    @property
    def simulated(self) -> bool:
        return self.base_url == "sim"

    @property
    def plain_http(self) -> bool:
        """The base URL is ``http://``: no TLS anywhere on the way to it."""
        return urlsplit(self.base_url).scheme == "http"

    @property
    def label(self) -> str:
        return f"{self.provider}/{self.model} ({self.api})"


class Timeouts(_Strict):
    connect_s: float = Field(default=10.0, gt=0)
    read_s: float = Field(default=60.0, gt=0)
    # the wall-clock deadline of one request (one try): a server that trickles its
    # answer cannot hold it longer; never past retry.total_budget_s either
    request_s: float = Field(default=300.0, gt=0)
    # the wall-clock deadline of a whole headless attempt: every turn, try and wait
    attempt_s: float = Field(default=900.0, gt=0)


class Retry(_Strict):
    max_retries: int = Field(default=4, ge=0, le=20)
    base_delay_s: float = Field(default=0.5, ge=0)
    max_delay_s: float = Field(default=30.0, ge=0)
    total_budget_s: float = Field(default=120.0, gt=0)


def check_fault_rates(rates: Mapping[str, float]) -> None:
    """Refuse rates that name an unknown fault or add up to more than 1 (the rule the
    simulator applies too)."""
    unknown = set(rates) - set(SIM_FAULTS)
    if unknown:
        raise ValueError(f"unknown faults {sorted(unknown)}; allowed: {', '.join(SIM_FAULTS)}")
    if any(r < 0 for r in rates.values()) or sum(rates.values()) > 1.0 + 1e-9:
        raise ValueError("fault rates must be >= 0 and add up to at most 1")


def check_stream_faults(rates: Mapping[str, float]) -> None:
    """Refuse unknown stream fault ids and rates outside 0-1 (the simulator's rule too)."""
    unknown = sorted(set(rates) - set(STREAM_FAULT_IDS))
    if unknown:
        allowed = ", ".join(STREAM_FAULT_IDS)
        raise ValueError(f"unknown stream faults {unknown}; allowed: {allowed}")
    bad = sorted(k for k, r in rates.items() if not 0.0 <= r <= 1.0)
    if bad:
        raise ValueError(f"stream fault rates must be in 0-1 (got {bad[0]}: {rates[bad[0]]})")


class SimSettings(_Strict):
    seed: int = 0
    latency_s: float = Field(default=0.0, ge=0)
    retry_after_s: float = Field(default=0.0, ge=0)
    # how long a simulated timeout holds the connection (the client gives up first)
    timeout_hold_s: float = Field(default=900.0, gt=0)
    # sim-flaky's faults and their rates, replacing personas.FLAKY_FAULT_RATES; e.g.
    # {"rate_limited": 1.0} forces a 429 storm
    fault_rates: dict[str, float] | None = None
    # where streamed answers are cut (design.md, Streaming): token, whole or random
    stream_chunks: Literal["token", "whole", "random"] = "token"
    # sim-streambug's stream faults and their rates, replacing personas.STREAM_FAULTS
    stream_faults: dict[str, float] | None = None

    @field_validator("stream_faults")
    @classmethod
    def _known_stream_faults(cls, v: dict[str, float] | None) -> dict[str, float] | None:
        if v is not None:
            check_stream_faults(v)
        return v

    @field_validator("fault_rates")
    @classmethod
    def _known_faults(cls, v: dict[str, float] | None) -> dict[str, float] | None:
        if v is not None:
            check_fault_rates(v)
        return v


def _default_feedback() -> list[FeedbackStyle]:
    return ["allowed"]


class Repair(_Strict):
    """Repair turns (design.md, Repair turn): each feedback style is its own arm."""

    max_repairs: int = Field(default=0, ge=0, le=3)
    feedback: list[FeedbackStyle] = Field(default_factory=_default_feedback)

    @field_validator("feedback")
    @classmethod
    def _styles_unique(cls, v: list[str]) -> list[str]:
        if not v:
            raise ValueError(f"give at least one feedback style: {', '.join(FEEDBACK_STYLES)}")
        if len(set(v)) != len(v):
            raise ValueError("feedback styles must not repeat")
        return v

    @property
    def arms(self) -> list[FeedbackStyle | None]:
        """The feedback arms of the matrix; [None] when repairs are off."""
        return list(self.feedback) if self.max_repairs > 0 else [None]


class Config(_Strict):
    runs: list[RunSpec] = Field(min_length=1)
    temperature: float | None = 0.0
    max_output_tokens: int | None = Field(default=500, gt=0)
    repetitions: int = Field(default=3, ge=1, le=1000)
    parallelism: int = Field(default=1, ge=1, le=1024)
    modes: list[Mode] = Field(default_factory=_default_modes)
    system_prompt: str | None = None
    tools: str  # the contract: every config names its own, toolstand knows no default
    # a case file, a list of them, or a folder of *.jsonl (ids unique across them)
    cases: str | list[str]
    timeouts: Timeouts = Field(default_factory=Timeouts)
    retry: Retry = Field(default_factory=Retry)
    sim: SimSettings = Field(default_factory=SimSettings)
    repair: Repair | None = None
    # streamed requests (design.md, Streaming); a run's own ``stream`` overrides it
    stream: StreamSetting = False
    # a stream silent longer than this between two reads is stream_interrupted
    stream_idle_timeout_s: float = Field(default=30.0, gt=0)
    # the cap on a decoded response body, checked while it is read (response_too_large)
    max_response_bytes: int = Field(default=DEFAULT_MAX_RESPONSE_BYTES, ge=1024)
    # where the config came from, for resolving relative paths (not in the file)
    folder: Path = Field(default=Path("."), exclude=True)

    @field_validator("modes")
    @classmethod
    def _modes_unique(cls, v: list[str]) -> list[str]:
        if len(set(v)) != len(v):
            raise ValueError("modes must not repeat")
        if not v:
            raise ValueError(f"give at least one mode: {', '.join(MODES)}")
        return v

    @property
    def feedback_arms(self) -> list[FeedbackStyle | None]:
        """One entry per feedback arm; [None] when the config asks for no repair turns."""
        return self.repair.arms if self.repair is not None else [None]

    def stream_arms(self, run: RunSpec) -> list[bool]:
        """The stream arms of one run: its own ``stream``, else the config's."""
        return stream_arms(run.stream if run.stream is not None else self.stream)

    @field_validator("cases")
    @classmethod
    def _cases_named(cls, v: str | list[str]) -> str | list[str]:
        if isinstance(v, list) and not v:
            raise ValueError("give a case file, a list of case files, or a folder of *.jsonl")
        return v

    @property
    def cases_source(self) -> Path | list[Path]:
        """``cases`` resolved against the config's folder (one path, or a list)."""
        if isinstance(self.cases, list):
            return [self.folder / p if not Path(p).is_absolute() else Path(p) for p in self.cases]
        return self.folder / self.cases if not Path(self.cases).is_absolute() else Path(self.cases)

    @property
    def first_case_file(self) -> Path:
        """The one file a single-file view (the TUI's Cases editor) opens: the file, the
        list's first, or the folder's first ``*.jsonl``."""
        paths = case_paths(self.cases_source)
        if paths:
            return paths[0]
        source = self.cases_source
        return source[0] if isinstance(source, list) else source

    def resolve(self, path: str | None) -> Path | None:
        if path is None:
            return None
        p = Path(path)
        return p if p.is_absolute() else self.folder / p

    @property
    def prompt_path(self) -> Path | None:
        return self.resolve(self.system_prompt)

    def secrets(self) -> list[str]:
        """What no record may hold: every run's key, read from the environment now, and
        every password and ``key=`` query value in a base URL."""
        out = [os.environ.get(r.api_key_env) for r in self.runs if r.api_key_env]
        out += [s for r in self.runs for s in url_secrets(r.base_url)]
        out += [s for r in self.runs if r.proxy for s in url_secrets(r.proxy)]
        return [s for s in out if s]

    def short_keys(self) -> list[str]:
        """The ``api_key_env`` names whose key is too short to be scrubbed from text
        (see redact.MIN_SECRET_LEN), each once, in run order."""
        names = [r.api_key_env for r in self.runs if r.api_key_env]
        short = [n for n in names if 0 < len(os.environ.get(n, "")) < MIN_SECRET_LEN]
        return list(dict.fromkeys(short))


def parse_config(text: str | bytes, file: str = "<config>", folder: Path | None = None) -> Config:
    raw, data = json_document(text, file)
    if not isinstance(data, dict):
        raise LoadError([Problem(file, 1, "$", "a config is a JSON object with a 'runs' list")])
    index = line_index(raw)
    try:
        config = Config.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = tuple(
                p
                for p in err["loc"]
                if not (isinstance(p, str) and p.startswith(("literal[", "function-")))
            )
            if err["type"] == "run_option":  # the option itself, not the run, is wrong
                loc = (*loc, "options", err["ctx"]["option"])
            problems.append(
                Problem(file, line_of(index, loc), json_path(loc), pydantic_message(err))
            )
        raise LoadError(problems) from None
    config.folder = folder if folder is not None else Path(".")
    return config


def load_config(path: str | Path) -> Config:
    return parse_config(read_file(path), str(path), Path(path).resolve().parent)


# where a command or the TUI finds its config when none is named, in this order
DEFAULT_CONFIGS = ("config.json", "config.example.json")


def find_config(root: Path, given: str | None) -> Path | None:
    """The config named (relative to root), else config.json, else config.example.json in
    root, else None."""
    if given is not None:
        return Path(given) if Path(given).is_absolute() else root / given
    return next((root / n for n in DEFAULT_CONFIGS if (root / n).is_file()), None)
