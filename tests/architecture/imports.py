"""The product's import graph, read from the source (no module is imported).

Every ``import`` and ``from … import`` counts wherever it stands — module level, inside a
function, under ``if TYPE_CHECKING:`` — and so does ``importlib.import_module("literal")``:
a dependency hidden in a function body is still a dependency, and type-only imports still
say which layer a module leans on. Migrations are not product code here (they are frozen
history and import ``accounts.rls`` by design).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRODUCT_PACKAGES = ("accounts", "config", "conversation", "routers", "cases", "inbox")


@dataclass(frozen=True)
class Import:
    """One import statement of a product module that names another product module."""

    source: str  # importing module, dotted
    target: str  # imported product module, dotted (the longest name that is a module)
    path: str  # importing file, relative to the repository root
    line: int

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


def is_product_file(rel: str) -> bool:
    parts = rel.split("/")
    return parts[0] in PRODUCT_PACKAGES and "migrations" not in parts and rel.endswith(".py")


@cache
def product_files() -> dict[str, str]:
    """Dotted module name → path relative to the root, for every product module."""
    found: dict[str, str] = {}
    for package in PRODUCT_PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if not is_product_file(rel):
                continue
            dotted = rel[: -len(".py")].replace("/", ".")
            if dotted.endswith(".__init__"):
                dotted = dotted[: -len(".__init__")]
            found[dotted] = rel
    return found


@cache
def parsed(rel: str) -> ast.Module:
    return ast.parse((ROOT / rel).read_text(encoding="utf-8"), filename=rel)


def _resolve(name: str) -> str | None:
    """The product module that importing ``name`` loads last (``a.b.c`` → the longest
    prefix that is a module), or None outside the product."""
    modules = product_files()
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in modules:
            return candidate
        parts.pop()
    return None


def _absolute(module: str, node: ast.ImportFrom, is_package: bool) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".")
    drop = node.level - 1 if is_package else node.level
    base = base[: len(base) - drop] if drop else base
    return ".".join(base + ([node.module] if node.module else []))


def _targets(module: str, rel: str, node: ast.AST) -> Iterator[str]:
    modules = product_files()
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield alias.name
    elif isinstance(node, ast.ImportFrom):
        base = _absolute(module, node, rel.endswith("__init__.py"))
        for alias in node.names:
            # ``from pkg import sub`` loads the submodule when there is one; otherwise the
            # name is an attribute of ``pkg`` itself.
            sub = f"{base}.{alias.name}"
            yield sub if sub in modules else base
    elif (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute | ast.Name)
        and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id)
        == "import_module"
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        yield node.args[0].value


def imports_in(module: str, rel: str, tree: ast.Module) -> list[Import]:
    """The product imports of one parsed module, at any depth (self-imports dropped)."""
    found = []
    for node in ast.walk(tree):
        for name in _targets(module, rel, node):
            target = _resolve(name)
            if target is not None and target != module:
                found.append(Import(module, target, rel, getattr(node, "lineno", 0)))
    return found


@cache
def imports() -> tuple[Import, ...]:
    """Every import between two product modules."""
    found: list[Import] = []
    for module, rel in product_files().items():
        found += imports_in(module, rel, parsed(rel))
    return tuple(sorted(set(found), key=lambda i: (i.path, i.line, i.target)))


def graph() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {m: set() for m in product_files()}
    for imp in imports():
        edges[imp.source].add(imp.target)
    return edges


def strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's components with more than one module: each holds at least one cycle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = 0

    def visit(start: str) -> None:
        nonlocal counter
        # Iterative DFS: the graph has a few hundred nodes, recursion would do too, but a
        # long chain must never hit the interpreter's recursion limit.
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return sorted(components)


def shortest_cycle(edges: dict[str, set[str]], component: list[str]) -> list[str]:
    """One shortest cycle through the component's first module (BFS), closed: [a, …, a]."""
    members = set(component)
    start = component[0]
    previous: dict[str, str] = {}
    frontier = [start]
    seen = {start}
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(edges[node] & members):
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [*reversed(path), start]
                if child not in seen:
                    seen.add(child)
                    previous[child] = node
                    following.append(child)
        frontier = following
    raise AssertionError(f"no cycle through {start}")  # Tarjan said there is one


def first_import(source: str, target: str) -> Import:
    return next(i for i in imports() if i.source == source and i.target == target)
