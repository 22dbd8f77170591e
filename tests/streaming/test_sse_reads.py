"""``decode_reads`` (the headless runner's decode of a whole stream once it stops)
against the incremental decoder fed read by read: the same events, each timed by the
same read, and the same stray lines, whichever path (single ``data:`` lines over the
whole buffer, or the full parser) it takes."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolstand.adapters.sse import SseDecoder, SseEvent, decode_reads

RECORDED = Path("/work/shared/reference/recorded/streams")


def incremental(reads: list[bytes]) -> tuple[list[SseEvent], list[int], list[str], int]:
    decoder = SseDecoder()
    events: list[SseEvent] = []
    ends: list[int] = []
    for i, chunk in enumerate(reads):
        got = decoder.feed(chunk)
        events += got
        ends += [i] * len(got)
    decoder.close()
    return events, ends, decoder.stray, decoder.comments


def cut(raw: bytes, cuts: list[int]) -> list[bytes]:
    bounds = [0, *sorted({c for c in cuts if 0 < c < len(raw)}), len(raw)]
    return [raw[a:b] for a, b in pairwise(bounds) if b > a]


def same(reads: list[bytes]) -> None:
    events, ends, decoder = decode_reads(reads)
    assert (events, ends, decoder.stray, decoder.comments) == incremental(reads)
    assert decode_reads(reads, b"".join(reads))[:2] == (events, ends)


TOKENS = (
    'data: {"choices":[{"delta":{"content":"Edinburgh \u2014 \u00e9\U0001f600"}}]}\n\n'
    'data: {"choices":[{"delta":{"content":"a\\n\\nb"}}]}\n\n'
    "data: \n\n"
    "data: [DONE]\n\n"
).encode()

# one piece each of what the fast path must hand to the full parser
PIECES = [
    b"data: x\n\n",
    b"data:y\n\n",
    b"data: a\ndata: b\n\n",
    b"data: cr\r\n\r\n",
    b"data: lone cr\r\r",
    b": keep-alive\n",
    b"event: delta\n",
    b"id: 7\n",
    b"retry: 10\n",
    b"\n",
    b'{"error": {"code": 503}}\n',
    b"\xef\xbb\xbf",
    b"data: \xe2\x80\xa8 \xc3",
    b"\xa9\n\n",
    b"data: cut",
]


def test_a_token_stream_one_event_per_read_and_one_byte_per_read() -> None:
    events, _, _ = decode_reads([TOKENS])
    assert [e.data[:6] for e in events] == ['{"choi', '{"choi', "", "[DONE]"]
    same(cut(TOKENS, []))
    same(cut(TOKENS, list(range(len(TOKENS)))))
    same([TOKENS + b"data: unfinished"])
    same([TOKENS + b"not a field"])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=len(TOKENS)), max_size=30))
def test_any_chunking_of_a_token_stream(cuts: list[int]) -> None:
    same(cut(TOKENS, cuts))


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(PIECES), min_size=1, max_size=12),
    st.lists(st.integers(min_value=0, max_value=400), max_size=12),
)
def test_any_mix_of_fields_line_ends_and_faults(pieces: list[bytes], cuts: list[int]) -> None:
    same(cut(b"".join(pieces), cuts))


@pytest.mark.skipif(not RECORDED.is_dir(), reason="no recorded streams on this machine")
@pytest.mark.parametrize("name", ["openai-chat-tool-call", "openai-responses-tool-call"])
def test_recorded_streams_and_their_data_only_form(name: str) -> None:
    raw = (RECORDED / f"{name}.sse").read_bytes()
    same(cut(raw, list(range(0, len(raw), 7))))
    lf = raw.replace(b"\r\n", b"\n")
    data_only = b"\n".join(
        line for line in lf.split(b"\n") if not line.startswith((b"event:", b"id:"))
    )
    same(cut(data_only, list(range(0, len(data_only), 13))))
    same([data_only])
