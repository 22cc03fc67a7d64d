"""The package's import graph: acyclic, layered bottom-up, small modules.

Each subpackage is a layer (CONTRIBUTING.md): the checks, then the parts, then
the models, then data, training and inference, then the top (tools and plots),
which nothing in the package imports but ``repro.setup`` (it applies the
figures' style). A module's layer is its folder's; a module at the package's
root that is not listed here is treated as top level, so a new folder must
either be imported by nothing or be added to ``LAYERS``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "code" / "transformer"
MAX_LINES = 300

LAYERS: dict[str, float] = {
    # 0: the input checks, imported by everything.
    "checks": 0,
    # 1: the parts of a Transformer (the paper's, then Part II's).
    "parts": 1,
    # 2: layers, stacks, the models and their configs.
    "models": 2,
    # 3: the data, then training on it, then inference.
    "data": 3,
    "training": 3.1,
    "inference": 3.2,
    # 4: the top: imports anything, imported by nothing but its own subpackage.
    "tools": 4,
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
    assert "parts.attention" in g["parts.multihead"]
    assert {"models.config", "models.stacks", "parts.embedding"} <= g[
        "models.encoder_decoder"
    ]
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


def test_the_package_is_folders_of_one_layer_each():
    roots = {p.stem for p in PACKAGE.glob("*.py")} - {"__init__"}
    folders = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert roots <= {"repro", "notebook"}, roots
    assert folders - {"__pycache__"} <= set(LAYERS), folders


def private_imports(path: Path, name: str) -> list[str]:
    """``from <another subpackage> import _x`` in ``path``, as readable strings."""
    own = name.split(".")[0]
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = package[: len(package) - (node.level - 1)]
            target = [*base, *(node.module.split(".") if node.module else [])]
        elif node.module and node.module.startswith("transformer."):
            target = node.module.split(".")[1:]
        else:
            continue
        for alias in node.names:
            if alias.name.startswith("_") and target and target[0] != own:
                found.append(f"{'.'.join(target)}.{alias.name}")
    return found


@pytest.mark.parametrize("name", sorted(modules()))
def test_no_private_name_is_imported_from_another_subpackage(name):
    assert not private_imports(modules()[name], name or "__init__")


def test_the_private_import_finder_finds_one(tmp_path):
    path = tmp_path / "layers.py"
    path.write_text("from ..parts.attention import _attend, attend\n")
    assert private_imports(path, "models.layers") == ["parts.attention._attend"]


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


# Every name that ``from transformer import ...`` gave before the package was
# split into folders (12bc19d): readers' notebooks import these.
NAMES_BEFORE_THE_FOLDERS = [
    "AddNorm",
    "CharCorpus",
    "Decoder",
    "DecoderLayer",
    "DecoderOnlyConfig",
    "DecoderOnlyTransformer",
    "Encoder",
    "EncoderLayer",
    "GroupedQueryAttention",
    "KVCache",
    "LayerNorm",
    "LearnedPositionalEmbedding",
    "MultiHeadAttention",
    "PositionwiseFeedForward",
    "RMSNorm",
    "RotaryEmbedding",
    "SinusoidalPositionalEncoding",
    "StackConfig",
    "SwiGLU",
    "TokenEmbedding",
    "Transformer",
    "TransformerConfig",
    "__version__",
    "bits_per_char",
    "book_chapters",
    "causal_mask",
    "count_flops",
    "count_parameters",
    "from_torch",
    "generate",
    "largest_tensor",
    "next_token",
    "no_checks",
    "padding_mask",
    "prefix_lm_mask",
    "provenance",
    "record_attention",
    "scaled_dot_product_attention",
    "seed_everything",
    "set_checks",
    "setup",
    "tiled_attention",
    "to_torch",
    "to_torch_mask",
    "train_lm",
]


@pytest.mark.parametrize("name", NAMES_BEFORE_THE_FOLDERS)
def test_every_name_of_the_flat_package_still_imports(name):
    import transformer

    assert name in transformer.__all__
    assert getattr(transformer, name) is not None
