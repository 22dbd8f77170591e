"""Re-import (`contract import --force` over an existing contract) merges: the source's
fields are refreshed, the user's x- keys and effect overrides are kept, and the summary
says what was kept, what changed and what was dropped."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.importers import Cli, raw_server, tool
from toolstand.spec.contract import load_contract

FAKE = [{"when": {}, "result": {"ok": True, "note_id": "n1"}}]
SIM = {"hints": ["jot"]}


def _import(cli: Cli, out: Path, server: list[str], *flags: str) -> Any:
    return cli("contract", "import", "--name", "notes", "--version", "1", "--out", str(out),
               *flags, "--mcp", "--", *server)  # fmt: skip


def _hand_edit(out: Path) -> None:
    data = json.loads(out.read_text(encoding="utf-8"))
    add = next(t for t in data["tools"] if t["name"] == "add_note")
    add["x-fake"] = FAKE
    add["x-sim"] = SIM
    add["parameters"]["properties"]["text"]["x-normalize"] = ["strip"]
    out.write_text(json.dumps(data, indent=2), encoding="utf-8")


V1 = [
    tool("search_notes", True, q={"type": "string"}),
    tool("add_note", True, text={"type": "string", "maxLength": 280}),
    tool("delete_note", False, id={"type": "string"}),
]
V2 = [
    tool("search_notes", True, q={"type": "string"}),
    tool("add_note", True, text={"type": "string", "maxLength": 500}),
    tool("tag_note", None, tag={"type": "string"}),
]


def test_reimport_keeps_hand_made_keys_and_effect_overrides(tmp_path: Path, cli: Cli) -> None:
    out = tmp_path / "notes.json"
    # the server calls add_note read-only; the user knows better
    ran = _import(cli, out, raw_server(tmp_path, V1), "--effect", "add_note=execute")
    assert ran.code == 0, ran.err
    _hand_edit(out)
    ran = _import(cli, out, raw_server(tmp_path, V2), "--force")
    assert ran.code == 0, ran.err
    contract = load_contract(out)
    add = contract.by_name["add_note"]
    assert add.effect == "execute"  # not read again, as the server's hint would say
    assert add.fake is not None and add.fake[0].result == {"ok": True, "note_id": "n1"}
    assert add.sim is not None and add.sim.hints == ["jot"]
    text = add.parameters["properties"]["text"]
    assert text == {"type": "string", "maxLength": 500, "x-normalize": ["strip"]}
    assert [t.name for t in contract.tools] == ["search_notes", "add_note", "tag_note"]
    assert "kept on add_note: effect execute (the source implies read), x-fake, x-sim, " \
        "x-normalize at $.properties.text" in ran.err  # fmt: skip
    assert "changed: add_note (parameters)" in ran.err
    assert "dropped: delete_note (gone from the source)" in ran.err
    assert "added: tag_note" in ran.err


def test_an_effect_given_again_wins_over_the_kept_one(tmp_path: Path, cli: Cli) -> None:
    out = tmp_path / "notes.json"
    server = raw_server(tmp_path, V1)
    assert _import(cli, out, server, "--effect", "add_note=execute").code == 0
    ran = _import(cli, out, server, "--force", "--effect", "add_note=prepare")
    assert ran.code == 0, ran.err
    assert load_contract(out).by_name["add_note"].effect == "prepare"
    assert "kept on add_note" not in ran.err


def test_an_effect_that_followed_the_source_follows_it_again(tmp_path: Path, cli: Cli) -> None:
    out = tmp_path / "notes.json"
    assert _import(cli, out, raw_server(tmp_path, V1)).code == 0
    flipped = [tool("search_notes", False, q={"type": "string"}), *V1[1:]]
    ran = _import(cli, out, raw_server(tmp_path, flipped), "--force")
    assert ran.code == 0, ran.err
    assert load_contract(out).by_name["search_notes"].effect == "execute"
    assert "unchanged in the source: add_note, delete_note" in ran.err


def test_a_file_that_is_not_a_contract_is_replaced_with_a_warning(tmp_path: Path, cli: Cli) -> None:
    out = tmp_path / "notes.json"
    out.write_text("not json", encoding="utf-8")
    ran = _import(cli, out, raw_server(tmp_path, V1), "--force")
    assert ran.code == 0, ran.err
    assert "was not a contract" in ran.err and "nothing of it was kept" in ran.err
    assert len(load_contract(out).tools) == 3


def test_reimport_leaves_out_again_what_the_import_skipped(tmp_path: Path, cli: Cli) -> None:
    out = tmp_path / "notes.json"
    server = raw_server(tmp_path, V1)
    assert _import(cli, out, server, "--skip", "delete_note").code == 0
    ran = _import(cli, out, server, "--force")
    assert ran.code == 0, ran.err
    contract = load_contract(out)
    assert [t.name for t in contract.tools] == ["search_notes", "add_note"]
    assert contract.source is not None and contract.source["skipped"] == ["delete_note"]
    assert "skipped: delete_note" in ran.err
