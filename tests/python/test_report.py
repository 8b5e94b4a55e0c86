"""``reclaimlab report`` on a real sweep: the HTML file renders every chart in headless
Chromium without errors, needs no network, escapes what the user wrote, and comes with SVG and
PNG figures."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from browser import render, screenshot
from conftest import run_cli, tiny_text

from reclaimlab import report

HOSTILE = '</script><script>alert("x")</script>&<b>'


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("report")
    (d / "tiny.toml").write_text(tiny_text(name="tiny"))
    # A hostile scenario name as an axis value: it shows up in labels, tables and chart data.
    (d / "s.toml").write_text(
        'scenario = "tiny.toml"\nseeds = 2\n[axes]\n'
        f'"policy.kswapd_balance" = ["v2.6.36", "v6.1"]\n"name" = [{json.dumps(HOSTILE)}, "plain"]\n'
    )
    r = run_cli("sweep", str(d / "s.toml"), "--out", str(d / "out"))
    assert r.returncode == 0, r.stderr
    return d


def test_report_renders_every_chart_in_chromium(sweep_dir, tmp_path):
    html_path = sweep_dir / "report.html"
    r = run_cli("report", str(sweep_dir / "out"), "-o", str(html_path))
    assert r.returncode == 0, r.stderr
    n = int(re.search(r"\((\d+) charts\)", r.stdout).group(1))
    text = html_path.read_text()
    # 10 counters' bars, the workload thread's accesses and the two stall totals (PSI) + 2 axes
    # x (4 counters and the 2 stall totals) lines + 4 heatmaps + 4 time-series charts per point
    # (free pages, scan, swap, pressure; no cgroup in these runs).
    assert n == 10 + 1 + 2 + 2 * (4 + 2) + 4 + 4 * 4, r.stdout
    assert text.count('class="chart"') == n
    # Self-contained: no script, style or image is fetched from anywhere.
    # All but the inlined bundle (which cannot hold "</script": the report escapes it).
    start = text.index('<script type="text/javascript" id="vega-bundle">')
    page_text = text[:start] + text[text.index("</script>", start):]
    assert not re.search(r'<(script|link|img)[^>]+(src|href)=', page_text)
    assert "https://" not in page_text and "http://" not in page_text
    # The user's string never appears raw: escaped in the page, \u003c-escaped in chart data.
    assert HOSTILE not in text and "<script>alert" not in text
    assert report.esc(HOSTILE) in text

    page = render(html_path)
    assert page.errors == [], page.errors
    assert page.charts_rendered == str(n), page.charts_rendered
    assert len(page.drawn) == n, sorted(set(f"chart-{i}" for i in range(n)) - set(page.drawn))
    # The hostile name is text on the page (and in the charts' labels), not markup.
    assert "<script>alert" not in page.dom.split("data-charts-rendered", 1)[1]
    shot = screenshot(html_path, tmp_path / "report.png")
    assert shot.stat().st_size > 50_000  # a page of charts, not a blank one

    figures = sorted((sweep_dir / "report-figures").iterdir())
    assert len(figures) == 2 * n
    svg = next(f for f in figures if f.suffix == ".svg")
    assert svg.read_text().lstrip().startswith("<svg") and "mark-" in svg.read_text()
    png = next(f for f in figures if f.suffix == ".png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_interval95_is_students_t():
    from scipy import stats

    xs = [10.0, 12.0, 11.0, 15.0]
    m, lo, hi = report.interval95(xs)
    want = stats.t.interval(0.95, len(xs) - 1, loc=sum(xs) / 4, scale=stats.sem(xs))
    assert m == pytest.approx(12.0) and (lo, hi) == pytest.approx(want)
    assert report.interval95([5.0]) == (5.0, 5.0, 5.0)
    assert report.interval95([3.0, 3.0]) == (3.0, 3.0, 3.0)


def test_report_of_a_directory_that_is_neither_is_a_clear_error(tmp_path):
    r = run_cli("report", str(tmp_path))
    assert r.returncode == 2
    assert r.stderr.strip().startswith(f"error: {tmp_path}: neither a sweep directory")
    assert "Traceback" not in r.stderr


class _Spec:
    """Stands for an altair chart: only to_dict() is used (the page asks for no schema
    validation, so that a chart vega-embed cannot draw reaches the browser)."""

    def __init__(self, spec):
        self.spec = spec

    def to_dict(self, validate=True):
        return dict(self.spec)


def test_the_browser_check_catches_a_chart_that_fails(tmp_path):
    """The checks above can fail: a spec vega-embed rejects is reported, and not counted."""
    page = report.Page("broken")
    page.chart("good", _Spec({"data": {"values": [{"x": 1, "y": 2}]}, "mark": "point",
                              "encoding": {"x": {"field": "x", "type": "quantitative"}}}))
    page.chart("bad", _Spec({"data": {"values": []}, "mark": "no-such-mark"}))
    path = tmp_path / "broken.html"
    page.write(path, figures=False)
    got = render(path)
    assert got.drawn == ["chart-0"]
    assert got.charts_rendered == "1"
    assert len(got.errors) == 1 and got.errors[0].startswith("chart 1: ")


def test_a_runs_report_draws_its_pressure_and_cgroups_in_chromium(tmp_path):
    """A run directory (what `reclaimlab run` writes) has a page of its own; with the PSI and
    cgroup columns in its time series (added here to a real run's, as a run with [[cgroup]]
    writes them) it draws the pressure and the cgroups' memory, and Chromium renders them."""
    import pandas as pd

    (tmp_path / "tiny.toml").write_text(tiny_text(name="tiny"))
    out = tmp_path / "run"
    r = run_cli("run", str(tmp_path / "tiny.toml"), "--out", str(out))
    assert r.returncode == 0, r.stderr
    plain = report.page_for(out)
    base = len(plain.charts)
    # Every run has its pressure; only a run with cgroups has their chart.
    assert base >= 4 and any(s.endswith("pressure") for s, _ in plain.charts)
    assert not any("cgroups" in s for s, _ in plain.charts)
    ts = pd.read_parquet(out / "timeseries.parquet")
    n = len(ts)
    ts["psi_memory_some_total_us"] = [1000 * i * i for i in range(n)]
    ts["psi_memory_full_total_us"] = [500 * i * i for i in range(n)]
    ts["cgroup/pod.a/memory.current"] = [4096 * i for i in range(n)]
    ts["cgroup/pod.a/memory.swap.current"] = [0] * n
    ts["cgroup/pod-b/memory.current"] = [8192 * i for i in range(n)]
    ts.to_parquet(out / "timeseries.parquet")
    summary = json.loads((out / "summary.json").read_text())
    summary["cgroups"] = {"pod.a": {"parent": "", "memory.current": 1 << 20,
                                    "memory.peak": 3 << 20, "memory.events": {"max": 7}}}
    (out / "summary.json").write_text(json.dumps(summary))
    html_path = tmp_path / "run.html"
    r = run_cli("report", str(out), "-o", str(html_path))
    assert r.returncode == 0, r.stderr
    n_charts = int(re.search(r"\((\d+) charts\)", r.stdout).group(1))
    assert n_charts == base + 1
    text = html_path.read_text()
    assert "Memory cgroups at the end" in text and "pod.a" in text
    page = render(html_path)
    assert page.errors == [], page.errors
    assert page.charts_rendered == str(n_charts)
    # The cgroups' chart has every cgroup (a dot in a name is data, not a nested field).
    spec = next(s for slug, s in report.page_for(out).charts if slug.endswith("cgroups"))
    names = {row["cgroup"] for ds in spec["datasets"].values() for row in ds}
    assert names == {"pod.a", "pod-b"}


