"""scripts/swap-windows.py (docs/MODEL.md item 10) on a transcript made here."""
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "swap-windows.py"


def _read(pid: int, t: float, slot: int, pages: int, dev: str = "254,0") -> str:
    # One block request as the guest's trace prints it: sectors of 512 bytes, 8 a page.
    return (f"  work-{pid}  [001] .....  {t:.6f}: block_rq_issue: {dev} R {pages * 4096} () "
            f"{slot * 8} + {pages * 8} [work]\n")


def test_reads_issued_together_are_one_window_and_the_hit_rate_is_the_boots(tmp_path):
    lines = ["pgmajfault 0\n", "swap_ra_hit 0\n",
             _read(7, 1.0, 40, 1),                              # a miss, window of 1
             _read(7, 2.0, 41, 1), _read(7, 2.00005, 43, 1),    # one window: slots 41-43 -> 4
             _read(7, 3.0, 16, 2), _read(7, 3.00008, 20, 4),    # slots 16-23 -> 8
             _read(7, 4.0, 9, 1), _read(7, 4.5, 10, 1),         # 0.5 s apart: two misses
             _read(9, 5.0, 1, 1, dev="254,16"),                 # the data disk: not swap
             "pgmajfault 40\n", "swap_ra_hit 10\n"]
    path = tmp_path / "output.log"
    path.write_text("".join(lines))
    out = subprocess.run([sys.executable, str(SCRIPT), str(path)], capture_output=True,
                         text=True, check=True).stdout
    assert "5 swap-ins; pages read: [(1, 3), (2, 1), (6, 1)]" in out
    assert "smallest aligned window spanning each: [(1, 3), (4, 1), (8, 1)]" in out
    assert "window of 4 or 8: 2 (40.0 %)" in out
    assert "hits a major fault: 0.250" in out and "= 20.0 %" in out
