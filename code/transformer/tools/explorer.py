"""Export a model's attention, stage by stage, for the book's attention explorer.

The explorer on the book's pages lets the reader pick a layer, a head (or all
heads), an example and a stage of the computation of the attention weights:

- ``raw``: the scores ``Q Kᵀ``;
- ``scaled``: the scores divided by ``√d_k``;
- ``masked``: the scaled scores with blocked keys set to ``-inf``;
- ``softmax``: the attention weights.

:func:`capture_attention` runs a model once and records what every
:class:`~transformer.parts.multihead.MultiHeadAttention` received and the weights
it kept; :func:`attention_stages` recomputes the four stages from the
module's own projections; :class:`AttentionExplorer` collects examples and
shows itself as HTML: the data as compact JSON, which the page's script
(``book/_static/attention-explorer.js``) draws. In a plain notebook, with no
such script, the HTML shows a sentence that says where the explorer lives.
"""

from __future__ import annotations

import html
import inspect
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
import torch.nn as nn

from ..checks.explorer import (
    check_capture_args,
    check_example_names,
    check_explorer_args,
    check_has_attention,
)
from ..parts.attention import scaled_dot_product_attention
from ..parts.masks import mask_tensor
from ..parts.multihead import MultiHeadAttention
from ..training.modes import evaluating
from .record import record_attention

STAGES = {
    "raw": "raw scores Q Kᵀ",
    "scaled": "scaled: Q Kᵀ / √d_k",
    "masked": "masked: blocked keys set to −∞",
    "softmax": "softmax: the attention weights",
}
"""The stages the explorer shows, by key, with the label of each."""


@dataclass(frozen=True)
class AttentionCall:
    """One call of one attention module: its inputs and the weights it kept.

    Attributes:
        name: The module's qualified name in the model, e.g.
            ``"stack.layers.0.self_attn"``; ``""`` for the model itself.
        module: The module that was called.
        query: Its ``query`` input, ``(B, L, d_model)``.
        key: Its ``key`` input, ``(B, S, d_model)``.
        mask: Its mask broadcast to ``(B, h, L, S)``, or ``None``.
        weights: The weights the module kept, ``(B, h, L, S)``.
    """

    name: str
    module: MultiHeadAttention
    query: torch.Tensor
    key: torch.Tensor
    mask: torch.Tensor | None
    weights: torch.Tensor


def capture_attention(
    model: nn.Module, forward: Callable[[], object]
) -> list[AttentionCall]:
    """Run ``forward()`` once, in evaluation mode, and record every attention call.

    This is the one place where the explorer reads attention weights: from
    each module's ``attn_weights`` right after its ``forward``.

    Args:
        model: The model, or a single attention module.
        forward: Runs the model, e.g. ``lambda: model(x)``.

    Returns:
        One record per call of a ``MultiHeadAttention`` inside ``model``, in
        the order of the calls.

    Raises:
        TypeError: If ``model`` is not a module or ``forward`` not callable.
        ValueError: If ``model`` holds no ``MultiHeadAttention``.
    """
    check_capture_args(model, forward)
    names = {
        m: n for n, m in model.named_modules() if isinstance(m, MultiHeadAttention)
    }
    check_has_attention(model, names)
    calls: list[AttentionCall] = []

    def after(
        module: MultiHeadAttention, args: tuple, kwargs: dict, output: object
    ) -> None:
        bound = inspect.signature(module.forward).bind(*args, **kwargs).arguments
        query, key, mask = bound["query"], bound["key"], bound.get("mask")
        B, L, _ = query.shape
        # the causal mask that was never built, built now for the picture
        mask = mask_tensor(mask, L, key.shape[1], device=query.device)
        if mask is not None:
            # (B, h, L, S)
            mask = torch.broadcast_to(mask, (B, module.h, L, key.shape[1]))
        calls.append(
            AttentionCall(names[module], module, query, key, mask, module.attn_weights)
        )

    hooks = [m.register_forward_hook(after, with_kwargs=True) for m in names]
    try:
        with evaluating(model), torch.no_grad(), record_attention(model):
            forward()
    finally:
        for hook in hooks:
            hook.remove()
    return calls


