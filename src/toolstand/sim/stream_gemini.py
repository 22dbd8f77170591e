"""Gemini ``:streamGenerateContent?alt=sse`` (providers.md S5), built from the unstreamed body.

Each event is ``data: `` + one whole ``GenerateContentResponse`` + CRLF CRLF, with no
``event:`` lines and no sentinel. A chunk holds the parts made since the previous one:
text as many ``text`` parts (a fragment each), function calls whole, all of one turn's
calls in one chunk with the ``thoughtSignature`` on the first, as unstreamed. Every chunk
has ``usageMetadata`` (running totals that end at the unstreamed counts), ``modelVersion``
and ``responseId``; only the last has ``finishReason``. After calls the last chunk is
``{"text": ""}`` with the ``finishReason`` (the gemini-3 recordings). An answer with no
parts (a safety block, a malformed call) is one chunk: the unstreamed candidate. An
in-band error (``error_inband``) is a ``data:`` chunk or a bare JSON tail after the last
event, as both are reported after a 200.
"""

from __future__ import annotations

from typing import Any

from toolstand.sim.stream import Splitter, Sse, usage_share

UNAVAILABLE = {
    "error": {
        "code": 503,
        "message": "The model is overloaded. Please try again later. (toolstand simulator)",
        "status": "UNAVAILABLE",
    }
}
_LAST = ("finishReason", "finishMessage", "safetyRatings")


def gemini_events(body: dict[str, Any], splitter: Splitter, faults: frozenset[str]) -> list[Sse]:
    candidate = body["candidates"][0]
    parts = (candidate.get("content") or {}).get("parts") or []
    slices: list[list[dict[str, Any]]] = []
    calls = [p for p in parts if "functionCall" in p]
    for part in parts:
        if "text" in part:
            slices += [[{**part, "text": f}] for f in splitter.split(part["text"])]
    if calls:
        slices += [calls, [{"text": ""}]]
    usage = body["usageMetadata"]
    head = {k: v for k, v in candidate.items() if k not in ("content", *_LAST)}
    chunks = []
    for n, piece in enumerate(slices or [[]]):
        out = usage_share(usage["candidatesTokenCount"], n + 1, len(slices or [[]]))
        running = {**usage, "candidatesTokenCount": out}
        running["totalTokenCount"] = usage["promptTokenCount"] + out
        cand = dict(head) if piece else dict(candidate)
        if piece:
            cand = {"content": {"parts": piece, "role": "model"}, **head}
        chunks.append(
            {
                "candidates": [cand],
                "usageMetadata": running,
                "modelVersion": body["modelVersion"],
                "responseId": body["responseId"],
            }
        )
    last = chunks[-1]["candidates"][0]
    last.update({k: candidate[k] for k in _LAST if k in candidate})
    if "error_inband" in faults:
        # as a data chunk, or (every other response) as a bare pretty-printed JSON tail (S5.7)
        bare = int(body["responseId"][-1], 16) % 2 == 1
        error = Sse(UNAVAILABLE, raw=True) if bare else Sse(UNAVAILABLE)
        return [*(Sse(c) for c in chunks[: max(1, len(chunks) // 2)]), error]
    if "no_terminal" in faults:
        for key in _LAST:
            last.pop(key, None)
    return [Sse(c) for c in chunks]
