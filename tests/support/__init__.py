"""What test modules share: record builders, sim-run helpers, wire bodies, TUI drivers.

Test modules import helpers from here (``from tests.support.records import attempt``)
and never from one another; ``tests/test_test_imports.py`` holds them to that.
"""
