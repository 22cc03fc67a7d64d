"""The API reference page documents every public name of the package."""

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest

import transformer
from transformer.data import tokenizer

pytestmark = pytest.mark.slow


def public_names() -> set[str]:
    """Every public class and function, named by the module that defines it.

    Every module of every folder counts, except the input checks of
    ``checks/``, which the page describes as a group ("Input checks") rather
    than one by one: they are the book's plumbing, not its teaching.
    """
    names = set()
    for info in pkgutil.walk_packages(transformer.__path__, "transformer."):
        parts = info.name.split(".")[1:]
        if parts[0] == "checks" or any(part.startswith("_") for part in parts):
            continue
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if name.startswith("_") or not (
                inspect.isclass(obj) or inspect.isfunction(obj)
            ):
                continue
            if obj.__module__ == module.__name__:
                names.add(name)
    return names


def test_the_walk_reaches_the_folders():
    """The test above would pass vacuously if the walk missed the folders."""
    names = public_names()
    assert {"MultiHeadAttention", "tile_step", "evaluating", "train"} <= names
    assert "check_tensor" not in names


def test_api_reference_documents_every_public_name(site):
    page = (site / "api.html").read_text()
    ids = re.findall(r'id="transformer\.([\w.]+)"', page)  # e.g. model.Transformer
    documented = {anchor.split(".")[-1] for anchor in ids}
    missing = sorted(public_names() - documented)
    assert not missing, f"not in book/api.md: {missing}"


def test_package_exports_resolve():
    for name in transformer.__all__:
        assert hasattr(transformer, name), name


def test_typed_special_ids_match_the_package():
    """The four special ids, typed by hand in book/api.md, are the package's."""
    page = (Path(__file__).resolve().parents[1] / "book" / "api.md").read_text()
    typed = re.findall(
        r"\.\. py:data:: (\w+)\n\s+:module: transformer\.data\.tokenizer\n"
        r"\s+:value: (-?\d+)\n",
        page,
    )
    assert {name for name, _ in typed} == {"PAD_ID", "BOS_ID", "EOS_ID", "UNK_ID"}
    for name, value in typed:
        assert int(value) == getattr(tokenizer, name), name
