"""The dictionary between the book's decoder and Hugging Face's GPT-2 and LLaMA.

Two translations, both plain data: a Hugging Face config (its ``config.json``
as a dict) to a :class:`~transformer.models.decoder_config.DecoderOnlyConfig`
and back, and :func:`weight_map`, which pairs each parameter of the book's
model with the Hugging Face tensor it comes from and says how: copied,
transposed (GPT-2's ``Conv1D`` stores ``(in, out)``), cut from GPT-2's fused
query-key-value matrix, or with its rows reordered (LLaMA pairs the rotary
features as halves, the book as neighbours).
"""

from __future__ import annotations

from collections.abc import Mapping

import torch

from ..checks.huggingface import GPT2_ACTIVATIONS, check_hf_config
from ..models.decoder_config import DecoderOnlyConfig

HOW = ("copy", "transpose", "q", "k", "v", "rope_q", "rope_k")
"""How a book tensor comes from its Hugging Face tensor, in :func:`weight_map`."""


def config_from_hf(hf: Mapping[str, object]) -> DecoderOnlyConfig:
    """Return the book config that computes what a GPT-2 or LLaMA config computes.

    Dropout is set to 0: a converted model is for inference (the two place
    their dropouts differently, which only training would see).

    Args:
        hf: A Hugging Face config as a dict (``config.to_dict()`` or a
            checkpoint's ``config.json``).

    Returns:
        The config.

    Raises:
        ValueError: If the config asks for anything the book's model cannot
            express (the check names the setting it refuses).
    """
    family = check_hf_config(hf)
    tied = bool(hf.get("tie_word_embeddings", True))
    common = dict(dropout=0.0, norm_first=True, scale_embeddings=False)
    common |= dict(output_bias=False, share_embeddings=tied)
    if family == "gpt2":
        d = hf["n_embd"]
        return DecoderOnlyConfig(
            vocab_size=hf["vocab_size"],
            d_model=d,
            h=hf["n_head"],
            N=hf["n_layer"],
            d_ff=hf.get("n_inner") or 4 * d,
            max_len=hf["n_positions"],
            activation=GPT2_ACTIVATIONS[hf.get("activation_function", "gelu_new")],
            positional="learned",
            norm_eps=hf.get("layer_norm_epsilon", 1e-5),
            **common,
        )
    rope = dict(hf.get("rope_parameters") or {})
    return DecoderOnlyConfig(
        vocab_size=hf["vocab_size"],
        d_model=hf["hidden_size"],
        h=hf["num_attention_heads"],
        n_kv_heads=hf.get("num_key_value_heads") or hf["num_attention_heads"],
        N=hf["num_hidden_layers"],
        d_ff=hf["intermediate_size"],
        max_len=hf["max_position_embeddings"],
        activation="swiglu",
        positional="rope",
        norm="rms",
        norm_eps=hf.get("rms_norm_eps", 1e-6),
        rope_base=float(rope.get("rope_theta", hf.get("rope_theta", 10000.0))),
        **common,
    )


def config_to_hf(config: DecoderOnlyConfig, family: str) -> dict[str, object]:
    """Return the keyword arguments of the Hugging Face config of ``family``.

    Args:
        config: A book config that ``family`` expresses.
        family: ``"gpt2"`` (for ``GPT2Config``) or ``"llama"`` (``LlamaConfig``).

    Returns:
        The keyword arguments, with no special token ids.
    """
    c, p = config, config.dropout
    tokens = dict(bos_token_id=None, eos_token_id=None, pad_token_id=None)
    common = dict(vocab_size=c.vocab_size, tie_word_embeddings=c.share_embeddings)
    if family == "gpt2":
        names = {book: hf for hf, book in GPT2_ACTIVATIONS.items()}
        return dict(
            n_embd=c.d_model,
            n_head=c.h,
            n_layer=c.N,
            n_inner=c.d_ff,
            n_positions=c.max_len,
            activation_function=names[c.activation],
            layer_norm_epsilon=c.norm_eps,
            resid_pdrop=p,
            embd_pdrop=p,
            attn_pdrop=p,
            **common,
            **tokens,
        )
    return dict(
        hidden_size=c.d_model,
        num_attention_heads=c.h,
        num_key_value_heads=c.n_kv_heads or c.h,
        num_hidden_layers=c.N,
        intermediate_size=c.d_ff,
        max_position_embeddings=c.max_len,
        rms_norm_eps=c.norm_eps,
        rope_parameters={"rope_type": "default", "rope_theta": c.rope_base},
        rope_theta=c.rope_base,
        attention_dropout=p,
        **common,
        **tokens,
    )