def attention_stages(call: AttentionCall) -> dict[str, torch.Tensor]:
    """Recompute the four stages of one call's weights from its module's projections.

    Args:
        call: A record from :func:`capture_attention`.

    Returns:
        A tensor per key of :data:`STAGES`. The ``softmax`` stage comes from
        :func:`~transformer.parts.attention.scaled_dot_product_attention`, so it
        equals the module's weights.

    Shape:
        every stage: ``(B, h, L, S)``
    """
    module = call.module
    with torch.no_grad():
        # (B, h, L, d_k) and (B, h or h_kv, S, d_k)
        q, k, _ = module.project(call.query, call.key, call.key)
        # (B, h, S, d_k): the key head of every query head
        k = k.repeat_interleave(q.shape[1] // k.shape[1], dim=1)
        # (B, h, L, S)
        raw = q @ k.transpose(-2, -1)
        scaled = raw / math.sqrt(module.d_k)
        masked = (
            scaled if call.mask is None else scaled.masked_fill(~call.mask, -math.inf)
        )
        # (B, h, L, S)
        _, softmax = scaled_dot_product_attention(q, k, k, call.mask)
    return {"raw": raw, "scaled": scaled, "masked": masked, "softmax": softmax}


def _rounded(x: torch.Tensor, digits: int) -> list:
    """Nested lists of ``x`` rounded to ``digits`` decimals; ``-inf`` is ``None``."""
    if x.dim() > 1:
        return [_rounded(row, digits) for row in x]
    out = []
    for v in x.double().tolist():
        if math.isinf(v):
            out.append(None)
        else:
            v = round(v, digits) + 0.0  # + 0.0 turns -0.0 into 0.0
            out.append(int(v) if v.is_integer() else v)
    return out


class AttentionExplorer:
    """Collect examples of a model's attention and show them as the book's explorer.

    Args:
        title: What the explorer shows, e.g. ``"The counting model"``.
        digits: Decimals kept of every number.

    Raises:
        TypeError: If ``title`` is not a string or ``digits`` not an int.
        ValueError: If ``digits`` is negative.
    """

    def __init__(self, title: str, *, digits: int = 3) -> None:
        check_explorer_args(title, digits)
        self.title = title
        self.digits = digits
        self.examples: list[dict] = []

    def add(
        self,
        label: str,
        model: nn.Module,
        forward: Callable[[], object],
        *,
        queries: Sequence[str],
        keys: Sequence[str] | None = None,
        index: int = 0,
    ) -> list[AttentionCall]:
        """Run ``forward()`` and add sequence ``index`` of its batch as one example.

        Every attention call becomes one of the example's layers, named after
        its module.

        Args:
            label: The example's name in the explorer's menu.
            model: The model that ``forward`` runs.
            forward: Runs the model once, e.g. ``lambda: model(x)``.
            queries: One name per query position, e.g. the input's tokens.
            keys: One name per key position; ``queries`` when ``None``.
            index: Which sequence of the batch to show.

        Returns:
            The calls recorded, for checks and figures.

        Raises:
            ValueError: If the token names do not match ``(L, S)``, or
                ``index`` is outside the batch.
        """
        calls = capture_attention(model, forward)
        keys = list(queries if keys is None else keys)
        queries = list(queries)
        layers = []
        for call in calls:
            check_example_names(call.name, queries, keys, index, call.weights.shape)
            stages = attention_stages(call)
            layers.append(
                {
                    "name": call.name or "attention",
                    "stages": {
                        s: _rounded(t[index], self.digits) for s, t in stages.items()
                    },
                }
            )
        self.examples.append(
            {"label": label, "queries": queries, "keys": keys, "layers": layers}
        )
        return calls

    def to_json(self) -> str:
        """Return the explorer's data as compact JSON, safe in an HTML ``<script>``."""
        data = {"title": self.title, "stages": STAGES, "examples": self.examples}
        text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
        return (
            text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
        )

    def _repr_html_(self) -> str:
        return (
            '<div class="attention-explorer">'
            f'<script type="application/json">{self.to_json()}</script>'
            '<p class="attention-explorer-fallback">'
            f"Attention explorer: {html.escape(self.title)}. It is interactive on the "
            "book's web page, which draws it from the data in this output.</p></div>"
        )

    def __repr__(self) -> str:
        labels = ", ".join(e["label"] for e in self.examples)
        n = len(self.examples)
        return f"AttentionExplorer({self.title!r}: {n} examples: {labels})"
