"""The terminal UI (Textual). Nothing outside this package may import it.

Importing it holds Python's cyclic collector until the app's first frame (see
``startup.py``): the imports below it are where most of the start's objects come from.
"""

from toolstand.tui.startup import hold_collector

hold_collector()
