"""The Rust crates' module structure: no import cycle between two source files or between two
top-level modules, and no core source file longer than 650 lines. The parser behind it lives in
``rust_structure.py`` (also run by ``scripts/check-structure.py``) and is tested here on small
crates written for the purpose, so a pass on the real crates means something."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

import rust_structure as rs

ROOT = Path(__file__).resolve().parents[2]


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
