"""Where a sweep's runs run: a local process pool (forked workers) or Ray tasks. Both run
:func:`run_job`, which returns a run's files encoded (or its error), so only the driver writes
the store.

Workers import this module, so it imports nothing heavy at the top (ray is imported where used).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from typing import Any

from .. import api
from ..results import result_files
from .file import SweepError
from .planning import Job


def run_job(text: str, name: str, seed: int, base_dir: str | None = None) -> dict[str, Any]:
    """Run one job where it is scheduled (a pool worker, a Ray task): the result's files,
    encoded, or the error. Errors are returned, not raised: a run that fails fails the same way
    every time (the simulator is deterministic), so there is nothing to retry. The times cover
    the simulation and the encoding of its files, what ``reclaimlab run`` does for one run."""
    cpu, wall = time.process_time(), time.perf_counter()
    try:
        r = api.run(api.Source(text=text, name=name, base_dir=base_dir), seed=seed)
    except Exception as e:  # noqa: BLE001 - recorded with the run, the sweep goes on
        return {"ok": False, "error": f"{type(e).__name__}: {str(e).strip()}"}
    files = result_files(r.texts(), r.series)
    return {"ok": True, "files": files, "wall_time_s": time.perf_counter() - wall,
            "cpu_time_s": time.process_time() - cpu}


def _init_worker() -> None:
    """A pool worker dies with its parent, however the parent dies (SIGKILL included), instead
    of finishing a run nobody will store; Ctrl-C is the parent's to handle."""
    import ctypes
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        libc = None
    if os.getppid() == 1:  # the parent died before prctl took effect
        os._exit(1)
    _keep_freed_memory(libc)


#: glibc's mallopt parameters: M_TRIM_THRESHOLD, M_MMAP_THRESHOLD.
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3


def _keep_freed_memory(libc: Any) -> None:
    """A worker runs one simulation after another, each allocating its frame arrays (tens
    to hundreds of MiB) and freeing them at its end: glibc would give that memory back to
    the kernel and the next run would fault it in and have it zeroed again (a few percent of
    a run's CPU time). Arrays up to glibc's largest threshold (32 MiB: a guest of up to 16
    GiB) come from the heap instead, which is not trimmed, so the next run reuses them.
    Nothing changes in what a run computes; without glibc, nothing happens."""
    import ctypes

    try:
        libc.mallopt(_M_MMAP_THRESHOLD, 32 << 20)
        # The largest value a C int takes: no run frees that much at once.
        libc.mallopt(_M_TRIM_THRESHOLD, (1 << 31) - 1)
    except (AttributeError, OSError, ctypes.ArgumentError):
        pass


class _Local:
    """A process pool of ``workers`` processes, forked from this one: they start with
    everything already imported (a spawned worker would spend about half a second of CPU on
    imports, several percent of a sweep of short runs). :func:`execute` submits the first job
    before anything starts a thread in this process (the progress display starts after), so
    the fork copies no thread's half-held lock."""

    def __init__(self, workers: int):
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        self.workers = workers
        self.pool = ProcessPoolExecutor(
            workers, mp_context=multiprocessing.get_context("fork"), initializer=_init_worker
        )

    def submit(self, job: Job):
        return self.pool.submit(run_job, job.text, job.name, job.seed, job.base_dir)

    def results(self, handles: dict) -> Iterable[tuple[Any, dict[str, Any]]]:
        from concurrent.futures import as_completed

        for fut in as_completed(handles):
            try:
                yield fut, fut.result()
            except Exception as e:  # a worker died (killed, out of memory)
                yield fut, {"ok": False, "error": f"worker lost: {type(e).__name__}: {e}"}

    def close(self, interrupted: bool) -> None:
        if interrupted:
            # Do not wait for the runs in flight: kill the workers (their results would be lost
            # anyway, and the next sweep recomputes only those).
            for p in list(getattr(self.pool, "_processes", {}).values()):
                p.kill()
        # Wait even then: with the workers dead the pool's manager thread ends at once, and
        # joining it here keeps it from writing into pipes the interpreter's exit has already
        # closed (a traceback after the "interrupted" line, seen on a loaded machine).
        self.pool.shutdown(wait=True, cancel_futures=True)


def _check_reachable(address: str) -> None:
    """Fail fast on a HOST:PORT nobody listens on (ray.init would retry for minutes)."""
    import socket

    host, sep, port = address.rpartition(":")
    if address == "auto" or not sep or not port.isdigit() or "://" in address:
        return
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as e:
        raise SweepError(
            f"error: --ray {address}: cannot connect to a Ray cluster ({e.strerror or e}); start "
            "one with `ray start --head`, or check the address"
        ) from None


class _Ray:
    """Each run a Ray task on the cluster at ``address`` ("auto": the one this machine is in),
    retried by Ray if its worker or node dies."""

    RETRIES = 3

    def __init__(self, address: str):
        try:
            import ray
        except ImportError:
            raise SweepError(
                "error: --ray needs Ray: pip install 'reclaimlab[ray]' (in this environment)"
            ) from None
        import logging

        self.ray = ray
        _check_reachable(address)
        try:
            ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False)
        except (ConnectionError, RuntimeError, ValueError) as e:
            raise SweepError(f"error: --ray {address}: cannot connect to a Ray cluster: {e}") from None
        self.workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self.remote = ray.remote(max_retries=self.RETRIES, num_cpus=1)(run_job)

    def submit(self, job: Job):
        return self.remote.remote(job.text, job.name, job.seed, job.base_dir)

    def results(self, handles: dict) -> Iterable[tuple[Any, dict[str, Any]]]:
        pending = list(handles)
        while pending:
            ready, pending = self.ray.wait(pending, num_returns=1)
            ref = ready[0]
            try:
                yield ref, self.ray.get(ref)
            except Exception as e:  # retries exhausted
                yield ref, {"ok": False, "error": f"ray task failed: {type(e).__name__}: {e}"}

    def close(self, interrupted: bool) -> None:
        self.ray.shutdown()
