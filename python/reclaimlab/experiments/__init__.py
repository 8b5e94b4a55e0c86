"""Reproductions of the seed threads' experiments, one module per thread.

An experiment module has ``NAME``, ``TITLE`` and ``SITUATIONS`` (see
:class:`.kswapd_highorder.Situation`); ``reclaimlab reproduce NAME`` runs it
(:mod:`reclaimlab.commands.reproduce`).
"""

from __future__ import annotations

from . import kswapd_highorder

EXPERIMENTS = {m.NAME: m for m in (kswapd_highorder,)}
