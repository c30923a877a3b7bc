"""The shape of addon/ (docs/architecture.md "Where things are"): its imports form no circle, its
top level holds its wings and little else, no module grows past what one reader holds, and every
module and folder opens by saying what it holds."""

from __future__ import annotations

import ast
from pathlib import Path

ADDON = Path(__file__).resolve().parents[2] / "addon"
MAX_TOP_LEVEL = 10
"""Entries at addon/'s top level, `__init__.py` aside: the wings, gateway.py and __main__.py."""
MAX_LINES = 450


def _modules() -> dict[str, Path]:
    """Every module of addon/ by its dotted name (a package by its `__init__.py`)."""
    found = {}
    for path in sorted(ADDON.rglob("*.py")):
        parts = path.relative_to(ADDON.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The addon modules `name` imports, wherever the import statement is (a function, an `if
    TYPE_CHECKING:` block: a circle of annotations is still a circle for the reader)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            out |= {f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names}
    return {m for m in out if m in known and m != name}


def graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    return {name: imports(name, path, known) for name, path in modules.items()}


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_the_imports_of_addon_form_no_circle() -> None:
    found = circles(graph())
    assert not found, ("import circles in addon/ (a module that imports another must not be imported by "
                       "it, even under TYPE_CHECKING): " + "; ".join(" <-> ".join(c) for c in found))


def test_the_circle_finder_finds_a_circle() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_addon_top_level_holds_its_wings_and_little_else() -> None:
    entries = sorted(p.name for p in ADDON.iterdir() if p.name not in ("__init__.py", "__pycache__"))
    assert len(entries) <= MAX_TOP_LEVEL, (f"addon/ holds {len(entries)} entries: {entries}; put a module in "
                                           "its wing")


def test_no_module_is_longer_than_one_reader_holds() -> None:
    long = {str(p.relative_to(ADDON.parent)): n for p in ADDON.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines (split them by what they hold): {long}"


def test_every_module_and_folder_opens_by_saying_what_it_holds() -> None:
    silent = []
    for path in sorted(ADDON.rglob("*.py")):
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
        first = doc.strip().splitlines()[0] if doc and doc.strip() else ""
        if len(first.split()) < 4:
            silent.append(str(path.relative_to(ADDON.parent)))
    folders = [p for p in ADDON.rglob("*") if p.is_dir() and p.name != "__pycache__"]
    silent += [f"{p.relative_to(ADDON.parent)}/ (no __init__.py)" for p in folders
               if not (p / "__init__.py").exists()]
    assert not silent, f"say in the first docstring line what these hold: {silent}"
