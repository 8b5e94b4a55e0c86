"""The module structure: no import cycle between two Rust source files or between two top-level
modules, no core source file longer than 650 lines, nothing reaching up to a crate root, no
import cycle between Python modules and no package module longer than 500 lines. The parsers
behind it live in ``rust_structure.py`` and ``py_structure.py`` (also run by
``scripts/check-structure.py``) and are tested here on small trees written for the purpose,
and on the fixture ``data/structure_loop`` (which the checker must reject), so a pass on the
real crates means something."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import rust_structure as rs

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = Path(__file__).resolve().parent / "data" / "structure_loop"


def make_crate(root: Path, files: dict[str, str], crate: str = "demo") -> Path:
    for rel, text in files.items():
        path = root / "crates" / crate / "src" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def edges(s: rs.Structure) -> set[tuple[str, str, int, str]]:
    """(source, target, line, path) relative to src/, for exact comparisons."""
    def short(p: Path) -> str:
        return p.relative_to(s.root / "crates" / "demo" / "src").as_posix()

    return {(short(r.source), short(r.target), r.line, r.text) for r in s.refs}


# ---- the parser, on crates made for it ----------------------------------------------------------


def test_use_forms_resolve_to_the_longest_module_file(tmp_path):
    make_crate(tmp_path, {
        "lib.rs": "pub mod a;\npub mod b;\npub struct Root;\n",
        "a/mod.rs": """\
            pub mod x;
            pub mod y;
            use crate::b::{self, deep::{Thing, other::*}, Other as O};
            use super::Root;
            pub use self::x::X;
            fn f() -> crate::b::deep::Thing { $crate::b::g() }
            """,
        "a/x.rs": "use super::super::b::deep;\nuse super::y::{Y};\npub struct X;\n",
        "a/y.rs": "pub struct Y;\nuse std::collections::HashMap;\nuse ::core::fmt;\n",
        "b/mod.rs": "pub mod deep;\npub struct Other;\n",
        "b/deep.rs": "pub struct Thing;\n",
    })
    got = edges(rs.analyse(tmp_path))
    assert got == {
        ("a/mod.rs", "b/mod.rs", 3, "crate::b"),
        ("a/mod.rs", "b/deep.rs", 3, "crate::b::deep::Thing"),
        ("a/mod.rs", "b/deep.rs", 3, "crate::b::deep::other"),  # glob: the module itself
        ("a/mod.rs", "b/mod.rs", 3, "crate::b::Other"),
        ("a/mod.rs", "lib.rs", 4, "super::Root"),
        ("a/mod.rs", "a/x.rs", 5, "self::x::X"),
        ("a/mod.rs", "b/deep.rs", 6, "crate::b::deep::Thing"),
        ("a/mod.rs", "b/mod.rs", 6, "$crate::b::g"),
        ("a/x.rs", "b/deep.rs", 1, "super::super::b::deep"),
        ("a/x.rs", "a/y.rs", 2, "super::y::Y"),
    }


def test_comments_strings_tests_and_bin_are_left_out(tmp_path):
    make_crate(tmp_path, {
        "lib.rs": "pub mod a;\npub mod b;\n#[cfg(test)]\nmod tests;\n",
        "a.rs": """\
            //! See [`crate::b::B`] (a doc link, not a dependency).
            /* use crate::b::B; /* nested */ crate::b::B */
            const S: &str = "use crate::b::B;";
            const R: &str = r#"crate::b::B "quoted" "#;
            const C: char = '"';
            fn life<'a>(x: &'a str) -> &'a str { x }
            pub fn real() -> crate::b::B { todo!() }

            #[cfg(test)]
            #[allow(unused)]
            mod tests {
                use crate::b::B;
                fn nested() { let _ = { crate::b::B }; }
            }
            """,
        "b.rs": "pub struct B;\n",
        "tests.rs": "use crate::a::real;\n",  # declared #[cfg(test)] in lib.rs: test-only
        "bin/tool.rs": "use crate::a::real;\n",
    })
    s = rs.analyse(tmp_path)
    assert edges(s) == {("a.rs", "b.rs", 7, "crate::b::B")}
    assert sorted(f.name for f in s.files) == ["a.rs", "b.rs", "lib.rs"]


def test_a_tests_rs_that_is_not_a_test_module_counts(tmp_path):
    make_crate(tmp_path, {
        "lib.rs": "pub mod tests;\npub mod b;\n",
        "tests.rs": "use crate::b::B;\n",
        "b.rs": "pub struct B;\n",
    })
    assert edges(rs.analyse(tmp_path)) == {("tests.rs", "b.rs", 1, "crate::b::B")}


def test_super_inside_an_inline_module_is_the_file_itself(tmp_path):
    make_crate(tmp_path, {
        "lib.rs": "pub mod m;\n",
        "m/mod.rs": "pub mod f;\npub struct P;\n",
        "m/f.rs": "pub mod inner {\n    use super::super::P;\n    use super::Q;\n}\npub struct Q;\nuse super::P;\n",
    })
    # Inside `inner`, super is m::f (this file: no edge) and super::super is m (mod.rs).
    assert edges(rs.analyse(tmp_path)) == {
        ("m/f.rs", "m/mod.rs", 2, "super::super::P"),
        ("m/f.rs", "m/mod.rs", 6, "super::P"),
    }


def test_inline_super_self_and_child_paths_resolve(tmp_path):
    make_crate(tmp_path, {
        "lib.rs": "pub mod m;\npub mod n;\npub const V: u8 = 0;\n",
        "m/mod.rs": """\
            pub mod c;
            pub mod d;
            use c::C;
            pub struct M;
            fn f() -> d::D { c::make(); self::d::D }
            pub(in crate::m) fn g() {}
            """,
        "m/c.rs": """\
            pub struct C;
            pub fn make() -> super::d::D { let _ = crate::V; super::super::n::N }
            fn h(x: std::fmt::Error, c: C) -> super::M { todo!() }
            """,
        "m/d.rs": "pub struct D;\n",
        "n.rs": "pub struct N;\nfn k() -> <super::m::M as Copy>::Output { todo!() }\n",
    })
    s = rs.analyse(tmp_path)
    assert edges(s) == {
        ("m/mod.rs", "m/c.rs", 3, "c::C"),  # a parent's `use child::X`
        ("m/mod.rs", "m/d.rs", 5, "d::D"),  # inline child paths in a signature and a body
        ("m/mod.rs", "m/c.rs", 5, "c::make"),
        ("m/mod.rs", "m/d.rs", 5, "self::d::D"),
        ("m/c.rs", "m/d.rs", 2, "super::d::D"),
        ("m/c.rs", "lib.rs", 2, "crate::V"),
        ("m/c.rs", "n.rs", 2, "super::super::n::N"),
        ("m/c.rs", "m/mod.rs", 3, "super::M"),
        ("n.rs", "m/mod.rs", 2, "super::m::M"),
    }
    # Only references to a module the file is nested in are upward; `pub(in crate::m)` and
    # `std::fmt` are no references at all.
    upward = {(r.source.name, r.text) for r in s.refs if r.upward}
    assert upward == {("c.rs", "crate::V"), ("c.rs", "super::M")}
    assert [(r.source.name, r.text) for r in s.root_refs] == [("c.rs", "crate::V")]


def test_a_child_naming_its_parent_is_no_loop(tmp_path):
    # The parent uses a child's function and the child the parent's struct: Rust's nesting,
    # not a dependency loop. Two siblings naming each other are one.
    make_crate(tmp_path, {
        "lib.rs": "pub mod m;\n",
        "m/mod.rs": "mod a;\nmod b;\npub struct M;\npub fn f() { a::g() }\n",
        "m/a.rs": "use super::M;\npub fn g() { super::b::h() }\n",
        "m/b.rs": "pub fn h() {}\n",
    })
    assert not rs.analyse(tmp_path).file_cycles
    (tmp_path / "crates/demo/src/m/b.rs").write_text("pub fn h() { let _ = super::a::g; }\n")
    s = rs.analyse(tmp_path)
    assert [c.members for c in s.file_cycles] == [("crates/demo/src/m/a.rs",
                                                   "crates/demo/src/m/b.rs")]


def test_python_imports_resolve(tmp_path):
    pkg = tmp_path / "python" / "pkg"
    for rel, text in {
        "__init__.py": "from .a import A\n",
        "a.py": "import json\nimport pkg.sub.c\nfrom . import b\nfrom .sub import c as cc\n"
                "from pkg import __version__\nA = 1\n",
        "b.py": "def f():\n    from .sub.c import X\n    from ..other import Y\n",
        "sub/__init__.py": "from .c import X\n",
        "sub/c.py": "from .. import b\nfrom ..a import A\nX = 1\n",
    }.items():
        (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
        (pkg / rel).write_text(textwrap.dedent(text))
    s = rs.analyse(tmp_path)
    got = {(r.source.relative_to(pkg).as_posix(), r.target.relative_to(pkg).as_posix(), r.line,
            r.upward) for r in s.py_refs}
    assert got == {
        ("__init__.py", "a.py", 1, False),
        ("a.py", "sub/c.py", 2, False),
        ("a.py", "b.py", 3, False),
        ("a.py", "sub/c.py", 4, False),
        ("a.py", "__init__.py", 5, True),  # the package it is in
        ("b.py", "sub/c.py", 2, False),
        ("sub/__init__.py", "sub/c.py", 1, False),
        ("sub/c.py", "b.py", 1, False),
        ("sub/c.py", "a.py", 2, False),
    }
    # a -> sub/c -> a is a loop between files and, through pkg.sub, between modules.
    assert [c.members for c in s.py_file_cycles] == [
        ("python/pkg/a.py", "python/pkg/b.py", "python/pkg/sub/c.py")]
    assert [c.members for c in s.py_module_cycles] == [("pkg.a", "pkg.b", "pkg.sub")]


def test_the_checker_rejects_the_fixture():
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "check-structure.py"),
                        str(FIXTURE)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1, r.stdout + r.stderr
    out = r.stdout
    src = "crates/demo/src"
    assert (f"loop: {src}/a/x.rs -> {src}/a/y/mod.rs -> {src}/a/y/z.rs -> {src}/a/x.rs"
            in out), out
    assert f"({src}/a/y/mod.rs:2: z::make)" in out, out
    assert "loop: demo::a -> demo::b -> demo::a" in out, out
    assert f"({src}/a/mod.rs:4: super::b::B)" in out, out
    assert f"References up to a crate root (lib.rs): 1\n  {src}/a/x.rs:4: crate::VERSION" in out
    assert "loop: python/demo/one.py -> python/demo/two.py -> python/demo/one.py" in out, out
    assert "loop: demo.one -> demo.two -> demo.one" in out, out


def test_cycles_between_files_and_modules_are_reported(tmp_path):
    make_crate(tmp_path, {
        "lib.rs": "pub mod a;\npub mod b;\npub mod c;\n",
        "a/mod.rs": "pub mod one;\npub mod two;\npub struct A;\n",
        "a/one.rs": "use super::two::T;\npub struct O;\n",
        "a/two.rs": "use crate::a::one::O;\npub struct T;\nuse crate::b::B;\n",
        "b.rs": "pub struct B;\nfn f() { let _ = crate::c::C; }\n",
        # c -> a/mod.rs closes a loop of modules (a -> b -> c -> a) but not of files.
        "c.rs": "pub struct C;\nuse crate::a::A;\n",
    })
    s = rs.analyse(tmp_path)
    one, two = "crates/demo/src/a/one.rs", "crates/demo/src/a/two.rs"
    assert [c.members for c in s.file_cycles] == [(one, two)]
    assert s.file_cycles[0].loop == (one, two, one)
    assert [r.line for r in s.file_cycles[0].evidence] == [1, 1]
    # b -> c -> a -> b across three top-level modules; a's inner cycle is not a module cycle.
    assert [c.members for c in s.module_cycles] == [("demo::a", "demo::b", "demo::c")]
    assert s.module_cycles[0].loop == ("demo::a", "demo::b", "demo::c", "demo::a")
    text = rs.report(s)
    assert "Cycles between files: 1" in text and f"loop: {one} -> {two} -> {one}" in text
    assert f"{two}:3: crate::b::B" in text  # the reference behind a -> b, with its line
    assert "Cycles between top-level modules: 1" in text


def test_an_acyclic_crate_has_no_cycles(tmp_path):
    make_crate(tmp_path, {
        "lib.rs": "pub mod a;\npub mod b;\npub use a::A;\n",
        "a.rs": "use crate::b::B;\npub struct A(B);\n",
        "b.rs": "pub struct B;\n",
    })
    s = rs.analyse(tmp_path)
    assert s.refs and not s.file_cycles and not s.module_cycles
    assert "Cycles between files: none" in rs.report(s)


def test_long_files_only_in_the_core_crate(tmp_path):
    long = "// x\n" * (rs.MAX_LINES + 1)
    make_crate(tmp_path, {"lib.rs": "", "big.rs": long, "ok.rs": "// x\n" * rs.MAX_LINES,
                          "bin/huge.rs": long}, crate="reclaimlab-core")
    make_crate(tmp_path, {"lib.rs": long}, crate="reclaimlab-py")
    s = rs.analyse(tmp_path)
    assert [(f.name, n) for f, n in s.long_files] == [("big.rs", rs.MAX_LINES + 1)]
    assert f"crates/reclaimlab-core/src/big.rs: {rs.MAX_LINES + 1} lines" in rs.report(s)


def test_long_python_modules_are_reported(tmp_path):
    pkg = tmp_path / "python" / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "big.py").write_text("x = 1\n" * (rs.MAX_PY_LINES + 1))
    (pkg / "ok.py").write_text("x = 1\n" * rs.MAX_PY_LINES)
    s = rs.analyse(tmp_path)
    assert [(f.name, n) for f, n in s.py_long_files] == [("big.py", rs.MAX_PY_LINES + 1)]
    assert s.failed()
    assert f"python/pkg/big.py: {rs.MAX_PY_LINES + 1} lines" in rs.report(s)


# ---- the real crates ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def crates() -> rs.Structure:
    return rs.analyse(ROOT)


def test_the_real_crates_are_parsed(crates):
    # Guards the checks below against passing on nothing (a moved directory, a parser bug).
    names = {f.relative_to(ROOT).as_posix() for f in crates.files}
    assert "crates/reclaimlab-core/src/lib.rs" in names
    assert "crates/reclaimlab-py/src/lib.rs" in names
    assert not any("/src/bin/" in n for n in names)
    assert len(crates.refs) > 100
    pys = {f.relative_to(ROOT).as_posix() for f in crates.py_files}
    assert "python/reclaimlab/cli.py" in pys and len(crates.py_refs) > 100


# pytest.fail without a traceback: the report is the message, not the Structure's repr.


def test_no_cycle_between_files(crates):
    if crates.file_cycles:
        pytest.fail(rs.format_cycles("Cycles between files", crates.file_cycles, crates.root,
                                     crates.refs, crates.file_key), pytrace=False)


def test_no_cycle_between_top_level_modules(crates):
    if crates.module_cycles:
        pytest.fail(rs.format_cycles("Cycles between top-level modules", crates.module_cycles,
                                     crates.root, crates.refs, crates.module_key), pytrace=False)


def test_no_core_file_longer_than_the_limit(crates):
    if crates.long_files:
        pytest.fail(rs.format_long_files(crates.long_files, crates.root), pytrace=False)


def test_no_python_module_longer_than_the_limit(crates):
    if crates.py_long_files:
        pytest.fail(rs.format_long_files(crates.py_long_files, crates.root,
                                         f"Python modules longer than {rs.MAX_PY_LINES} lines"),
                    pytrace=False)


def test_nothing_reaches_up_to_a_crate_root(crates):
    if crates.root_refs:
        pytest.fail(rs.format_root_refs(crates.root_refs, crates.root), pytrace=False)


def test_no_cycle_between_python_modules(crates):
    if crates.py_file_cycles or crates.py_module_cycles:
        pytest.fail(rs.format_cycles("Cycles between Python modules", crates.py_file_cycles,
                                     crates.root, crates.py_refs, crates.file_key)
                    + rs.format_cycles("Cycles between top-level Python modules",
                                       crates.py_module_cycles, crates.root, crates.py_refs,
                                       rs.py_module_key(crates)), pytrace=False)
