"""attempt: one attempt, from its plan to its record, for every caller.

``plan`` decides once what an attempt sends and is judged against; ``reading`` turns
any provider answer into a decision and a judgement; ``turns`` sends turn 1, repair
turns and turn 2; ``repair_turns`` runs the repair loop with ``feedback`` (what the
fake ``executor`` answers an invalid call); ``record`` builds the JSONL record; ``arms``
runs one repetition in every feedback arm from one shared turn 1. The runner, the Run
screen, the pasted-body judge and ``rejudge`` all go through ``plan`` and ``reading``.
"""
