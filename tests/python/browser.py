"""Open an HTML file in Debian's headless Chromium (installed by scripts/fetch-chromium.sh):
the DOM after its scripts ran, and a screenshot."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

# Scripts run in virtual time: Chromium fast-forwards timers, so rendering finishes well within it.
BUDGET_MS = "60000"


def chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    assert exe, "chromium is missing: run bash scripts/fetch-chromium.sh (apt-get install chromium)"
    return exe


def _run(*args: str) -> subprocess.CompletedProcess:
    cmd = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
           "--disable-extensions", f"--virtual-time-budget={BUDGET_MS}", *args]
    return subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180)


@dataclass
class Rendered:
    dom: str
    #: data-charts-rendered of <body>: how many charts vega-embed drew ("pending" if unfinished)
    charts_rendered: str
    #: what the page recorded on window.onerror and console.error
    errors: list[str]
    #: ids of chart containers with data-rendered="1" and an <svg> inside
    drawn: list[str]


def render(path: Path) -> Rendered:
    r = _run("--dump-dom", path.resolve().as_uri())
    assert r.returncode == 0, r.stderr[-2000:]
    dom = r.stdout
    # (the inlined JavaScript has "<body>" in its strings: find the page's own body tag)
    body = re.search(r"<body([^>]*data-charts-rendered[^>]*)>", dom)
    assert body, dom[:2000]
    attrs = dict(re.findall(r'([\w-]+)="([^"]*)"', body.group(1)))
    errors = json.loads(attrs.get("data-errors", "[]").replace("&quot;", '"'))
    drawn = []
    starts = [(m.start(), m.group(1), m.group(2))
              for m in re.finditer(r'<div class="chart[^"]*" id="(chart-\d+)"([^>]*)>', dom)]
    for i, (at, cid, tag) in enumerate(starts):
        part = dom[at: starts[i + 1][0] if i + 1 < len(starts) else len(dom)]
        # vega-embed draws an <svg> with one group per mark ("mark-line", "mark-rect"...).
        if 'data-rendered="1"' in tag and "<svg" in part and 'class="mark-' in part:
            drawn.append(cid)
    return Rendered(dom, attrs.get("data-charts-rendered", ""), errors, drawn)


def screenshot(path: Path, png: Path, size: str = "1300,2400") -> Path:
    r = _run(f"--window-size={size}", f"--screenshot={png.resolve()}", path.resolve().as_uri())
    assert r.returncode == 0 and png.is_file(), r.stderr[-2000:]
    return png
