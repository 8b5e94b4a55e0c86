"""The module structure of the Rust crates: which source file refers to which, import cycles,
file length, and references up to a crate root. Used by ``test_structure.py`` and, for people,
``scripts/check-structure.py`` (which adds the Python packages, see ``py_structure.py``).

What counts as a reference from one file to another:

* ``use crate::...``, ``use super::...``, ``use self::...`` and a module's ``use child::...``
  of one of its own child modules (also ``pub use``), with nested ``{...}`` groups, ``self``
  inside a group, globs and ``as`` renames;
* an inline path anywhere in code, in a signature or an expression: ``crate::a::b``
  (``$crate::`` in macros too), ``super::x::Y``, ``self::x::Y``, and ``child::f`` when
  ``child`` is a child module of the file's module (``pub(in crate::a)`` is not a path).

Each is resolved to the file of the longest module prefix of its path that is a file
(``a/b.rs`` or ``a/b/mod.rs`` is module ``a::b``; ``lib.rs`` is the crate root), so
``crate::mm::zone::Zone`` is a reference to ``mm/zone.rs``. ``super`` and ``self`` are taken
relative to the module the path is in, inline ``mod name { ... }`` blocks included.

A reference to a module the file is nested in (``use super::Machine`` from a child of
``machine/mod.rs``) is kept but marked ``upward`` and is not an edge of the import graph: that is
how Rust nesting reads, and the parent naming its children is the other direction. A reference
up to a crate root (``lib.rs``) is reported on its own (``root_refs``).

Left out, because they are not part of the crate's structure: comments (doc links included),
string and char literals, ``#[cfg(test)] mod NAME { ... }`` blocks, files named ``tests.rs``
that their parent declares as ``#[cfg(test)] mod tests;``, and ``src/bin/``.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

#: No source file of the core crate may be longer than this (whole file, its inline tests
#: included: tests that make a file long belong in a ``tests.rs`` beside it).
MAX_LINES = 650
#: The longest module of a Python package under ``python/`` (issue 33: a module of 500 lines
#: or more held several concerns each time; split by concern instead).
MAX_PY_LINES = 500
#: The crate whose files the length limit applies to, relative to the repository root.
LENGTH_CHECKED = "crates/reclaimlab-core/src"


@dataclass(frozen=True)
class Ref:
    """One reference from a source file to another: where it is and what it says."""

    source: Path
    target: Path
    line: int
    text: str  # the path as written, e.g. "crate::mm::zone::Zone"
    #: The target is a module the source is nested in (``super::Machine`` from a child of
    #: ``machine/mod.rs``, ``crate::X`` of the crate root): not an edge of the import graph.
    upward: bool = False


@dataclass(frozen=True)
class Cycle:
    """A strongly connected component of more than one node, with one concrete loop through it.

    ``loop`` is ``[n0, n1, ..., n0]``; ``evidence[i]`` is a reference behind ``loop[i] ->
    loop[i+1]``."""

    members: tuple[str, ...]
    loop: tuple[str, ...]
    evidence: tuple[Ref, ...]


@dataclass
class Structure:
    """What :func:`analyse` found under a repository's ``crates/``."""

    root: Path
    files: list[Path] = field(default_factory=list)
    refs: list[Ref] = field(default_factory=list)
    file_cycles: list[Cycle] = field(default_factory=list)
    module_cycles: list[Cycle] = field(default_factory=list)
    #: (file, number of lines) of every length-checked file longer than :data:`MAX_LINES`.
    long_files: list[tuple[Path, int]] = field(default_factory=list)
    #: References from a module up to its crate's root (``crate::ENGINE_VERSION`` in
    #: ``lib.rs``): the root is the top layer; what a module needs is handed down to it.
    root_refs: list[Ref] = field(default_factory=list)
    #: The same for the Python packages under ``python/`` (see ``py_structure``).
    py_files: list[Path] = field(default_factory=list)
    py_refs: list[Ref] = field(default_factory=list)
    py_file_cycles: list[Cycle] = field(default_factory=list)
    py_module_cycles: list[Cycle] = field(default_factory=list)
    #: (file, number of lines) of every package module longer than :data:`MAX_PY_LINES`.
    py_long_files: list[tuple[Path, int]] = field(default_factory=list)

    def failed(self) -> bool:
        """Whether anything the checks forbid was found."""
        return bool(
            self.file_cycles or self.module_cycles or self.long_files or self.root_refs
            or self.py_file_cycles or self.py_module_cycles or self.py_long_files
        )

    def file_key(self, p: Path) -> str:
        """A file as a node of the file graph: its path from the repository root."""
        return p.relative_to(self.root).as_posix()

    def module_key(self, p: Path) -> str | None:
        """A file as a node of the module graph: ``crate::first segment under src/``. The
        crate root (``lib.rs``) belongs to no top-level module."""
        crate, _, first, *rest = p.relative_to(self.root / "crates").parts
        if not rest and first in ("lib.rs", "main.rs"):
            return None
        return f"{crate}::{first.removesuffix('.rs')}"


