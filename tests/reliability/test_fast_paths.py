"""The fast paths the runner benchmark asked for keep the behaviour of the slow ones:
the record scrub's one-pass check, the schema copy, the try record."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from toolstand.adapters.schema import json_copy, strip_private
from toolstand.spec.contract import load_contract
from toolstand.transport import Try
from toolstand.util.redact import _scrub, scrub, scrubbable

ROOT = Path(__file__).resolve().parents[2]

SECRET_CHARS = st.sampled_from(list('ab"\\\n\x01é😀/ -'))
secret_text = st.text(SECRET_CHARS, min_size=8, max_size=10)  # shorter ones are not scrubbed


@settings(max_examples=200, deadline=None)
@given(data=st.data(), secrets_=st.lists(secret_text, min_size=1, max_size=2))
def test_scrub_finds_a_secret_wherever_it_hides(data: Any, secrets_: list[str]) -> None:
    """The quick check (one orjson pass) agrees with a full walk: escaped quotes,
    backslashes, control characters, non-ASCII, in values and keys at any depth (a
    provider may echo a key as a property name)."""
    leaf = st.one_of(
        st.text(SECRET_CHARS, max_size=8),
        st.builds(
            lambda a, s, b: a + s + b,
            st.text(max_size=3),
            st.sampled_from(secrets_),
            st.text(max_size=3),
        ),
        st.integers(-(2**63), 2**63 - 1),
        st.none(),
        st.booleans(),
    )
    keys = st.text(SECRET_CHARS, max_size=6) | st.sampled_from(secrets_)
    value = data.draw(
        st.recursive(
            leaf,
            lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
            max_leaves=12,
        )
    )
    wanted = scrubbable(secrets_)
    assert scrub(value, secrets_) == _scrub(value, wanted, keys=True)
    blob = orjson.dumps(value)
    if not any(orjson.dumps(s)[1:-1] in blob for s in wanted):
        assert scrub(value, secrets_) is value  # nothing to hide: no walk, no copy


def test_a_secret_in_a_value_that_is_not_json_is_still_found() -> None:
    value = {"big": 2**70, "t": ("x sk-12345",), 3: ["sk-12345"]}
    assert scrub(value, ["sk-12345"]) == {
        "big": 2**70,
        "t": ("x ***REDACTED***",),
        3: ["***REDACTED***"],
    }


def test_json_copy_is_a_deep_copy() -> None:
    contract = load_contract(ROOT / "contracts" / "delivery_tools.json")
    for tool in contract.tools:
        copied = json_copy(tool.parameters)
        assert copied == tool.parameters == copy.deepcopy(tool.parameters)
        copied["properties"].clear()  # nothing is shared with the contract
        assert tool.parameters["properties"]
        stripped, notes = strip_private(tool.name, tool.parameters)
        assert "x-normalize" not in str(stripped)
        assert [n.keyword for n in notes] == ["x-normalize"] * str(tool.parameters).count(
            "x-normalize"
        )
    odd = {"n": 2**70, "k": {1: [1.5]}}
    assert json_copy(odd) == odd and json_copy(odd)["k"] is not odd["k"]


def test_a_try_record_holds_every_field() -> None:
    t = Try(429, "rate_limited", 1.5, retry_after_s=0.2, waited_s=0.2, message="slow down")
    t.headers = {"retry-after": "0.2"}  # a retried try keeps its answer's headers
    assert t.to_dict() == dataclasses.asdict(t)
    assert list(t.to_dict()) == [f.name for f in dataclasses.fields(Try)]
    t.headers = None  # the rest do not: the key is left out of the record
    assert t.to_dict() == {k: v for k, v in dataclasses.asdict(t).items() if k != "headers"}
