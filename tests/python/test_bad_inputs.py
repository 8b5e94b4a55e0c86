"""The bad-input corpus (``tests/bad-inputs/cases.toml``), one table-driven test.

Every case is a malformed or impossible input (scenario file, trace, sweep file, command line)
run through the command line in a scratch copy of ``tests/bad-inputs/files/``. Each must exit
with its code (2), print its message (``FILE:LINE:COL`` first when the scenario file is at fault),
name the key, hint at the fix, print no traceback and no panic, and write nothing.
"""

from __future__ import annotations

import re
import shutil
import tomllib
from pathlib import Path

import pytest

from reclaimlab import cli

CORPUS = Path(__file__).resolve().parents[1] / "bad-inputs"
CASES = tomllib.loads((CORPUS / "cases.toml").read_text(encoding="utf-8"))["case"]


def tree(root: Path) -> dict[str, bytes | None]:
    return {
        str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None)
        for p in sorted(root.rglob("*"))
    }


def test_the_corpus_is_large_and_covers_every_kind():
    assert len(CASES) >= 50
    kinds = {c["id"].split("/")[0] for c in CASES}
    assert kinds == {"scenario", "trace", "sweep", "cli"}
    assert len({c["id"] for c in CASES}) == len(CASES), "case ids repeat"


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_bad_input(case, tmp_path, monkeypatch, capsys):
    work = tmp_path / "w"
    shutil.copytree(CORPUS / "files", work)
    work = work.resolve()
    before = tree(work)
    monkeypatch.chdir(work)
    try:
        code = cli.main(case["args"])
    except SystemExit as e:  # argparse
        code = e.code
    captured = capsys.readouterr()
    err = captured.err
    assert code == case["exit"], err
    message = case["message"].replace("{dir}", str(work))
    assert any(message in line for line in err.splitlines()), f"expected {message!r} in:\n{err}"
    if case.get("at"):
        file = case["args"][1]
        assert re.match(rf"{re.escape(file)}:\d+:\d+: error: ", err), err
    if "key" in case:
        assert f"`{case['key']}`" in err, err
    assert case["hint"] in err, err
    for bad in ("Traceback", "panicked", "RUST_BACKTRACE", "Error {", "os error"):
        assert bad not in err, err
    assert captured.out == "", captured.out
    # Nothing written: no output directory, no result, no temporary left behind.
    assert tree(work) == before