# ---- lexing -----------------------------------------------------------------------------------

_CHAR = re.compile(r"b?'(?:\\u\{[0-9a-fA-F]+\}|\\x[0-9a-fA-F]{2}|\\.|[^\\'\n])'")
_RAW_STRING = re.compile(r'b?r(#*)"')


def strip_code(text: str) -> str:
    """``text`` with comments, strings and char literals blanked out (newlines kept, so line
    numbers stay right). Lifetimes (``'a``) are kept: they are not literals."""
    out: list[str] = []
    i, n = 0, len(text)

    def blank(s: str) -> str:
        return "".join(c if c == "\n" else " " for c in s)

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(blank(text[i:j]))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2  # block comments nest in Rust
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(blank(text[i:j]))
            i = j
        elif (m := _RAW_STRING.match(text, i)) and not _ident_char_before(text, i):
            end = text.find('"' + m.group(1), m.end())
            j = n if end < 0 else end + 1 + len(m.group(1))
            out.append(blank(text[i:j]))
            i = j
        elif c == '"' or (c == "b" and text.startswith('b"', i) and not _ident_char_before(text, i)):
            j = i + (2 if c == "b" else 1)
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(blank(text[i:j]))
            i = j
        elif c in "'b" and (m := _CHAR.match(text, i)) and not _ident_char_before(text, i):
            out.append(blank(m.group(0)))
            i = m.end()
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _ident_char_before(text: str, i: int) -> bool:
    return i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_")


_CFG_TEST_MOD = re.compile(
    r"#\s*\[\s*cfg\s*\(\s*test\s*\)\s*\]\s*(?:#\s*\[[^\]]*\]\s*)*"
    r"(?:pub(?:\s*\([^)]*\))?\s+)?mod\s+\w+\s*\{"
)


def strip_test_modules(code: str) -> str:
    """Blank out every ``#[cfg(test)] mod NAME { ... }`` block of (already stripped) code."""
    while m := _CFG_TEST_MOD.search(code):
        depth, j = 1, m.end()
        while j < len(code) and depth:
            depth += {"{": 1, "}": -1}.get(code[j], 0)
            j += 1
        code = code[: m.start()] + "".join(c if c == "\n" else " " for c in code[m.start() : j]) + code[j:]
    return code


_TOKEN = re.compile(r"\$?[A-Za-z_][A-Za-z0-9_]*|::|[{};,*]|\S")


def _tokens(code: str) -> Iterator[tuple[str, int]]:
    line = 1
    pos = 0
    for m in _TOKEN.finditer(code):
        line += code.count("\n", pos, m.start())
        pos = m.start()
        yield m.group(0), line


# ---- use trees --------------------------------------------------------------------------------


