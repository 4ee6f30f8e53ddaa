"""The package's import graph points only downwards and has no cycle.

Every import of an xfskde module by another — at module level *and* inside functions, where
imports used to hide cycles — is an edge of the graph. Each module belongs to one layer of
:data:`LAYERS` (docs/architecture.md explains them); an edge may go to the same layer or a lower
one, never up, and the graph must have no cycle. A new module fails the test until it is given
a layer.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "xfskde"

#: The layers, lowest first. A pattern ending in ".*" stands for a subpackage and its modules.
LAYERS: list[tuple[str, ...]] = [
    # foundations: no numerics, no images
    ("xfskde._version", "xfskde.exceptions", "xfskde._validation", "xfskde._grid",
     "xfskde._palette", "xfskde._scheduling", "xfskde._numba_cache", "xfskde._memory",
     "xfskde.metrics"),
    # the kernel, windows, labelled-array conventions, compiled loops
    ("xfskde.kernel", "xfskde.windows", "xfskde._labels", "xfskde._core", "xfskde._pictures"),
    # angle sets and gradients
    ("xfskde.density", "xfskde.gradients"),
    # canonical forms; the block core
    ("xfskde.canonical", "xfskde.local"),
    # the one block engine and chunk planner; images averaged over cells, block by block
    ("xfskde.lazy", "xfskde._cells"),
    # the faces of the coefficient field: local_fskde, field operations, images and stores
    ("xfskde.api", "xfskde.fields", "xfskde.orientation", "xfskde.masks", "xfskde.io",
     "xfskde.io.*"),
    # consumers
    ("xfskde.descriptors", "xfskde.segmentation", "xfskde.segmentation.*", "xfskde.plot"),
    # data sets and the paper's experiments
    ("xfskde.datasets", "xfskde.datasets.*"),
    ("xfskde.experiments", "xfskde.experiments.*"),
    # the accessor and the package's namespace
    ("xfskde.accessor", "xfskde"),
    # the command line
    ("xfskde.commands", "xfskde.commands.*", "xfskde.cli", "xfskde.__main__"),
]  # fmt: skip


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _resolve(importer: str, is_package: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = importer.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Edges importer -> imported between the package's modules, from every import statement."""
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(name, is_package, node)
                # "from . import fields" imports the module xfskde.fields
                targets = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in modules]
                targets = targets or [base]
            for target in targets:
                while target and target not in modules:  # xfskde.io.images.x -> xfskde.io.images
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def layer_of(module: str) -> int:
    for i, patterns in enumerate(LAYERS):
        for pattern in patterns:
            if module == pattern or (pattern.endswith(".*") and module.startswith(pattern[:-1])):
                return i
    raise KeyError(module)


def violations(graph: dict[str, set[str]]) -> list[str]:
    """Upward edges and cycles of a graph, as readable lines (empty when the graph is sound)."""
    problems = []
    for module, targets in sorted(graph.items()):
        for target in sorted(targets):
            if layer_of(target) > layer_of(module):
                problems.append(
                    f"upward import: {module} (layer {layer_of(module)}) imports {target} "
                    f"(layer {layer_of(target)})"
                )
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycle = [*path[path.index(nxt) :], nxt] if nxt in path else [node, nxt]
                problems.append("import cycle: " + " -> ".join(cycle))
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    return problems


def test_every_module_has_a_layer():
    missing = [m for m in _modules() if not _has_layer(m)]
    assert not missing, f"give these modules a layer in LAYERS: {missing}"


def _has_layer(module: str) -> bool:
    try:
        layer_of(module)
    except KeyError:
        return False
    return True


def test_imports_point_down_and_have_no_cycle():
    graph = import_graph(_modules())
    assert sum(map(len, graph.values())) > 50  # the graph was really read
    assert "xfskde.lazy" in graph["xfskde.api"]  # a known edge
    problems = violations(graph)
    assert not problems, "\n".join(problems)


def test_the_checker_finds_upward_edges_and_cycles():
    # a lower module importing a higher one, and a cycle inside one layer
    upward = {"xfskde.kernel": {"xfskde.accessor"}, "xfskde.accessor": set()}
    assert any("upward import: xfskde.kernel" in p for p in violations(upward))
    cycle = {"xfskde.density": {"xfskde.gradients"}, "xfskde.gradients": {"xfskde.density"}}
    assert any(p.startswith("import cycle") for p in violations(cycle))


def test_function_level_imports_are_edges_too(tmp_path):
    pkg = tmp_path / "xfskde"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "kernel.py").write_text("def f():\n    from .accessor import thing\n")
    (pkg / "accessor.py").write_text("from . import kernel\n")
    modules = {_name_in(tmp_path, p): p for p in pkg.glob("*.py")}
    graph = import_graph(modules)
    assert graph["xfskde.kernel"] == {"xfskde.accessor"}
    assert graph["xfskde.accessor"] == {"xfskde.kernel"}


def _name_in(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@pytest.mark.parametrize("module", ["xfskde.kernel", "xfskde.local", "xfskde.lazy"])
def test_low_layers_know_nothing_of_xarray_or_dask(module):
    """kernel/density know nothing of images, local nothing of Dask, lazy nothing of xarray."""
    path = _modules()[module]
    source = path.read_text()
    forbidden = {"xfskde.kernel": ("dask", "xarray"), "xfskde.local": ("dask", "xarray"),
                 "xfskde.lazy": ("xarray",)}[module]  # fmt: skip
    for name in forbidden:
        assert f"import {name}" not in source and f"from {name}" not in source, (module, name)


def test_one_block_engine():
    """No module but the engine overlaps chunks: every image consumer runs on lazy.map_haloed."""
    calls = ("map_overlap", "overlap.overlap", "da.overlap")
    for name, path in _modules().items():
        if name == "xfskde.lazy":
            continue
        tree = ast.parse(path.read_text())
        used = {ast.unparse(n) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
        found = [c for c in calls if any(u.endswith(c) for u in used)]
        assert not found, f"{name} uses {found}: run it on xfskde.lazy.map_haloed instead"
    engine = _modules()["xfskde.lazy"].read_text()
    assert "overlap.overlap" in engine  # the check looks for what the engine really calls
