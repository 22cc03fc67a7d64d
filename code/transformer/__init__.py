"""A readable Transformer, built one concept per module for *The Executable Transformer*.

Shape letters, used in every docstring and shape comment of the package:

========== ===============================================================
``B``      batch size
``L``      query (target) sequence length
``S``      key (source) sequence length
``h``      number of attention heads
``d_model`` width of every token representation
``d_k``    width of one head's queries and keys, ``d_model // h``
``d_v``    width of one head's values (``d_k`` in this package)
``d_ff``   hidden width of the position-wise feed-forward network
``V``      vocabulary size
``N``      number of stacked encoder or decoder layers
========== ===============================================================

Tensors are batch first: ``(B, L, d_model)``. Masks are boolean and ``True``
means *may attend*; they broadcast to ``(B, h, L, S)``.
"""

from .attention import scaled_dot_product_attention
from .masks import causal_mask, padding_mask
from .repro import provenance, seed_everything, setup

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "causal_mask",
    "padding_mask",
    "provenance",
    "scaled_dot_product_attention",
    "seed_everything",
    "setup",
]