def _use_paths(toks: list[str]) -> list[list[str]]:
    """The full paths named by the tokens of one use tree (between ``use`` and ``;``)."""
    paths: list[list[str]] = []

    def tree(i: int, prefix: list[str]) -> int:
        segs = list(prefix)
        while i < len(toks):
            t = toks[i]
            if t == "{":
                i += 1
                while i < len(toks) and toks[i] != "}":
                    i = tree(i, segs)
                    if i < len(toks) and toks[i] == ",":
                        i += 1
                return i + 1  # past "}"
            if t == "*":
                paths.append(segs)
                return i + 1
            if t == "::":
                i += 1
                continue
            if t in (",", "}"):
                break
            if t == "as":
                i += 2  # `as name` renames; the path is what matters
                continue
            if t == "self" and prefix and len(segs) == len(prefix):
                i += 1  # `a::{self, b}`: `self` names the group's own path, `a`
                continue
            segs.append(t)
            i += 1
        paths.append(segs)
        return i

    tree(0, [])
    return [p for p in paths if p]


# ---- the crate model --------------------------------------------------------------------------


def _module_path(src: Path, file: Path) -> tuple[str, ...]:
    parts = list(file.relative_to(src).with_suffix("").parts)
    if parts in (["lib"], ["main"]):
        return ()
    if parts[-1] == "mod":
        parts.pop()
    return tuple(parts)


_DECLARES_TEST_MOD = re.compile(
    r"#\s*\[\s*cfg\s*\(\s*test\s*\)\s*\]\s*(?:#\s*\[[^\]]*\]\s*)*"
    r"(?:pub(?:\s*\([^)]*\))?\s+)?mod\s+tests\s*;"
)


def is_test_only(src: Path, file: Path) -> bool:
    """A ``tests.rs`` whose parent module declares it as ``#[cfg(test)] mod tests;``."""
    if file.name != "tests.rs":
        return False
    parent = file.parent
    candidates = [parent / "mod.rs", parent.with_suffix(".rs")]
    if parent == src:
        candidates = [src / "lib.rs", src / "main.rs"]
    return any(
        p.is_file() and _DECLARES_TEST_MOD.search(strip_code(p.read_text(encoding="utf-8")))
        for p in candidates
    )


def source_files(src: Path) -> list[Path]:
    """The crate's module files: everything under ``src`` but ``bin/`` and test-only files."""
    return sorted(
        f
        for f in src.rglob("*.rs")
        if "bin" not in f.relative_to(src).parts[:1] and not is_test_only(src, f)
    )


def file_refs(src: Path, file: Path, modules: dict[tuple[str, ...], Path]) -> list[Ref]:
    """Every reference of ``file`` to another file of the same crate."""
    code = strip_test_modules(strip_code(file.read_text(encoding="utf-8")))
    here = _module_path(src, file)
    toks = list(_tokens(code))
    refs: list[Ref] = []
    inline: list[tuple[str, int]] = []  # inline `mod name {` blocks open: (name, depth inside)
    depth = 0

    def resolve(path: list[str], line: int) -> None:
        base = list(here) + [name for name, _ in inline]
        head = path[0].lstrip("$")
        if head == "crate":
            full = path[1:]
        elif head == "self":
            full = base + path[1:]
        elif head == "super":
            rest = list(path)
            while rest and rest[0] == "super":
                base, rest = base[:-1], rest[1:]
            full = base + rest
        elif tuple(base + [head]) in modules:
            full = base + path  # `child::X`: a module naming one of its own children
        else:
            return  # an external crate, std, or a name that is not a module of this crate
        for k in range(len(full), -1, -1):
            key = tuple(full[:k])
            target = modules.get(key)
            if target is not None:
                if target != file:
                    # A reference to a module this file is nested in (its parent's mod.rs, the
                    # crate root) is how Rust's nesting reads, `use super::Machine`; it is kept
                    # (see `upward`) but is not an edge of the import graph.
                    up = len(key) < len(here) and key == here[: len(key)]
                    refs.append(Ref(file, target, line, "::".join(path), up))
                return

    def path_at(j: int) -> tuple[list[str], int]:
        """The path ``toks[j] :: ident :: ident ...`` and the index just past it."""
        path = [toks[j][0]]
        j += 1
        while j + 1 < len(toks) and toks[j][0] == "::" and re.match(r"\w", toks[j + 1][0]):
            path.append(toks[j + 1][0])
            j += 2
        return path, j

    i = 0
    while i < len(toks):
        t, line = toks[i]
        prev = toks[i - 1][0] if i else ""
        if t == "{":
            depth += 1
        elif t == "}":
            depth -= 1
            if inline and inline[-1][1] == depth + 1:
                inline.pop()
        elif t == "mod" and i + 2 < len(toks) and toks[i + 2][0] == "{":
            inline.append((toks[i + 1][0], depth + 1))
            depth += 1
            i += 3
            continue
        elif t == "use":
            j = i + 1
            while j < len(toks) and toks[j][0] != ";":
                j += 1
            for path in _use_paths([tok for tok, _ in toks[i + 1 : j]]):
                resolve(path, line)
            i = j + 1
            continue
        elif (
            re.match(r"\$?[A-Za-z_]", t)
            and i + 1 < len(toks)
            and toks[i + 1][0] == "::"
            and prev not in ("::", "in")  # the start of a path; not `pub(in crate::a)`
        ):
            # An inline path anywhere in code: `crate::a::B`, `super::x::f()`, `self::y::Z`,
            # `child::T` (only resolved when its head is one of this module's children).
            path, j = path_at(i)
            if len(path) > 1:
                resolve(path, line)
            i = j
            continue
        i += 1
    return refs


