"""toolstand.sim: the embedded simulated provider (four wire APIs, seeded personas).

A real HTTP server on loopback whose "models" (``sim-careful``, ``sim-eager``,
``sim-sloppy``, ``sim-positional``, ``sim-flaky``) answer from the case file. It is
labelled a simulator everywhere: the ``x-toolstand-simulator: 1`` response header,
the ``sim-`` model names and the ``*_sim`` ids.
"""

from toolstand.sim.personas import MODELS, PERSONAS
from toolstand.sim.serve import banner, serve_forever, serve_in_thread
from toolstand.sim.server import APIS, SimServer, sim_base_url

__all__ = [
    "APIS",
    "MODELS",
    "PERSONAS",
    "SimServer",
    "banner",
    "serve_forever",
    "serve_in_thread",
    "sim_base_url",
]
