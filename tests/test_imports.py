"""The package's import graph: acyclic, layered bottom-up, small modules.

The layers are those of the house style (STYLE.md): concepts, then the model
modules, then the tools around a model, then the top (interop, figures,
inspection, teaching variants), which nothing in the package imports but
``repro.setup`` (it applies the figures' style). A module that is not listed
here is treated as top level, so a new module must either be imported by
nothing or be added to ``LAYERS``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "code" / "transformer"
MAX_LINES = 300

LAYERS: dict[str, float] = {
    # 0: the shared checks, imported by everything.
    "_checks": 0,
    "_contract": 0,
    "_id_checks": 0,
    # 1: concepts.
    "attention": 1,
    "masks": 1,
    "norm": 1,
    "feedforward": 1,
    "positional": 1,
    "embedding": 1,
    "rmsnorm": 1,
    "swiglu": 1,
    "rotary": 1,
    "kv_cache": 1,
    "tiled_attention": 1,
    # 2: multi-head, then layers, then stacks, then the models and their config.
    "multihead": 2.1,
    "gqa": 2.1,
    "record": 2.1,
    "layers": 2.2,
    "stacks": 2.3,
    "config": 2.4,
    "model": 2.5,
    "decoder_only": 2.5,
    # 3: tools around a model.
    "tokenizer": 3,
    "tasks": 3,
    "batches": 3,
    "metrics": 3,
    "train": 3,
    "decode": 3,
    "diagnostics": 3,
    "cost": 3,
    "generate": 3,
    "charlm": 3,
    # 4: the top: imports anything, imported by nothing but its own subpackage.
    "interop": 4,
    "inspection": 4,
    "diagram": 4,
    "teaching_multihead": 4,
    "plot": 4,
    # 5: a chapter's one-call set-up, which also applies the figures' style.
    "repro": 5,
}
TOP = 4


def module_name(path: Path) -> str:
    """``plot/heatmaps.py`` -> ``plot.heatmaps``; ``plot/__init__.py`` -> ``plot``."""
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The package modules that ``path`` imports, anywhere in the file."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
            elif node.module and node.module.split(".")[0] == "transformer":
                base, node_module = [], node.module.split(".", 1)[1:]
                node = ast.ImportFrom(
                    node_module[0] if node_module else None, node.names
                )
            else:
                continue
            target = base + (node.module.split(".") if node.module else [])
            for alias in node.names:
                for candidate in (".".join([*target, alias.name]), ".".join(target)):
                    if candidate in known:
                        found.add(candidate)
                        break
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("transformer."):
                    found.add(alias.name.split(".", 1)[1])
    found.discard(name)
    found.discard("")
    return found


def graph() -> dict[str, set[str]]:
    found = modules()
    known = set(found) - {""}
    return {n: imports_of(n, p, known) for n, p in found.items() if n}


def layer(name: str) -> float:
    return LAYERS.get(name.split(".")[0], TOP)


def test_the_graph_sees_the_imports_it_should():
    g = graph()
    assert "attention" in g["multihead"]
    assert {"config", "stacks", "embedding"} <= g["model"]
    assert "plot.style" in g["repro"]  # an import inside a function counts too


def find_cycle(g: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(g.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        state[node] = 2
        path.pop()
        return None

    for node in sorted(g):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_the_package_has_no_import_cycle():
    cycle = find_cycle(graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_cycle_finder_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_module_imports_a_higher_layer():
    wrong = [
        f"{name} (layer {layer(name)}) imports {dep} (layer {layer(dep)})"
        for name, deps in graph().items()
        for dep in deps
        if layer(dep) > layer(name)
        or (
            layer(dep) == layer(name) == TOP and dep.split(".")[0] != name.split(".")[0]
        )
    ]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("name", sorted(modules()))
def test_no_module_is_longer_than_300_lines(name):
    lines = len(modules()[name].read_text().splitlines())
    assert lines <= MAX_LINES, f"{name}: {lines} lines"


def test_the_mixin_and_the_grab_bag_are_gone():
    assert not (PACKAGE / "_convertible.py").exists()
    assert not (PACKAGE / "_parts.py").exists()


@pytest.mark.parametrize(
    "name", sorted(n for n, p in modules().items() if p.name != "__init__.py")
)
def test_only_init_modules_re_export_names(name):
    tree = ast.parse(modules()[name].read_text())
    exported: list[str] = []
    defined: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
            defined.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = {t.id for t in targets if isinstance(t, ast.Name)}
            defined |= names
            if "__all__" in names:
                exported = [ast.literal_eval(e) for e in node.value.elts]
    imported_elsewhere = [n for n in exported if n not in defined]
    assert not imported_elsewhere, f"{name} re-exports {imported_elsewhere}"