# ---- cycles -----------------------------------------------------------------------------------


def strongly_connected(nodes: Iterable[str], edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components (iterative), each sorted, in a stable order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for start in sorted(nodes):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        n = stack.pop()
                        on_stack.discard(n)
                        comp.append(n)
                        if n == node:
                            break
                    out.append(sorted(comp))
    return sorted(out)


def _shortest_loop(start: str, members: set[str], edges: dict[str, set[str]]) -> list[str]:
    """The shortest path start -> ... -> start inside ``members`` (breadth first)."""
    prev: dict[str, str] = {}
    frontier = [start]
    seen = {start}
    while frontier:
        nxt = []
        for node in frontier:
            for child in sorted(edges.get(node, ())):
                if child not in members:
                    continue
                if child == start:
                    path = [node]  # walk back from the last node to start
                    while path[-1] != start:
                        path.append(prev[path[-1]])
                    return path[::-1] + [start]
                if child not in seen:
                    seen.add(child)
                    prev[child] = node
                    nxt.append(child)
        frontier = nxt
    raise AssertionError(f"{start} is on no loop inside its component")


def cycles(refs: list[Ref], key) -> list[Cycle]:
    """The cycles of the graph whose nodes are ``key(file)`` and whose edges are ``refs``."""
    edges: dict[str, set[str]] = defaultdict(set)
    evidence: dict[tuple[str, str], Ref] = {}
    nodes: set[str] = set()
    for r in refs:
        a, b = key(r.source), key(r.target)
        if a is None or b is None or a == b or r.upward:
            continue
        nodes |= {a, b}
        edges[a].add(b)
        # The first reference (by line) stands for the edge in the report.
        old = evidence.get((a, b))
        if old is None or (str(old.source), old.line) > (str(r.source), r.line):
            evidence[a, b] = r
    out = []
    for comp in strongly_connected(nodes, edges):
        if len(comp) < 2:
            continue
        loop = _shortest_loop(comp[0], set(comp), edges)
        out.append(
            Cycle(tuple(comp), tuple(loop), tuple(evidence[a, b] for a, b in zip(loop, loop[1:])))
        )
    return out


# ---- the whole check --------------------------------------------------------------------------


def analyse(root: Path) -> Structure:
    """References, cycles and long files of every crate in ``root/crates``, and the import
    cycles of the Python packages in ``root/python``."""
    import py_structure  # beside this file; it uses this module's graph code

    root = Path(root).resolve()
    s = Structure(root)
    for src in sorted(root.glob("crates/*/src")):
        files = source_files(src)
        modules = {_module_path(src, f): f for f in files}
        s.files += files
        for f in files:
            s.refs += file_refs(src, f, modules)
        crate_root = modules.get(())
        s.root_refs += [r for r in s.refs if r.target == crate_root and r.source != crate_root]
    py_structure.analyse(root, s)

    s.file_cycles = cycles(s.refs, s.file_key)
    s.module_cycles = cycles(s.refs, s.module_key)
    checked = root / LENGTH_CHECKED
    for f in s.files:
        if f.is_relative_to(checked):
            n = len(f.read_text(encoding="utf-8").splitlines())
            if n > MAX_LINES:
                s.long_files.append((f, n))
    s.long_files.sort(key=lambda x: -x[1])
    for f in s.py_files:
        n = len(f.read_text(encoding="utf-8").splitlines())
        if n > MAX_PY_LINES:
            s.py_long_files.append((f, n))
    s.py_long_files.sort(key=lambda x: -x[1])
    return s


def format_cycles(title: str, found: list[Cycle], root: Path, refs: list[Ref], key) -> str:
    """Each cycle: its members, one loop through them, then every edge between two members
    with the first reference behind it (``file:line: path``), which is what to cut."""
    if not found:
        return f"{title}: none\n"
    lines = [f"{title}: {len(found)}"]
    for k, c in enumerate(found, 1):
        members = set(c.members)
        lines.append(f"  cycle {k}: {len(c.members)} members")
        lines += [f"    {m}" for m in c.members]
        lines.append("    loop: " + " -> ".join(c.loop))
        first: dict[tuple[str, str], Ref] = {}
        for r in refs:
            a, b = key(r.source), key(r.target)
            if a != b and a in members and b in members and not r.upward:
                first.setdefault((a, b), r)
        lines.append("    edges:")
        for (a, b), r in sorted(first.items()):
            where = f"{r.source.relative_to(root).as_posix()}:{r.line}"
            lines.append(f"      {a} -> {b}  ({where}: {r.text})")
    return "\n".join(lines) + "\n"


def format_long_files(found: list[tuple[Path, int]], root: Path,
                      title: str = f"Files in {LENGTH_CHECKED} longer than {MAX_LINES} lines") -> str:
    if not found:
        return f"{title}: none\n"
    lines = [f"{title}: {len(found)}"]
    lines += [f"  {f.relative_to(root).as_posix()}: {n} lines" for f, n in found]
    return "\n".join(lines) + "\n"


def format_root_refs(found: list[Ref], root: Path) -> str:
    title = "References up to a crate root (lib.rs)"
    if not found:
        return f"{title}: none\n"
    lines = [f"{title}: {len(found)}"]
    lines += [f"  {r.source.relative_to(root).as_posix()}:{r.line}: {r.text}" for r in found]
    return "\n".join(lines) + "\n"


def py_module_key(s: Structure):
    """The Python module graph's node of a file: ``package.first name under it``."""

    def key(p: Path) -> str | None:
        name = p.relative_to(s.root / "python").with_suffix("").parts
        return None if len(name) < 2 or name[1] == "__init__" else f"{name[0]}.{name[1]}"

    return key


def report(s: Structure) -> str:
    """The whole check for people: cycles between files, between top-level modules, long files,
    references up to a crate root; then the Python packages' cycles."""
    return "\n".join(
        [
            f"Rust: {len(s.files)} source files, {len(s.refs)} references between files",
            format_cycles("Cycles between files", s.file_cycles, s.root, s.refs, s.file_key),
            format_cycles(
                "Cycles between top-level modules", s.module_cycles, s.root, s.refs, s.module_key
            ),
            format_long_files(s.long_files, s.root),
            format_root_refs(s.root_refs, s.root),
            f"Python: {len(s.py_files)} modules, {len(s.py_refs)} imports between them",
            format_cycles("Cycles between Python modules", s.py_file_cycles, s.root, s.py_refs,
                          s.file_key),
            format_cycles("Cycles between top-level Python modules", s.py_module_cycles, s.root,
                          s.py_refs, py_module_key(s)),
            format_long_files(s.py_long_files, s.root,
                              f"Python modules longer than {MAX_PY_LINES} lines"),
        ]
    )
