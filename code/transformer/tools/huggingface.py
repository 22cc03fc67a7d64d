"""Real checkpoints: GPT-2 and LLaMA into the book's decoder, and back.

:func:`from_hf` takes a ``transformers`` ``GPT2LMHeadModel`` or
``LlamaForCausalLM`` and returns a
:class:`~transformer.models.decoder_only.DecoderOnlyTransformer` with the same
weights, which computes the same logits; :func:`to_hf` is its inverse, for
any book model that one of the two families expresses; :func:`load_pretrained`
reads a folder that ``save_pretrained`` wrote with ``safetensors`` alone.
``transformers`` is optional: only :func:`to_hf` imports it. The package's
``hf`` extra holds it and ``safetensors``; install them beside the package with
``pip install "transformers>=4.44" "safetensors>=0.4"``, or in a clone of the
repository with ``pip install ".[hf]"``. The names and the reshaping are in
:mod:`~transformer.tools.hf_names`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import torch
import torch.nn as nn

from ..checks.huggingface import (
    check_hf_config,
    check_hf_expressible,
    check_hf_model,
    check_pretrained_folder,
)
from ..models.decoder_config import DecoderOnlyConfig
from ..models.decoder_only import DecoderOnlyTransformer
from ..parts.rotary import RotaryEmbedding
from .hf_names import config_from_hf, config_to_hf, rope_permutation, weight_map

BUFFERS = (".attn.bias", ".attn.masked_bias", "rotary_emb.inv_freq")
"""Endings of Hugging Face ``state_dict`` entries that are not weights."""


def from_hf(model: nn.Module) -> DecoderOnlyTransformer:
    """Return the book's decoder with the weights of a GPT-2 or LLaMA model.

    Args:
        model: A ``transformers`` ``GPT2LMHeadModel`` or ``LlamaForCausalLM``.

    Returns:
        A :class:`~transformer.models.decoder_only.DecoderOnlyTransformer` in
        evaluation mode whose logits equal ``model``'s.

    Raises:
        TypeError: If ``model`` is of another class.
        ValueError: If its config asks for what the book's model cannot
            express (rope scaling, biases in LLaMA, another ``head_dim`` or
            activation, ...).
    """
    check_hf_model(model)
    return from_hf_state(model.config.to_dict(), model.state_dict())


def from_hf_state(
    hf_config: Mapping[str, object], state: Mapping[str, torch.Tensor]
) -> DecoderOnlyTransformer:
    """Build the book's decoder from a Hugging Face config and ``state_dict``.

    Args:
        hf_config: The config as a dict (a checkpoint's ``config.json``).
        state: Its tensors by Hugging Face name; a tied ``lm_head.weight``
            may be missing, as ``save_pretrained`` leaves it out.

    Returns:
        The model, in evaluation mode.

    Raises:
        ValueError: If the config cannot be expressed, or a tensor is
            missing or left over.
    """
    config = config_from_hf(hf_config)
    family = str(hf_config["model_type"])
    state = dict(state)
    if config.share_embeddings and "lm_head.weight" not in state:
        state["lm_head.weight"] = state[weight_map(config, family)[0][1]]
    rows = weight_map(config, family)
    used = {theirs for _, theirs, _ in rows}
    extra = [k for k in state if k not in used and not k.endswith(BUFFERS)]
    missing = sorted(used - set(state))
    if extra or missing:
        raise ValueError(f"state: missing {missing}, not understood {extra}")
    model = _empty_model(config)
    dtypes = {name: t.dtype for name, t in model.state_dict().items()}
    ours = {}
    for name, theirs, how in rows:
        if config.share_embeddings and name == "out_proj.weight":
            continue  # the embedding matrix, tied again below
        ours[name] = _take(how, state[theirs], config).to(dtypes[name])
    if config.share_embeddings:
        ours["out_proj.weight"] = ours["embed.weight"]
    # The fresh tensors become the parameters: nothing is initialised or copied.
    model.load_state_dict(ours, assign=True)
    if config.share_embeddings:
        model.out_proj.weight = model.embed.weight
    return model.eval()


def _empty_model(config: DecoderOnlyConfig) -> DecoderOnlyTransformer:
    """Build the book's decoder with its parameters on the meta device.

    Random initialisation of a model whose every weight is then replaced is
    most of the cost of a conversion (seconds for GPT-2 small); on the meta
    device it allocates and computes nothing. The buffers that no
    ``state_dict`` holds, the rotary tables, are computed on the CPU.
    """
    with torch.device("meta"):
        model = DecoderOnlyTransformer(config)
    if model.rope is not None:
        rope = model.rope
        tables = RotaryEmbedding(rope.d_k, rope.max_len, base=rope.base)
        rope.cos, rope.sin = tables.cos, tables.sin
    meta = [name for name, b in model.named_buffers() if b.is_meta]
    if meta:
        raise RuntimeError(f"buffers left on the meta device: {meta}")
    return model


def to_hf(model: DecoderOnlyTransformer) -> nn.Module:
    """Return the ``transformers`` GPT-2 or LLaMA model computing what ``model`` does.

    Args:
        model: A book decoder whose config one family expresses: pre-norm,
            unscaled embeddings, no output bias, and either learned positions,
            layer norm and biased attention (GPT-2) or rotary positions, RMS
            norm and SwiGLU (LLaMA).

    Returns:
        A ``GPT2LMHeadModel`` or ``LlamaForCausalLM`` in evaluation mode, with
        eager attention, holding ``model``'s weights.

    Raises:
        TypeError: If ``model`` is not a ``DecoderOnlyTransformer``.
        ValueError: Naming the options to change, if neither family
            expresses the config.
        ImportError: If ``transformers`` is not installed.
    """
    family = check_hf_expressible(model)
    hf = _new_hf_model(family, config_to_hf(model.config, family))
    state = hf.state_dict()
    state.update(export_state(model, family))
    hf.load_state_dict(state)
    return hf.eval()


def export_state(model: DecoderOnlyTransformer, family: str) -> dict[str, torch.Tensor]:
    """Return ``model``'s weights under the Hugging Face names of ``family``.

    Returns:
        New tensors by Hugging Face name, ``lm_head.weight`` included.
    """
    c, ours = model.config, model.state_dict()
    theirs: dict[str, torch.Tensor] = {}
    fused: dict[str, list[torch.Tensor]] = {}
    for name, hf_name, how in weight_map(c, family):
        if how in ("q", "k", "v"):
            fused.setdefault(hf_name, []).append(ours[name])
        else:
            theirs[hf_name] = _give(how, ours[name], c)
    for hf_name, (q, k, v) in fused.items():
        # (d_model, 3 d_model): GPT-2's Conv1D stores (in, out)
        qkv = torch.cat((q, k, v), dim=0)
        theirs[hf_name] = (qkv.T if qkv.dim() == 2 else qkv).contiguous()
    return theirs


def load_pretrained(folder: str) -> DecoderOnlyTransformer:
    """Read a folder written by ``save_pretrained`` into the book's decoder.

    Needs ``safetensors``, not ``transformers``.

    Args:
        folder: A folder (a ``str`` or ``pathlib.Path``) with ``config.json``
            and one or more ``*.safetensors``.

    Returns:
        The model, in evaluation mode.

    Raises:
        FileNotFoundError: If the config or the weights are missing.
        ValueError: If the config cannot be expressed.
    """
    path = check_pretrained_folder(folder)
    from safetensors.torch import load_file

    hf_config = json.loads((path / "config.json").read_text())
    check_hf_config(hf_config)
    state: dict[str, torch.Tensor] = {}
    for file in sorted(path.glob("*.safetensors")):
        state.update(load_file(file))
    return from_hf_state(hf_config, state)


def _take(how: str, t: torch.Tensor, c: DecoderOnlyConfig) -> torch.Tensor:
    """Turn a Hugging Face tensor into the book's, as ``how`` says."""
    # Every branch returns new, contiguous memory: the result becomes a parameter.
    fresh = torch.contiguous_format
    if how in ("q", "k", "v"):
        # (3 d_model, ...): the fused query, key and value rows
        rows = t.T if t.dim() == 2 else t
        return rows.chunk(3, dim=0)["qkv".index(how)].clone(memory_format=fresh)
    if how == "transpose":
        return t.T.clone(memory_format=fresh)
    if how.startswith("rope"):
        return _reorder_heads(t, c, how, rope_permutation(c.d_model // c.h))
    return t.clone(memory_format=fresh)


def _give(how: str, t: torch.Tensor, c: DecoderOnlyConfig) -> torch.Tensor:
    """Turn a book tensor into the Hugging Face one, undoing :func:`_take`."""
    if how == "transpose":
        return t.T.contiguous()
    if how.startswith("rope"):
        inverse = torch.argsort(rope_permutation(c.d_model // c.h))
        return _reorder_heads(t, c, how, inverse)
    return t.clone()


def _reorder_heads(
    t: torch.Tensor, c: DecoderOnlyConfig, how: str, order: torch.Tensor
) -> torch.Tensor:
    """Reorder the rows of every head of a query or key projection."""
    heads = c.h if how == "rope_q" or c.n_kv_heads is None else c.n_kv_heads
    d_k = c.d_model // c.h
    # (heads, d_k, d_model)
    per_head = t.reshape(heads, d_k, -1)
    return per_head[:, order].reshape(heads * d_k, -1).contiguous()


def _new_hf_model(family: str, kwargs: dict[str, object]) -> nn.Module:
    """Build a randomly initialised Hugging Face model of ``family``."""
    try:
        import transformers
    except ImportError as error:
        raise ImportError(
            'to_hf needs transformers: pip install "transformers>=4.44"'
        ) from error
    names = {"gpt2": ("GPT2Config", "GPT2LMHeadModel")}
    names["llama"] = ("LlamaConfig", "LlamaForCausalLM")
    config_class, model_class = (getattr(transformers, n) for n in names[family])
    config = config_class(**kwargs, attn_implementation="eager")
    return model_class(config)
