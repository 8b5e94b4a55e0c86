"""Reproductions of the seed threads' experiments, one module per thread, and of the kernel's
memory cgroup protection selftest (``memcg_protection``).

An experiment module has ``NAME``, ``TITLE``, ``SITUATIONS`` (see
:class:`.kswapd_highorder.Situation`) and ``our_row``; :func:`.runner.reproduce` runs it and
writes its report, which is what ``reclaimlab reproduce NAME`` does. A module that has its
own ``reproduce(situations, root, seed, trace=, on_run=)`` (checks computed from the engine's
functions as well as from runs) is run by it instead.
"""

from __future__ import annotations

from . import (
    blkback_pool,
    free_page_hinting,
    kswapd_highorder,
    memcg_protection,
    persistent_grants,
    shrinker_deferral,
)

EXPERIMENTS = {m.NAME: m for m in (kswapd_highorder, shrinker_deferral, free_page_hinting,
                                   blkback_pool, persistent_grants, memcg_protection)}