def test_a_cgroup_runs_report_has_each_cgroups_pressure(tmp_path):
    """A real run with two cgroups, one squeezed by its memory.max: its page tables each
    cgroup's memory.pressure and plots each one's stall share over time; the squeezed one
    stalls, the idle one does not, and Chromium renders the page."""
    (tmp_path / "two.toml").write_text(
        'name = "two"\n[host]\nram = "512MiB"\ncpus = 2\n[swap]\nsize = "512MiB"\n'
        '[[cgroup]]\nname = "tight"\nmemory.max = "32M"\n[[cgroup]]\nname = "idle"\n'
        '[[workload]]\nname = "hog"\ncgroup = "tight"\nanon = { size = "48MiB", passes = 2 }\n'
        '[[workload]]\nname = "quiet"\ncgroup = "idle"\nanon = { size = "4MiB", hold = "1s" }\n')
    out = tmp_path / "run"
    r = run_cli("run", str(tmp_path / "two.toml"), "--out", str(out))
    assert r.returncode == 0, r.stderr
    summary = json.loads((out / "summary.json").read_text())
    stalled = {n: cg["memory.pressure"]["some"]["total_us"]
               for n, cg in summary["cgroups"].items()}
    assert stalled["tight"] > 0 and stalled["idle"] == 0, stalled
    assert (out / "cgroup" / "tight" / "memory.pressure").read_text().startswith("some avg10=")
    page = report.page_for(out)
    spec = next(s for slug, s in page.charts if slug.endswith("cgroup-pressure"))
    rows = [row for ds in spec["datasets"].values() for row in ds]
    assert {row["cgroup"] for row in rows} == {"tight", "idle"}
    assert max(row["percent"] for row in rows if row["cgroup"] == "tight") > 0
    assert all(row["percent"] == 0 for row in rows if row["cgroup"] == "idle")
    html_path = tmp_path / "two.html"
    r = run_cli("report", str(out), "-o", str(html_path))
    assert r.returncode == 0, r.stderr
    text = html_path.read_text()
    assert "Memory pressure of each cgroup" in text
    rendered = render(html_path)
    assert rendered.errors == [], rendered.errors
    assert rendered.charts_rendered == str(len(page.charts))
