"""run: `toolstand run` and `toolstand rejudge` over the attempt engine.

``inputs`` loads what a run is made of and writes its header; ``matrix`` plans the
records and groups them into repetitions; ``checks`` says what a run refuses; ``work``
keeps ``parallelism`` repetitions in flight; ``runner`` holds the history's lock and
ties them together; ``rejudge`` re-reads stored answers.
"""
