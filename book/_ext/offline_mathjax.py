"""Serve MathJax 3 from the site itself, so math renders with no network.

The MathJax files come from the ``sphinx-mathjax-offline`` package (a copy of
MathJax 3 with its fonts). That package's own extension does not declare
itself safe for parallel builds, so this one only borrows its files: they are
added to the static path and ``mathjax_path`` points at the local copy.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.config import Config


def _on_config_inited(app: Sphinx, config: Config) -> None:
    spec = importlib.util.find_spec("sphinx-mathjax-offline")  # its folder's name has dashes
    if spec is None or spec.origin is None:
        raise RuntimeError("MathJax files not found: pip install sphinx-mathjax-offline")
    config.html_static_path.append(str(Path(spec.origin).parent / "static"))
    config.mathjax_path = "mathjax/tex-chtml.js"


def setup(app: Sphinx) -> dict:
    app.setup_extension("sphinx.ext.mathjax")
    app.connect("config-inited", _on_config_inited)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
