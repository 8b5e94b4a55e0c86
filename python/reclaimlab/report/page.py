"""The page a report is assembled on: HTML blocks, the checks table, inline figures and
altair charts, written as one self-contained HTML file (the charts drawn by vega-embed, inlined
from vl-convert's bundle) and, unless asked not to, each chart as SVG and PNG beside it.

Every string that comes from the user is HTML-escaped; chart specifications are JSON inside
``<script>`` with ``<`` escaped, so no value can close the script element. The page records its
own rendering (``data-rendered`` per chart, ``data-charts-rendered`` and ``data-errors`` on the
body), which the tests read from headless Chromium."""

from __future__ import annotations

import functools
import html
import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..results import write_text_atomic


class ReportError(Exception):
    """The directory holds nothing a report can be made of."""


# ---- building blocks --------------------------------------------------------------------------


@dataclass
class Page:
    """A report being assembled: HTML blocks and the charts they embed."""

    title: str
    blocks: list[str] = field(default_factory=list)
    charts: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # (slug, spec)
    #: Where the figures go and who draws them, from :meth:`start_figures` on.
    _figures: tuple[Path, Any] | None = field(default=None, repr=False)

    def h(self, level: int, text: str) -> None:
        self.blocks.append(f"<h{level}>{esc(text)}</h{level}>")

    def p(self, text: str, cls: str = "") -> None:
        attr = f' class="{cls}"' if cls else ""
        self.blocks.append(f"<p{attr}>{esc(text)}</p>")

    def pre(self, text: str) -> None:
        self.blocks.append(f"<pre>{esc(text)}</pre>")

    def table(self, headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        head = "".join(f"<th>{esc(h)}</th>" for h in headers)
        body = "".join(
            "<tr>" + "".join(f"<td>{esc(_cell(c))}</td>" for c in r) + "</tr>" for r in rows
        )
        self.blocks.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")

    def checks(self, checks: Sequence[Mapping[str, Any]]) -> None:
        """A situation's checks: the verdict line of each, then (when any check has a figure,
        a band or a sweep) a table of verdict, measured, figure, ratio, band, role, holds."""
        items = "".join(
            f'<li class="{"pass" if c["passed"] else "fail"}"><b>{"PASS" if c["passed"] else "FAIL"}</b> '
            f'{esc(c["claim"])} <span class="detail">({esc(c["detail"])})</span></li>'
            for c in checks
        )
        self.blocks.append(f'<ul class="checks">{items}</ul>')
        if any(c.get("band") is not None or c.get("holds") is not None or c.get("figure") is not None
               for c in checks):
            self.table(["check", "verdict", "measured", "figure", "ratio", "band", "role", "holds"],
                       [_check_row(c) for c in checks])

    def svg(self, text: str, caption: str = "") -> None:
        """A figure drawn elsewhere (matplotlib), inlined so the page stays self-contained:
        its XML prologue and namespace declarations dropped (HTML places an inline <svg> in the
        SVG namespace), scripts refused."""
        start = text.find("<svg")
        body = text[start:] if start >= 0 else ""
        if not body or re.search(r"<\s*script", body, re.I):
            self.p(f"(figure not shown: {caption or 'not an SVG file'})", "note")
            return
        body = re.sub(r'\s+xmlns(:xlink)?="[^"]*"', "", body, count=2)
        cap = f"<figcaption>{esc(caption)}</figcaption>" if caption else ""
        self.blocks.append(f'<figure class="sensitivity">{body}{cap}</figure>')

    def chart(self, slug: str, chart: Any) -> None:
        """Add an altair chart (or None: nothing to draw)."""
        if chart is None:
            return
        # Not validated against the Vega-Lite schema here: that took a third of a report's
        # time, for charts the project's own code draws. The tests render the sweep, the
        # reproduction and the validation reports in Chromium, where vega-embed fails on a
        # spec it cannot draw (tests/python/test_report.py and its siblings).
        spec = chart.to_dict(validate=False)
        # A URL naming the schema version: never fetched, but a page with no URLs in it is
        # easier to check for self-containment (the mode is given to vega-embed instead).
        spec.pop("$schema", None)
        n = len(self.charts)
        name = f"{n:02d}-{_slug(slug)}"
        self.charts.append((name, spec))
        self.blocks.append(f'<div class="chart" id="chart-{n}" data-rendered="0"></div>')
        if self._figures is not None:
            fig_dir, drawer = self._figures
            drawer.add((spec, fig_dir / f"{name}.svg", fig_dir / f"{name}.png"))

    def row_start(self) -> None:
        self.blocks.append('<div class="row">')

    def row_end(self) -> None:
        self.blocks.append("</div>")

    def html(self) -> str:
        specs = [spec for _, spec in self.charts]
        script = (
            "const specs = " + _script_json(specs) + ";\n" + _RENDER_SCRIPT
        )
        return _TEMPLATE.format(
            title=esc(self.title),
            style=_STYLE,
            errors=_ERRORS_SCRIPT,
            bundle=_vega_bundle(),
            body="\n".join(self.blocks),
            script=script,
        )

    def start_figures(self, path: str | os.PathLike) -> None:
        """Draw the figures of the HTML file ``path`` (see :meth:`write`) from now on, each
        chart as it is added: a helper process draws them while the page is still being
        built. :meth:`write` to the same path then waits for them."""
        fig_dir = _figure_dir(Path(path))
        fig_dir.mkdir(parents=True, exist_ok=True)
        for old in fig_dir.glob("*"):
            if old.suffix in (".svg", ".png"):
                old.unlink()
        # Imported here: the module also runs as the drawing helper (python -m), which must
        # not find it imported by the package already.
        from .figures import Drawer

        drawer = Drawer()
        for slug, spec in self.charts:
            drawer.add((spec, fig_dir / f"{slug}.svg", fig_dir / f"{slug}.png"))
        self._figures = (fig_dir, drawer)

    def write(self, path: str | os.PathLike, *, figures: bool = True) -> list[Path]:
        """Write the HTML file, and unless ``figures`` is False each chart as SVG and PNG in
        ``<name>-figures/`` beside it; returns the figure files."""
        path = Path(path)
        started, self._figures = self._figures, None
        try:
            write_text_atomic(path, self.html())
        except BaseException:
            if started is not None:
                started[1].close()
            raise
        if started is not None and (not figures or started[0] != _figure_dir(path)):
            started[1].close()
            started = None
        if not figures:
            return []
        if started is None:
            self.start_figures(path)
            started, self._figures = self._figures, None
        fig_dir, drawer = started
        drawer.finish()
        return [fig_dir / f"{slug}{ext}" for slug, _ in self.charts for ext in (".svg", ".png")]


def _figure_dir(path: Path) -> Path:
    """Where the figures of the HTML file ``path`` go: ``<name>-figures/`` beside it."""
    return path.with_name(path.stem + "-figures")


@functools.cache
def _vega_bundle() -> str:
    """vl-convert's JavaScript bundle (vega-embed, Vega-Lite, Vega) with every "</script"
    escaped. vl-convert takes about 2 s to build it, the same bytes for one version of
    vl-convert, so it is built once per process and kept in the user's cache directory
    (``$XDG_CACHE_HOME/reclaimlab``, else ``~/.cache/reclaimlab``) under that version; a
    cache that cannot be read or written is rebuilt, never an error."""
    from importlib.metadata import version

    import vl_convert as vlc

    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    cache = base / "reclaimlab" / f"vega-bundle-{version('vl-convert-python')}.js"
    try:
        text = cache.read_text()
        if text:
            return text
    except OSError:
        pass
    text = vlc.javascript_bundle().replace("</script", "<\\/script")
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(cache, text)
    except OSError:
        pass
    return text


def _check_row(c: Mapping[str, Any]) -> list[Any]:
    """One check as a row of the checks table (blank where a check has no such field)."""
    band, holds = c.get("band"), c.get("holds")
    ratio = c.get("ratio")
    return [c.get("id") or c["claim"], "PASS" if c["passed"] else "FAIL",
            _short(c.get("measured")), c.get("figure"),
            c.get("zero") if ratio is None and c.get("zero") else ratio,
            "" if band is None else f"[{_cell(band[0])}, {_cell(band[1])}]",
            c.get("role", ""),
            "" if holds is None else f"holds at {holds['n']} of {holds['of']} points"]


def _short(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return ", ".join(_cell(v) for v in value)
    return value


def esc(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, float):
        return f"{value:,.1f}" if abs(value) >= 100 else f"{value:.4g}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()[:60] or "chart"


def _script_json(data: Any) -> str:
    """JSON safe inside <script>: nothing in it can end the element or open a comment."""
    text = json.dumps(data, allow_nan=False, default=_json_default)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026") \
        .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _json_default(value: Any) -> Any:
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    return str(value)


_STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 1200px; color: #222; }
h1 { font-size: 1.6em; } h2 { margin-top: 2em; border-bottom: 1px solid #ccc; }
h3 { margin-top: 1.5em; } .row { display: flex; flex-wrap: wrap; gap: 1em; }
.chart { min-height: 60px; } table { border-collapse: collapse; font-size: 0.85em; }
td, th { border: 1px solid #ccc; padding: 2px 6px; text-align: right; }
td:first-child { text-align: left; }
th { background: #f3f3f3; } pre { background: #f7f7f7; padding: 0.5em; overflow-x: auto; font-size: 0.8em; }
.checks { list-style: none; padding-left: 0; } .pass b { color: #17803d; } .fail b { color: #c0392b; }
.detail { color: #666; } .note { color: #555; font-size: 0.9em; }
figure.sensitivity svg { max-width: 100%; height: auto; }
"""

# Renders every chart as SVG and records the outcome on the page itself.
# Installed first in <head>, before the bundle, so that an error anywhere is recorded.
_ERRORS_SCRIPT = """
window.reportErrors = [];
window.addEventListener('error', (e) => window.reportErrors.push(String(e.message)));
const origError = console.error;
console.error = (...a) => { window.reportErrors.push(a.map(String).join(' ')); origError(...a); };
"""

_RENDER_SCRIPT = """
const errors = window.reportErrors;
let rendered = 0;
Promise.all(specs.map((spec, i) =>
  vegaEmbed('#chart-' + i, spec, {mode: 'vega-lite', renderer: 'svg', actions: false})
    .then(() => { document.getElementById('chart-' + i).dataset.rendered = '1'; rendered++; })
    .catch((e) => errors.push('chart ' + i + ': ' + e))
)).finally(() => {
  document.body.dataset.chartsRendered = String(rendered);
  document.body.dataset.errors = JSON.stringify(errors);
});
"""

_TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}</title>
<style>{style}</style>
<script type="text/javascript">
{errors}
</script>
<script type="text/javascript" id="vega-bundle">
{bundle}
</script>
</head>
<body data-charts-rendered="pending" data-errors="[]">
{body}
<script type="text/javascript">
{script}
</script>
</body>
</html>
"""
