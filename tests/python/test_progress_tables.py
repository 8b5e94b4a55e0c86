"""Progress bar and tables (pure Python)."""

from __future__ import annotations

import io

from reclaimlab.progress import ProgressBar, format_seconds
from reclaimlab.tables import headline_columns, key_value_table, markdown_table, run_summary_rows


class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


class Tty(io.StringIO):
    def isatty(self):
        return True


def test_bar_silent_during_first_second():
    clock, s = Clock(), Tty()
    bar = ProgressBar(s, clock=clock)
    clock.t += 0.99
    assert bar(1_000_000_000, 10_000_000_000) is None
    assert s.getvalue() == ""
    clock.t += 0.02
    bar(2_000_000_000, 10_000_000_000)
    text = s.getvalue()
    assert bar.shown
    assert " 20%" in text and "2.000 s / 10.00 s simulated" in text
    assert "1.98x real time" in text  # 2 s simulated in 1.01 s
    bar(5_000_000_000, 10_000_000_000)
    assert " 50%" in s.getvalue()[len(text):]
    bar.close()
    assert not bar.shown
    # Transient: closing moves back up over the bar and erases it (rich's control codes).
    assert "\x1b[2K" in s.getvalue()[len(text):]


def test_bar_silent_without_tty():
    clock, s = Clock(), io.StringIO()
    bar = ProgressBar(s, clock=clock)
    clock.t += 5
    bar(1, 2)
    bar.close()
    assert s.getvalue() == ""


def test_bar_never_shown_means_close_writes_nothing():
    s = Tty()
    bar = ProgressBar(s, clock=Clock())
    bar(1, 2)
    bar.close()
    assert s.getvalue() == ""


def test_bar_clamps_past_the_end_and_empty_runs():
    clock, s = Clock(), Tty()
    bar = ProgressBar(s, clock=clock, delay=0)
    clock.t += 1
    bar(20, 10)
    assert "100%" in s.getvalue()
    bar(0, 0)
    bar.close()


def test_format_seconds():
    assert format_seconds(0.1234) == "0.123 s"
    assert format_seconds(12.345) == "12.35 s"
    assert format_seconds(125) == "2m 05s"
    assert format_seconds(3725) == "1h 02m"


def test_summary_table_lists_headline_in_order():
    rows = run_summary_rows(
        scenario="s",
        seed=7,
        sim_time_ns=2_500_000_000,
        wall_time_s=0.25,
        headline={"pswpin": 1, "pswpout": 22, "allocstall": 0, "oom_kill": 0},
        out="results/s",
    )
    text = key_value_table(rows)
    labels = [line.split("  ")[0].strip() for line in text.splitlines()]
    assert labels == [
        "scenario", "seed", "simulated time", "wall time",
        "pswpin", "pswpout", "allocstall", "oom_kill", "results",
    ]
    assert "2.500 s" in text and "0.250 s" in text and "22" in text


def test_markdown_table():
    md = markdown_table(["scenario", "seed", "pswpout"], [["a|b", 1, 2.5], ["c", 10, None]])
    lines = md.splitlines()
    assert lines[0].startswith("| scenario")
    assert lines[1].split("|")[2].strip().endswith(":")  # numeric column right-aligned
    assert "a\\|b" in lines[2]
    assert lines[3].rstrip().endswith("- |")  # missing value
    assert all(len(line) == len(lines[0]) for line in lines)


def test_headline_columns_union_in_order():
    assert headline_columns(
        [{"headline": {"a": 1, "b": 2}}, {"headline": {"b": 1, "c": 3}}, {"nothing": 1}]
    ) == ["a", "b", "c"]


def test_large_floats_print_in_fixed_point():
    from reclaimlab.tables import format_value

    assert format_value(268500.123) == "268500.1"
    assert format_value(4052.0) == "4052"
    assert format_value(2.5) == "2.5"


def test_sweep_progress_counts_done_running_failed():
    from types import SimpleNamespace

    from reclaimlab.progress import sweep_progress

    s = Tty()
    jobs = [SimpleNamespace(label=f"x={i}, seed 1") for i in range(5)]
    with sweep_progress(s) as on_event:
        on_event("start", 6, 1, 2)  # 6 runs, 1 already stored, 2 workers
        for j in jobs:
            on_event("submitted", j)
        on_event("done", jobs[0])
        on_event("failed", jobs[1], "TraceError: bad.csv: record 2\nmore")
        on_event("done", jobs[2])
    out = s.getvalue()
    assert "FAILED x=1, seed 1: TraceError: bad.csv: record 2" in out and "more" not in out
    assert "4/6" in out and "running 2" in out and "failed 1" in out and "ETA" in out


def test_sweep_progress_without_a_terminal_prints_only_failures():
    from types import SimpleNamespace

    from reclaimlab.progress import sweep_progress

    s = io.StringIO()
    job = SimpleNamespace(label="seed 3")
    with sweep_progress(s) as on_event:
        on_event("start", 2, 0, 2)
        on_event("submitted", job)
        on_event("failed", job, "SimulationError: boom")
    assert s.getvalue() == "FAILED seed 3: SimulationError: boom\n"
