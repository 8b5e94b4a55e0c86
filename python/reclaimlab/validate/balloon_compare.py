"""The balloon comparison: the kept real runs' returned memory and its timing beside the
simulator's run of the same scenario (its ``vm_rss.csv``), figures from :mod:`.rss`.

Alignment on each side: time 0 is the guest program's free. Real: the host time at which the
`freeing` marker line (printed just before free()) arrived, the end the `idle_done` marker. Simulated: the scenario's own
timeline, the guest's start + the workload's start + its `duration` (the program holds its
memory until then), the end the last sample of the run.
"""

from __future__ import annotations

import statistics
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import api
from . import rss
from .balloon import BalloonSpec
from .errors import ValidateError


@dataclass
class BalloonComparison:
    scenario: str
    hinting: str
    kept: dict[str, Any]
    real: list[rss.Returned]
    sim: rss.Returned | None  # None: real figures only (--real-only)

    def as_json(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario, "hinting": self.hinting,
            "accel": self.kept.get("accel"), "kernel_package": self.kept.get("kernel_package"),
            "real": [r.as_json() for r in self.real],
            "sim": self.sim.as_json() if self.sim else None,
        }


def real_figures(kept: dict[str, Any]) -> list[rss.Returned]:
    """Each kept repetition's figures, from VmRSS (the whole QEMU process: the guest's RAM,
    the emulator's own memory, its code cache under TCG; only the guest's part moves at the
    free)."""
    out = []
    for i, rep in enumerate(kept["reps"]):
        s, m = rep["samples"], rep["markers"]
        try:
            out.append(rss.returned(
                s["t_s"], [v << 10 for v in s["vm_rss_kib"]],
                m["freeing"]["host_s"], m["idle_done"]["host_s"],
            ))
        except (KeyError, ValueError) as e:
            where = f"{kept.get('scenario')}: reps[{i}]"
            raise ValidateError(f"{where}: unusable samples: {e}") from None
    return out


def sim_figures(spec: BalloonSpec, csv_path: Path) -> rss.Returned:
    """The figures of the scenario's guest in a simulator result's ``vm_rss.csv``."""
    times, cols = rss.read_vm_rss_csv(csv_path)
    if spec.guest_name not in cols:
        raise ValidateError(
            f"{csv_path}: no column {spec.guest_name!r} (the guest of {spec.path}); it has "
            f"{', '.join(cols) or 'none'}"
        )
    try:
        return rss.returned(times, cols[spec.guest_name], spec.free_ns / 1e9)
    except ValueError as e:
        raise ValidateError(f"{csv_path}: {e}") from None


def simulate(spec: BalloonSpec, out: Path | None = None, seed: int = 1) -> Path:
    """Run the scenario in the simulator (seed ``seed``) into ``out`` (default: a scratch
    directory) and return the path of its ``vm_rss.csv``."""
    directory = Path(out) if out is not None else Path(tempfile.mkdtemp(prefix="balloon-"))
    api.run(spec.path, seed=seed, out=directory / spec.name)
    return directory / spec.name / "vm_rss.csv"


def compare(spec: BalloonSpec, kept: dict[str, Any], sim_csv: Path | None) -> BalloonComparison:
    sim = sim_figures(spec, sim_csv) if sim_csv is not None else None
    return BalloonComparison(spec.name, spec.hinting, kept, real_figures(kept), sim)


def mean_sd(values: list[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (0 for one value)."""
    m = statistics.fmean(values)
    return m, (statistics.stdev(values) if len(values) > 1 else 0.0)


def times(values: list[float | None]) -> list[float] | None:
    """The repetitions' times, or None when any repetition returned too little to have one."""
    return None if any(v is None for v in values) else [v for v in values if v is not None]
