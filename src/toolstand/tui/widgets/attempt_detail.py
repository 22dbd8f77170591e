"""One attempt in full: raw response (or request) beside the normalized decision, and the
judgement with every error explained. Read-only; the record comes from a worker."""

from __future__ import annotations

from typing import Any

import orjson
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Static, TextArea

from toolstand.history import error_code
from toolstand.tui.model.events import EventRow, recorded_rows, stream_titles
from toolstand.tui.model.timing import timing_line, tries_lines, turn_ms
from toolstand.tui.model.turns import attempt_turns, repair_lines, verdict_line
from toolstand.tui.widgets.titled import Pane
from toolstand.util.printable import visible, visible_lines

SHOWN_BYTES = 1 << 16  # a pane shows this much of a body; `y` copies the whole record


def pretty(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()


def shown(text: str, limit: int = SHOWN_BYTES) -> str:
    """``text`` for a read-only pane: control characters spelled (orjson leaves DEL and
    C1 as they are), and past ``limit`` bytes cut with a note of how much is left out:
    a 1 MB string would take seconds and hundreds of MB to lay out."""
    data = text.encode()
    if len(data) > limit:
        head = data[:limit].decode(errors="ignore")
        rest = len(data) - len(head.encode())
        text = f"{head}\n… {rest:,} more bytes, y copies all"
    return visible_lines(text)


CUT_NOTE = "… a value is cut: F11 on this pane shows each whole"


def _short(value: Any, limit: int | None = 60) -> str:
    """``value`` as compact JSON (a string as it is), cut at ``limit`` (None: whole)."""
    text = value if isinstance(value, str) else orjson.dumps(value).decode()
    return text if limit is None or len(text) <= limit else text[: limit - 1] + "…"


def explain(rec: dict[str, Any], whole: bool = False) -> list[str]:
    """The judgement as lines a person reads: each error with where, expected and
    actual; each call's repair classification and the repairs applied. Values are cut
    to fit a line unless ``whole`` (the pane maximized), and a note then says how to
    read them."""
    out: list[str] = []
    cut = False

    def short(value: Any, limit: int) -> str:
        nonlocal cut
        text = _short(value, None if whole else limit)
        cut = cut or text != _short(value, None)
        return text

    te = rec.get("transport_error")
    if isinstance(te, dict):
        out.append(f"transport error {te.get('code')} (status {te.get('status')}): no verdict")
        out.append(f"  {te.get('message')}")
        out.append("  left out of every quality denominator")
    j = rec.get("judgement")
    if not isinstance(j, dict):
        return out or ["not judged"]
    out.append(f"verdict: {verdict_line(rec)}")
    for e in j.get("errors") or []:
        where = [f"turn {e.get('turn', 1)}"]
        if e.get("call_index") is not None:
            where.append(f"call {e['call_index']}")
        if e.get("path"):
            where.append(f"at {e['path']}")
        out.append(f"✗ {error_code(e)} ({', '.join(where)})")
        if e.get("message"):
            out.append(f"    {e['message']}")
        if ("expected" in e or "actual" in e) and whole:  # each on its own line, whole
            out += [f"    expected {short(e.get('expected'), 0)}",
                    f"    actual   {short(e.get('actual'), 0)}"]  # fmt: skip
        elif "expected" in e or "actual" in e:
            out.append(
                f"    expected {short(e.get('expected'), 60)} · actual {short(e.get('actual'), 60)}"
            )
    for c in j.get("calls") or []:
        line = f"call {c.get('index')} {c.get('name')}: {c.get('repair')}"
        flags = [k for k in ("exact", "normalized") if c.get(k)]
        if c.get("unsafe"):
            flags.append("UNSAFE")
        if flags:
            line += f" ({', '.join(flags)})"
        out.append(line)
        for r in c.get("repairs") or []:
            out.append(
                f"    repair {r.get('rule')} at {r.get('path')}: "
                f"{short(r.get('from'), 30)} → {short(r.get('to'), 30)}"
            )
    marks = j.get("flags")
    if marks:  # a list as the judge writes it; anything else shown as it is
        out.append(f"flags: {', '.join(map(str, marks)) if isinstance(marks, list) else marks}")
    st = rec.get("second_turn")
    if isinstance(st, dict):
        sj = st.get("judgement") or {}
        ste = st.get("transport_error")
        state = f"transport error {ste.get('code')}" if isinstance(ste, dict) else (
            "passed" if sj.get("passed") else "failed"
        )  # fmt: skip
        out.append(f"second turn: {state}")
    return [*out, CUT_NOTE] if cut else out


def _head_text(side: Any, tries: list[dict[str, Any]], request: bool) -> str:
    """A request's method, full URL and headers; a response's status, headers and tries."""
    side = side if isinstance(side, dict) else {}
    headers = side.get("headers") if isinstance(side.get("headers"), dict) else {}
    if request:
        lines = [f"{side.get('method', '')} {side.get('url', '')}".strip(), ""]
    else:
        status = side.get("status")
        lines = [f"HTTP {status}" if status is not None else "no response", ""]
    lines += [f"{k}: {v}" for k, v in headers.items()] or ["(no headers recorded)"]
    if not request:
        lines += ["", "tries:", *(f"  {x}" for x in tries_lines(tries))]
    return "\n".join(lines)


def pane_titles(names: tuple[str, ...], label: str) -> list[str]:
    """A pane's titles, the fullest first: each of its ``names`` (the fullest first) with
    the turn's whole label, then with its first two parts ("turn 2 · repair 1", without
    the feedback style the header names), then with the first: cut in no word."""
    parts = label.split(" · ")
    labels = dict.fromkeys([label, " · ".join(parts[:2]), parts[0]])
    return [f"{name} · {shown}" for shown in labels for name in names]


class AttemptDetail(Vertical):
    """Left: the raw response (or the request); right: the decision; below: the judgement."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rec: dict[str, Any] | None = None
        self.rejudged: dict[str, Any] | None = None
        self.turn = 1
        self.show_request = False
        self.show_headers = False
        self.whole = False  # the judgement's values whole (its pane maximized)

    def compose(self) -> ComposeResult:
        yield Static("", id="detail-head", markup=False)
        with Horizontal(id="detail-panes"):
            with Pane(classes="pane", id="pane-raw"):
                yield TextArea("", language="json", read_only=True, id="detail-raw")
            with Pane(classes="pane", id="pane-decision"):
                yield TextArea("", language="json", read_only=True, id="detail-decision")
        with VerticalScroll(id="detail-judgement", classes="pane"):
            yield Static("", id="detail-explain", markup=False)

    def show(self, rec: dict[str, Any], rejudged: dict[str, Any] | None = None) -> None:
        self.rec, self.rejudged = rec, rejudged
        if self.turn > len(attempt_turns(rec)):
            self.turn = 1
        self._fill()

    def toggle_request(self) -> None:
        self.show_request = not self.show_request
        self._fill()

    def toggle_headers(self) -> None:
        """The raw pane shows the URL or status, the headers and the tries, or the body."""
        self.show_headers = not self.show_headers
        self._fill()

    def show_whole(self, whole: bool) -> None:
        """The judgement's expected and actual values whole, or cut to fit a line."""
        if whole != self.whole:
            self.whole = whole
            self._fill()

    def toggle_turn(self) -> bool:
        """Step to the next turn (repair turns, then the second turn), back to turn 1
        after the last; False when the attempt had one turn only."""
        turns = attempt_turns(self.rec) if self.rec is not None else []
        if len(turns) < 2:
            return False
        self.turn = self.turn % len(turns) + 1
        self._fill()
        return True

    def _events(self, raw: Any) -> list[EventRow] | None:
        """The events of a streamed response (not when the request is shown), else None."""
        if self.show_request or not isinstance(raw, dict):
            return None
        return recorded_rows(raw)

    def _fill(self) -> None:
        rec = self.rec
        if rec is None:
            return
        turns = attempt_turns(rec)
        shown_turn = turns[min(self.turn, len(turns)) - 1]
        turn = shown_turn.body
        raw = turn.get("request") if self.show_request else turn.get("response")
        what = "request" if self.show_request else "raw response"
        # the label holds the record's own feedback and index: plain text, spelled
        label = visible(shown_turn.label)
        tries = [t for t in turn.get("tries") or [] if isinstance(t, dict)]
        area = self.query_one("#detail-raw", TextArea)
        names: tuple[str, ...] = ()
        if self.show_headers:
            what += " headers"
            area.language = None
            area.load_text(shown(_head_text(raw, tries, self.show_request)))
        elif (rows := self._events(raw)) is not None:  # a stream: its events, as they came
            names = stream_titles(raw.get("stream") if isinstance(raw, dict) else None, len(rows))
            area.language = None
            area.load_text(shown("\n".join(r.line() for r in rows) or "(no events)"))
        else:
            area.language = "json"
            area.load_text(shown(pretty(raw)))
        self.query_one("#pane-raw", Pane).titled(*pane_titles(names or (what,), label))
        decision = ("normalized decision", "decision")
        self.query_one("#pane-decision", Pane).titled(*pane_titles(decision, label))
        self.query_one("#detail-decision", TextArea).load_text(shown(pretty(turn.get("decision"))))
        total = rec.get("elapsed_ms")
        timing = timing_line(
            turn_ms(tries), total if isinstance(total, int | float) else None, len(turns)
        )
        stream = rec.get("stream")  # the stream arm; absent before streaming existed
        arm = (" · streamed" if stream else " · not streamed") if isinstance(stream, bool) else ""
        head = (
            f"{rec.get('provider')}/{rec.get('model')} · {rec.get('mode')}{arm} · "
            f"{rec.get('case_id')} #{rec.get('attempt')} · {verdict_line(rec)} · "
            f"{rec.get('started_at')}" + (f" · {label}: {timing}" if timing else "")
        )
        self.query_one("#detail-head", Static).update(visible(head))
        lines = explain(rec, self.whole)
        if self.rejudged is not None:
            before, after = verdict_line(rec), verdict_line(self.rejudged)
            change = "unchanged" if before == after else f"CHANGED {before} → {after}"
            lines = [
                f"re-judged with the current code: {change}",
                *explain(self.rejudged, self.whole),
            ]
            self.query_one("#detail-judgement").border_title = "judgement (re-judged now)"
        else:
            self.query_one("#detail-judgement").border_title = "judgement (as recorded)"
        lines += repair_lines(self.rejudged or rec, shown_turn)
        if timing:
            lines.append(f"{shown_turn.label}: {timing}")
        if len(tries) > 1 or any(t.get("error_code") for t in tries):  # retries: each one
            lines += [f"  {x}" for x in tries_lines(tries)]
        if rec.get("user"):
            lines.append(f"user: {rec['user']}")
        # each line one line: a message's own newlines and escapes are spelled
        text = "\n".join(visible(line) for line in lines)
        self.query_one("#detail-explain", Static).update(shown(text))
