"""One turn side by side: the sanitized request, the raw response, the normalized
decision and the verdict with its codes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import orjson
from rich.text import Text
from textual.app import ComposeResult
from textual.widget import Widget
from textual.widgets import ContentSwitcher, Static, TextArea

from toolstand.tui.model.events import EventRow, stream_line, stream_titles
from toolstand.tui.model.live import TurnView, conversation_of
from toolstand.tui.model.timing import timing_line, tries_lines, turn_ms
from toolstand.tui.widgets.titled import Pane, ScrollPane, Titled
from toolstand.util.printable import visible, visible_lines

_ANCHOR = "__toolstand_anchor__"


def pretty(value: Any) -> str:
    """``value`` as indented JSON for a pane, DEL and C1 spelled (orjson leaves them)."""
    try:
        return visible_lines(orjson.dumps(value, option=orjson.OPT_INDENT_2).decode())
    except TypeError:  # integers beyond 64 bits: show them as text
        return visible_lines(repr(value))


def request_titles(req: Mapping[str, Any]) -> tuple[str, ...]:
    """The request pane's titles, the fullest first: the method and URL; the path
    without the host (the run chosen above says it, F6 shows the whole URL); the path;
    then its end, whole, after "…": its last segments, then a Google-style verb
    (``…:generateContent``), rather than a path cut in its middle."""
    method, url = str(req.get("method", "")), str(req.get("url", ""))
    path = urlsplit(url).path or url
    segments = path.split("/")
    tails = [f"…/{'/'.join(segments[i:])}" for i in range(2, len(segments))]
    head, colon, verb = segments[-1].rpartition(":")
    if colon and head:
        tails.append(f"…:{verb}")
    return tuple(
        visible(f"request · {x}".strip())
        for x in (f"{method} {url}", f"{method} {path}", path, *tails)
    )


def verdict_titles(verdict: str, label: str) -> tuple[str, ...]:
    """The verdict pane's titles, the fullest first: the pane's name, the verdict and the
    turn's label; without the name; narrow, without the label's "turn N" (the turn tabs
    above say it), then with its second part alone ("repair 1"), never cut in a word."""
    parts = label.split(" · ")
    labels = [label, *([" · ".join(parts[1:]), parts[1]] if len(parts) > 1 else [])]
    return tuple(
        visible(f"{name}{verdict} · {shown}")
        for name, shown in [("verdict · ", label), *(("", x) for x in labels)]
    )


def _body_area(id: str) -> TextArea:
    return TextArea(
        id=id,
        read_only=True,
        language="json",
        soft_wrap=True,
        show_line_numbers=False,
        highlight_cursor_line=False,
    )


def _load(area: TextArea, text: str) -> None:
    """``text`` into ``area``; an empty area is left as it is (loading rebuilds its
    document, wrapping and highlights: a panes' reset before each run paid it five times)."""
    if text or area.document.line_count > 1 or area.document.get_line(0):
        area.load_text(text)


def _short(value: Any, limit: int = 80) -> str:
    text = visible(value if isinstance(value, str) else orjson.dumps(value).decode())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def anchor_line(body: Any, anchor: int | None) -> int:
    """The line of ``pretty(body)`` where conversation item ``anchor`` starts (0: none).

    The item is swapped for a marker and the body printed again: the lines before an
    item do not depend on it, so the marker's line is the item's."""
    found = conversation_of(body)
    if anchor is None or found is None or not 0 <= anchor < len(found[1]):
        return 0
    key, items = found
    marked = {**body, key: [*items[:anchor], _ANCHOR, *items[anchor + 1 :]]}
    for n, line in enumerate(pretty(marked).split("\n")):
        if _ANCHOR in line:
            return n
    return 0


def _error_line(err: Mapping[str, Any]) -> str:
    """code[.subcode] path (call i): the message, else expected and actual."""
    code = str(err.get("code", "?"))
    if err.get("subcode"):
        code += f".{err['subcode']}"
    where = f" {err['path']}" if err.get("path") else ""
    call = f" (call {err['call_index']})" if err.get("call_index") is not None else ""
    if err.get("message"):
        detail = str(err["message"])
    else:
        bits = [f"{k} {_short(err[k])}" for k in ("expected", "actual") if k in err]
        detail = " · ".join(bits)
    return visible(f"  {code}{where}{call}" + (f": {detail}" if detail else ""))


def verdict_text(view: TurnView) -> Text:
    """The verdict, its codes, the followup checks and any transport failure, plainly."""
    out = Text()
    if view.tool_results:
        out.append("tool results sent:\n", style="bold")
        for r in view.tool_results:
            result = r.get("result") or {}
            error = result.get("error")
            if result.get("ok") is not False:
                state = "ok"
            elif isinstance(error, dict):
                state = str(error.get("code", "error"))
            else:  # a traceback's text (repair feedback): the line naming the exception
                lines = str(error or "error").strip().splitlines()
                state = next((x for x in lines if "Error: " in x), lines[-1])[:60]
            out.append(visible(f"  {r.get('name')} → {state}") + "\n")
    if view.transport_error is not None:
        te = view.transport_error
        out.append("TRANSPORT ERROR", style="bold yellow")
        out.append(f"  {te.get('code')}\n")
        out.append(visible_lines(f"{te.get('message') or ''}") + "\n")
        if te.get("status") is not None:
            out.append(f"HTTP {te['status']}\n")
        out.append(f"retries made: {view.retries}\n", style="bold")
        for line in tries_lines(view.tries):
            out.append(visible(f"  {line}") + "\n")
        out.append("not a verdict: left out of every quality metric", style="dim")
        return out
    # read defensively: a view can hold a judgement from an older record
    j: Mapping[str, Any] | None = view.judgement
    if j is None:
        out.append("no verdict yet", style="dim")
        return out
    verdict = str(j.get("verdict", "?"))
    out.append(verdict.upper(), style="bold green" if verdict == "pass" else "bold red")
    errors = j.get("errors") or []
    if errors:
        codes = sorted({e.get("code", "?") for e in errors})
        out.append("  " + ", ".join(codes) + "\n")
        for e in errors:
            out.append(_error_line(e) + "\n")
    else:
        out.append("\n")
    if view.checks:
        out.append("followup checks:\n", style="bold")
        for name, value in view.checks.items():
            out.append(f"  {name}: {_short(value, 60)}\n")
    for c in j.get("calls") or []:
        out.append(visible(f"call {c.get('index')}: {c.get('name')} · {c.get('repair')}"))
        if c.get("known_tool") is False:
            out.append(" · unknown tool (not in the contract)", style="bold red")
        if c.get("unsafe"):
            out.append(" · unsafe", style="bold red")
        out.append("\n")
    if j.get("flags"):
        out.append(f"flags: {', '.join(j['flags'])}\n", style="dim")
    if view.retries:
        out.append(f"retries made: {view.retries}\n", style="bold")
        for line in tries_lines(view.tries):
            out.append(visible(f"  {line}") + "\n")
    return out


def _head_area(id: str) -> TextArea:
    return TextArea(
        id=id, read_only=True, soft_wrap=True, show_line_numbers=False, highlight_cursor_line=False
    )


def _header_lines(headers: Mapping[str, Any] | None) -> list[str]:
    return [f"{k}: {v}" for k, v in (headers or {}).items()] or ["(no headers recorded)"]


def request_head(req: Mapping[str, Any]) -> str:
    """The full URL and the request headers as sent (keys redacted in the record)."""
    lines = [f"{req.get('method', '')} {req.get('url', '')}".strip(), ""]
    return visible_lines("\n".join(lines + _header_lines(req.get("headers"))))


def response_head(view: TurnView) -> str:
    """The status, the response headers kept in the record, and every try."""
    resp = view.response or {}
    status = f"HTTP {resp['status']}" if resp.get("status") is not None else "no response"
    lines = [status, "", *_header_lines(resp.get("headers")), "", "tries:"]
    lines += [f"  {x}" for x in tries_lines(view.tries)] or ["  (none recorded)"]
    return visible_lines("\n".join(lines))


class ExchangeView(Widget):
    """Four panes over one TurnView; empty until something ran. The request and the
    response each show their body or, toggled, their URL, status, headers and tries; a
    streamed response shows its events (arrival ms, type, delta) in place of the body."""

    def __init__(self) -> None:
        super().__init__()
        self.headers_shown = False
        self.total_ms: float | None = None  # the attempt's network time, all turns
        self.turns = 1
        self._view: TurnView | None = None
        self._rows: list[EventRow] | None = None
        self._events = 0  # events of the turn on its way

    def compose(self) -> ComposeResult:
        for side in ("request", "response"):
            with (
                Pane(classes="pane", id=f"pane-{side}"),
                ContentSwitcher(initial=f"{side}-body", id=f"{side}-switch"),
            ):
                yield _body_area(f"{side}-body")
                yield _head_area(f"{side}-head")
                if side == "response":
                    yield _head_area("response-events")
        with Pane(classes="pane", id="pane-decision"):
            yield _body_area("decision-body")
        with ScrollPane(classes="pane", id="pane-verdict"):
            yield Static("", id="verdict-text", markup=False)

    def on_mount(self) -> None:
        self.show(None)

    def toggle_headers(self) -> None:
        """Show the URL, headers and tries of both sides, or their bodies again."""
        self.headers_shown = not self.headers_shown
        shown = "request-head" if self.headers_shown else "request-body"
        self.query_one("#request-switch", ContentSwitcher).current = shown
        self.show(self._view, self._rows)

    @staticmethod
    def _open_at(area: TextArea, line: int) -> None:
        """Scroll so ``line`` is at the top: the last messages, not the system prompt."""
        area.move_cursor(area.document.end)
        area.move_cursor((line, 0))

    def _pane(self, name: str, *titles: str) -> None:
        """Title pane ``name`` with the first of ``titles`` (the fullest first) that fits."""
        if self.headers_shown and name in ("request", "response"):
            titles = tuple(f"headers: {t}" for t in titles)
        self.query_one(f"#pane-{name}", Titled).titled(*titles)

    def _events_shown(self, shown: bool) -> None:
        body = "response-events" if shown else "response-body"
        switch = self.query_one("#response-switch", ContentSwitcher)
        switch.current = "response-head" if self.headers_shown else body

    def streaming(self, label: str) -> None:
        """A streamed turn on its way: the events pane and the decision fill as events
        arrive (``add_event``)."""
        self._events = 0
        self._events_shown(True)
        self._pane("response", f"events · 0 · {label}")
        _load(self.query_one("#response-events", TextArea), "")
        self._pane("decision", "decision · streaming")
        _load(self.query_one("#decision-body", TextArea), "")

    def add_event(self, row: EventRow) -> None:
        """One more event of the turn on its way, and its delta into the decision pane."""
        self._events += 1
        events = self.query_one("#response-events", TextArea)
        events.insert(("\n" if self._events > 1 else "") + row.line(), events.document.end)
        events.scroll_end(animate=False)
        self._pane("response", f"events · {self._events} · streaming")
        if row.delta:
            decision = self.query_one("#decision-body", TextArea)
            decision.insert(visible(row.delta), decision.document.end)

    def show(self, view: TurnView | None, events: list[EventRow] | None = None) -> None:
        """``view`` in the panes; ``events``, the rows of its streamed response."""
        self._view = view
        self._rows = events
        q = self.query_one
        self._events_shown(events is not None)
        if view is None:
            for name in ("request", "response", "decision"):
                self._pane(name, name)
                _load(q(f"#{name}-body", TextArea), "")
            for name in ("request", "response"):
                _load(q(f"#{name}-head", TextArea), "")
            self._pane("verdict", "verdict")
            q("#verdict-text", Static).update(
                Text("Run a case (ctrl+g) or paste a body (ctrl+o).", style="dim")
            )
            return
        req = view.request or {}
        self._pane("request", *request_titles(req))
        request = q("#request-body", TextArea)
        _load(request, pretty(req.get("body")) if req else "")
        _load(q("#request-head", TextArea), request_head(req) if req else "")
        _load(q("#response-head", TextArea), response_head(view))
        line = anchor_line(req.get("body"), view.anchor)
        if request.size.width:  # laid out: wrapped to its width, scrolled in this frame
            self._open_at(request, line)
        else:  # the first show: scrolled once it is laid out, in one more frame
            self.call_after_refresh(self._open_at, request, line)
        resp = view.response
        raw = q("#response-body", TextArea)
        if resp is None:
            self._pane("response", "raw response · none")
            _load(raw, "")
        else:
            took = turn_ms(view.tries)
            http = f"HTTP {resp.get('status')}"
            tries = f" · {len(view.tries)} tries" if len(view.tries) > 1 else ""
            # the fullest first; narrow, the time and the tries give way (F6 has them)
            said = [http + tries]
            if took is not None:
                ms = f"{took:.0f} ms"
                said = [f"{http} · net {ms}{tries}", f"{http} · {ms}{tries}", f"{http} · {ms}"]
            if events is None:
                self._pane("response", *(f"raw response · {x}" for x in [*said, http]))
            else:
                titles = stream_titles(resp.get("stream"), len(events))
                self._pane("response", *(f"{titles[0]} · {x}" for x in said), *titles)
                _load(
                    q("#response-events", TextArea),
                    "\n".join(r.line() for r in events) or "(no events)",
                )
            body = resp.get("body")
            # a body that is not JSON (an HTML 502 page) is shown as the text it was
            raw.language = "json" if resp.get("body_is_json") else None
            _load(raw, pretty(body) if resp.get("body_is_json") else visible_lines(str(body or "")))
        decision = view.decision
        self._pane(
            "decision", f"decision · {decision.get('kind')}" if decision else "decision · none"
        )
        _load(q("#decision-body", TextArea), pretty(decision) if decision else "")
        verdict = (
            "transport error"
            if view.transport_error
            else (view.judgement["verdict"] if view.judgement else "")
        )
        self._pane("verdict", *verdict_titles(verdict, view.label))
        text = verdict_text(view)
        timing = timing_line(turn_ms(view.tries), self.total_ms, self.turns)
        if timing:
            text.append(f"\n{timing}", style="dim")
        if self._rows is not None and resp is not None:
            text.append(f"\n{stream_line(resp.get('stream'))}", style="dim")
        q("#verdict-text", Static).update(text)