def weight_map(config: DecoderOnlyConfig, family: str) -> list[tuple[str, str, str]]:
    """Pair every parameter of the book's model with its Hugging Face tensor.

    Args:
        config: The book config.
        family: ``"gpt2"`` or ``"llama"``.

    Returns:
        ``(book name, Hugging Face name, how)`` for every entry of the book
        model's ``state_dict``; ``how`` is one of :data:`HOW`.
    """
    gpt2 = family == "gpt2"
    pre = "transformer." if gpt2 else "model."
    rows = [("embed.weight", pre + ("wte.weight" if gpt2 else "embed_tokens.weight"))]
    if gpt2:
        rows.append(("positional.weight", pre + "wpe.weight"))
    norms = ("weight", "bias") if gpt2 else ("weight",)
    for i in range(config.N):
        theirs = f"{pre}h.{i}." if gpt2 else f"{pre}layers.{i}."
        rows += _layer_rows(f"stack.layers.{i}.", theirs, gpt2, norms)
    final = pre + ("ln_f." if gpt2 else "norm.")
    rows += [(f"stack.norm.{n}", final + n) for n in norms]
    rows.append(("out_proj.weight", "lm_head.weight"))
    return [(r[0], r[1], r[2] if len(r) == 3 else "copy") for r in rows]


def _layer_rows(ours: str, theirs: str, gpt2: bool, norms: tuple[str, ...]) -> list:
    attn, ffn = ours + "self_attn.", ours + "feed_forward."
    if gpt2:
        fused = theirs + "attn.c_attn."
        rows = [(f"{attn}w_{x}.{n}", fused + n, x) for x in "qkv" for n in norms]
        rows += [(attn + "w_o.weight", theirs + "attn.c_proj.weight", "transpose")]
        rows += [(attn + "w_o.bias", theirs + "attn.c_proj.bias")]
        for book, hf in (("w_1", "c_fc"), ("w_2", "c_proj")):
            rows += [(f"{ffn}{book}.weight", f"{theirs}mlp.{hf}.weight", "transpose")]
            rows += [(f"{ffn}{book}.bias", f"{theirs}mlp.{hf}.bias")]
        norm1, norm2 = theirs + "ln_1.", theirs + "ln_2."
    else:
        proj = theirs + "self_attn."
        rows = [(attn + "w_q.weight", proj + "q_proj.weight", "rope_q")]
        rows += [(attn + "w_k.weight", proj + "k_proj.weight", "rope_k")]
        rows += [(attn + "w_v.weight", proj + "v_proj.weight")]
        rows += [(attn + "w_o.weight", proj + "o_proj.weight")]
        for book, hf in (("w_gate", "gate"), ("w_up", "up"), ("w_down", "down")):
            rows += [(f"{ffn}{book}.weight", f"{theirs}mlp.{hf}_proj.weight")]
        norm1, norm2 = theirs + "input_layernorm.", theirs + "post_attention_layernorm."
    rows += [(f"{ours}add_norm1.norm.{n}", norm1 + n) for n in norms]
    rows += [(f"{ours}add_norm2.norm.{n}", norm2 + n) for n in norms]
    return rows


def rope_permutation(d_k: int) -> torch.Tensor:
    """Return the order of a head's rows that turns LLaMA's rotary pairing into ours.

    LLaMA turns feature ``i`` with feature ``i + d_k/2`` (``rotate_half``); the
    book turns ``2i`` with ``2i + 1``, by the same angle. Row ``2i`` of the
    book's ``w_q`` (or ``w_k``) is row ``i`` of LLaMA's, row ``2i + 1`` is row
    ``i + d_k/2``. The same reordering of queries and keys leaves their dot
    products, and so attention, unchanged.

    Args:
        d_k: The width of one head; even.

    Returns:
        ``perm`` such that ``ours = theirs[perm]`` within a head.

    Shape:
        - output: ``(d_k,)``
    """
    half = torch.arange(d_k // 2)
    # (d_k,): 0, d_k/2, 1, d_k/2 + 1, ...
    return torch.stack((half, half + d_k // 2), dim=1).flatten()
