"""The Run screen's model steps through repair turns: the feedback to edit, the turn sent
with the edit, the record and the views as the runner writes them."""

from __future__ import annotations

from pathlib import Path

import orjson

from tests.support.tui import write_config
from toolstand.tui.model.live import LiveSession, views_of
from toolstand.tui.model.live_repair import budget, edited, feedback_for, repair_due, styles_for
from toolstand.tui.model.project import load_project


async def test_step_edit_and_record_repair_turns(project: Path) -> None:
    write_config(
        project,
        runs=[{"provider": "sim", "model": "sim-sloppy", "api": "openai-chat", "base_url": "sim"}],
        repair={"max_repairs": 2, "feedback": ["path_value"]},
    )
    proj = load_project(project)
    assert proj.config is not None
    assert styles_for(proj.config) == ["path_value", "traceback", "allowed", "allowed_prose"]
    assert budget(proj.config) == 2
    case = proj.casefile.by_id()["quote_complete"]
    session = LiveSession(proj)
    try:
        for _ in range(30):  # sim-sloppy breaks this case's call now and then
            state = await session.first(0, case, "auto")
            if repair_due(state, proj.config):
                break
        else:
            raise AssertionError("sim-sloppy never sent an invalid call")
        results = feedback_for(state, "path_value")
        problem = results[0].result
        assert problem["error"]["code"] == "INVALID_ARGUMENTS"
        # the user edits the feedback: the edit is what goes out
        mine = {**problem, "error": {**problem["error"], "detail": "edited by hand"}}
        await session.repair(state, "path_value", edited(results, [mine]))
        assert len(state.repairs) == 1 and state.feedback == "path_value"
        sent = orjson.dumps(state.repairs[0].turn.built.http.body).decode()
        assert "edited by hand" in sent
        while repair_due(state, proj.config):
            await session.repair(state, "path_value", feedback_for(state, "path_value"))
        assert len(state.repairs) <= 2
        path, rec = session.append(state)
    finally:
        await session.close()
    assert rec["feedback"] == "path_value" and rec["repair"]["needed"] is True
    assert [t["index"] for t in rec["repair_turns"]] == list(range(1, len(state.repairs) + 1))
    assert (
        rec["repair_turns"][0]["tool_results"][0]["result"]["error"]["detail"] == "edited by hand"
    )
    labels = [v.label for v in views_of(state, rec)]
    assert labels[:2] == ["turn 1", "turn 2 · repair 1 · path_value"]
    written = [orjson.loads(x) for x in path.read_bytes().splitlines()]
    assert written[-1]["repair_turns"] == rec["repair_turns"]
