"""A report's figure files: drawn with the helper process, they are byte for byte those drawn
in one process, and a chart nobody can draw fails the report as it does without the helper."""

from __future__ import annotations

import pytest

from reclaimlab.report import figures


def _spec(i: int) -> dict:
    return {
        "data": {"values": [{"x": k, "y": (k * (i + 3)) % 17} for k in range(40)]},
        "mark": "line" if i % 2 else "bar",
        "encoding": {"x": {"field": "x", "type": "quantitative"},
                     "y": {"field": "y", "type": "quantitative"}},
        "title": f"chart {i}",
    }


def _jobs(d, n: int):
    d.mkdir()
    return [(_spec(i), d / f"{i:02d}.svg", d / f"{i:02d}.png") for i in range(n)]


def test_helper_draws_the_same_files(tmp_path, monkeypatch):
    n = figures.HELPER_MIN_CHARTS + 4
    shared = _jobs(tmp_path / "shared", n)
    drawn_here = []
    real = figures.draw
    monkeypatch.setattr(figures, "draw", lambda job: (drawn_here.append(job[1].name), real(job)))
    figures.draw_all(shared)
    # The helper drew some of them (this process not all), and every file is there.
    assert 0 < len(drawn_here) < n
    monkeypatch.setattr(figures, "draw", real)
    alone = _jobs(tmp_path / "alone", n)
    for job in alone:
        figures.draw(job)
    for (_, svg_a, png_a), (_, svg_b, png_b) in zip(shared, alone):
        assert svg_a.read_bytes() == svg_b.read_bytes()
        assert png_a.read_bytes() == png_b.read_bytes()
        assert png_a.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_chart_that_cannot_be_drawn_fails_the_report(tmp_path):
    jobs = _jobs(tmp_path / "bad", figures.HELPER_MIN_CHARTS + 2)
    bad = {"data": {"values": [{"x": 1}]}, "mark": "line",
           "encoding": {"x": {"field": "x", "type": "nope"}}}
    # The last chart broken: whichever process is handed it (the helper's failure makes this
    # process draw it again), its error reaches the caller.
    jobs[-1] = (bad, *jobs[-1][1:])
    with pytest.raises(ValueError, match="Invalid field type"):
        figures.draw_all(jobs)
    # Every other chart was drawn.
    assert all(svg.is_file() and png.is_file() for _, svg, png in jobs[:-1])


class _Chart:
    """Stands for an altair chart: the page only asks for its specification."""

    def __init__(self, spec):
        self.spec = spec

    def to_dict(self, validate=True):
        return dict(self.spec)


def test_figures_drawn_while_the_page_is_built_are_those_drawn_after(tmp_path, monkeypatch):
    """A page that starts its figures before its charts are added (the helper draws them as
    they come) writes the same files as one that draws them all at the end."""
    from reclaimlab.report import Page

    n = figures.HELPER_MIN_CHARTS + 3
    helped = []
    real_start = figures.Drawer._start
    monkeypatch.setattr(figures.Drawer, "_start",
                        lambda self: (helped.append(len(self.jobs)), real_start(self)))
    # An earlier report's figure is removed when the figures start.
    stale = tmp_path / "a" / "report-figures" / "99-stale.svg"
    stale.parent.mkdir(parents=True)
    stale.write_text("<svg/>")
    streamed = Page("streamed")
    streamed.start_figures(tmp_path / "a" / "report.html")
    assert not stale.exists()
    (tmp_path / "b").mkdir()
    plain = Page("plain")
    for i in range(n):
        streamed.chart(f"chart {i}", _Chart(_spec(i)))
        plain.chart(f"chart {i}", _Chart(_spec(i)))
    # The helper started while the page was being built, once enough charts were waiting.
    assert helped == [figures.HELPER_MIN_CHARTS]
    got = streamed.write(tmp_path / "a" / "report.html")
    want = plain.write(tmp_path / "b" / "report.html")
    assert [p.name for p in got] == [p.name for p in want] and len(got) == 2 * n
    for a, b in zip(got, want):
        assert a.read_bytes() == b.read_bytes()
    assert (tmp_path / "a" / "report.html").read_text().replace("streamed", "plain") == \
        (tmp_path / "b" / "report.html").read_text()
