"""SSE framing: the WHATWG rules the four APIs rely on (providers.md S1), fed in any pieces."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from toolstand.adapters.sse import SseDecoder, SseEvent, decode_events


def feed_pieces(raw: bytes, cuts: list[int]) -> list[SseEvent]:
    decoder = SseDecoder()
    out: list[SseEvent] = []
    last = 0
    for cut in sorted(set(cuts)):
        out += decoder.feed(raw[last:cut])
        last = cut
    out += decoder.feed(raw[last:])
    decoder.close()
    return out


def test_lf_crlf_cr_and_mixed_line_ends_give_the_same_events() -> None:
    lf = b'event: a\ndata: {"x": 1}\n\ndata: two\n\n'
    want = [SseEvent("a", '{"x": 1}'), SseEvent("message", "two")]
    assert decode_events(lf)[0] == want
    assert decode_events(lf.replace(b"\n", b"\r\n"))[0] == want
    assert decode_events(lf.replace(b"\n", b"\r"))[0] == want
    assert decode_events(b'event: a\r\ndata: {"x": 1}\r\r\ndata: two\n\r\n')[0] == want


def test_a_crlf_split_between_reads_is_one_line_end() -> None:
    raw = b"data: one\r\n\r\ndata: two\r\n\r\n"
    for cut in range(len(raw) + 1):
        assert feed_pieces(raw, [cut]) == [SseEvent("message", "one"), SseEvent("message", "two")]


def test_multi_line_data_is_joined_with_newlines() -> None:
    events, _ = decode_events(b'data: {"a":\ndata:  1}\n\n')
    assert events == [SseEvent("message", '{"a":\n 1}')]


def test_comments_are_counted_not_dispatched_and_no_space_is_needed() -> None:
    events, dec = decode_events(b": OPENROUTER PROCESSING\n\ndata:{}\n: ping\n\n")
    assert events == [SseEvent("message", "{}")]
    assert dec.comments == 2


def test_event_without_data_is_not_dispatched_empty_data_is() -> None:
    events, _ = decode_events(b"event: lonely\n\ndata:\n\n")
    assert events == [SseEvent("message", "")]


def test_field_order_does_not_matter() -> None:
    events, _ = decode_events(b'data: {"type":"x"}\nevent: x\n\n')
    assert events == [SseEvent("x", '{"type":"x"}')]


def test_unfinished_last_event_is_discarded() -> None:
    events, _ = decode_events(b"data: one\n\ndata: cut")
    assert events == [SseEvent("message", "one")]


def test_leading_bom_is_skipped_even_when_split() -> None:
    raw = b"\xef\xbb\xbfdata: x\n\n"
    for cut in range(4):
        assert feed_pieces(raw, [cut]) == [SseEvent("message", "x")]


def test_id_retry_and_unknown_fields() -> None:
    events, dec = decode_events(b"id: 7\nretry: 10\nfoo: bar\ndata: x\n\n")
    assert events == [SseEvent("message", "x", "7")]
    assert dec.stray == ["foo: bar"]


def test_line_separators_inside_json_strings_do_not_end_lines() -> None:
    text = '{"t":"a\u2028b\u0085c\x1cd"}'
    events, _ = decode_events(f"data: {text}\n\n".encode())
    assert events == [SseEvent("message", text)]


def test_a_bare_json_tail_is_kept_as_stray_lines() -> None:
    raw = b'data: {}\r\n\r\n{\n  "error": {\n    "code": 503\n  }\n}'
    events, dec = decode_events(raw)
    assert events == [SseEvent("message", "{}")]
    assert "\n".join(dec.stray) == '{\n  "error": {\n    "code": 503\n  }\n}'


SAMPLE = (
    'event: message_start\ndata: {"type":"message_start"}\n\n'
    ": keep-alive\n"
    'event: content_block_delta\r\ndata: {"text":"Edinburgh \u2014 one moment \u00e9\U0001f600"}\r\n\r\n'
    "data: line one\ndata: line two\n\n"
    "data: [DONE]\r\r"
).encode()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=len(SAMPLE)), max_size=40))
def test_any_chunking_gives_the_same_events(cuts: list[int]) -> None:
    assert feed_pieces(SAMPLE, cuts) == decode_events(SAMPLE)[0]


def test_one_byte_at_a_time_even_inside_utf8_sequences() -> None:
    assert feed_pieces(SAMPLE, list(range(len(SAMPLE)))) == decode_events(SAMPLE)[0]
    assert len(decode_events(SAMPLE)[0]) == 4


def test_reads_of_one_event_each_keep_the_name_and_id_of_earlier_reads() -> None:
    # each read a whole ``data:`` event (the decoder's fast path), after reads that set
    # the event name and id, before one that names nothing, and after a CR line end
    reads = [
        b"event: delta\n",
        b"id: 7\n",
        b'data: {"a": 1}\n\n',
        b'data: {"b": 2}\n\n',
        b"data: x\r\n\r\n",
        b"data: y\n\n",
        b"data:z\n\n",
        b"data: \n\n",
    ]
    decoder = SseDecoder()
    events = [e for r in reads for e in decoder.feed(r)]
    assert events == decode_events(b"".join(reads))[0]
    assert [(e.event, e.data, e.id) for e in events[:2]] == [
        ("delta", '{"a": 1}', "7"),
        ("message", '{"b": 2}', "7"),
    ]
    assert [e.data for e in events[2:]] == ["x", "y", "z", ""]
