"""Checks of the Hugging Face interop: what the book's decoder can express or not.

A GPT-2 or LLaMA checkpoint loads into a
:class:`~transformer.models.decoder_only.DecoderOnlyTransformer` only when the
book's model computes exactly what the checkpoint's does. Every setting it
cannot express raises here, with its name and value, before any weight is
copied: a conversion is exact or it does not happen.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

FAMILIES = {"GPT2LMHeadModel": "gpt2", "LlamaForCausalLM": "llama"}
"""The Hugging Face model classes the interop reads and writes, and their family."""

GPT2_ACTIVATIONS = {"gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh"}
GPT2_ACTIVATIONS |= {"gelu": "gelu", "relu": "relu"}
"""GPT-2's ``activation_function`` names and the book's ``activation`` for each."""

NEEDS = {
    "gpt2": {
        "positional": "learned",
        "norm": "layer",
        "norm_first": True,
        "grouped": False,
        "scale_embeddings": False,
        "output_bias": False,
    },
    "llama": {
        "positional": "rope",
        "norm": "rms",
        "norm_first": True,
        "activation": "swiglu",
        "scale_embeddings": False,
        "output_bias": False,
    },
}
"""What a book config must hold for each family to express it."""


def check_hf_model(model: object) -> str:
    """Check that ``model`` is a ``GPT2LMHeadModel`` or ``LlamaForCausalLM``.

    Returns:
        The family, ``"gpt2"`` or ``"llama"``.

    Raises:
        TypeError: If ``model`` is of another class.
    """
    name = type(model).__name__
    if name not in FAMILIES:
        raise TypeError(
            f"model must be a transformers GPT2LMHeadModel or LlamaForCausalLM, "
            f"got {name}"
        )
    return FAMILIES[name]


def check_hf_config(config: Mapping[str, object]) -> str:
    """Check that a Hugging Face config (as a dict) is one the book's model computes.

    Args:
        config: The ``config.json`` of a GPT-2 or LLaMA checkpoint, as a dict.

    Returns:
        The family, ``"gpt2"`` or ``"llama"``.

    Raises:
        ValueError: Naming the setting, if the model type is neither, or the
            config asks for what the book's decoder does not compute: rope
            scaling, ``head_dim`` other than ``hidden_size /
            num_attention_heads``, attention or MLP biases in LLaMA, another
            activation, or GPT-2's cross-attention or attention-scale variants.
    """
    family = config.get("model_type")
    if family == "gpt2":
        _check_gpt2(config)
    elif family == "llama":
        _check_llama(config)
    else:
        raise ValueError(f"model_type must be 'gpt2' or 'llama', got {family!r}")
    return family


def _refuse(setting: str, value: object, why: str) -> None:
    raise ValueError(
        f"the book's decoder cannot express {setting}={value!r}: {why}; "
        "converting would only approximate the checkpoint"
    )


def _check_gpt2(c: Mapping[str, object]) -> None:
    act = c.get("activation_function", "gelu_new")
    if act not in GPT2_ACTIVATIONS:
        _refuse("activation_function", act, f"it knows {sorted(GPT2_ACTIVATIONS)}")
    if c.get("add_cross_attention"):
        _refuse("add_cross_attention", True, "it has no cross-attention")
    if not c.get("scale_attn_weights", True):
        _refuse("scale_attn_weights", False, "its scores are divided by sqrt(d_k)")
    if c.get("scale_attn_by_inverse_layer_idx"):
        _refuse("scale_attn_by_inverse_layer_idx", True, "every layer scales alike")


def _check_llama(c: Mapping[str, object]) -> None:
    act = c.get("hidden_act", "silu")
    if act != "silu":
        _refuse("hidden_act", act, "its gated network is SwiGLU (silu)")
    for bias in ("attention_bias", "mlp_bias"):
        if c.get(bias):
            _refuse(bias, True, "its LLaMA-style layers have no biases")
    rope = dict(c.get("rope_parameters") or {})
    kind = rope.get("rope_type", rope.get("type", "default"))
    if c.get("rope_scaling") or kind != "default":
        # name the setting the config used: older configs, or transformers 5's
        setting = "rope_scaling" if c.get("rope_scaling") else "rope_parameters"
        _refuse(setting, c.get(setting), "its rotary angles are m * base^(-2i/d_k)")
    d, h = c["hidden_size"], c["num_attention_heads"]
    head_dim = c.get("head_dim") or d // h
    if head_dim * h != d:
        _refuse("head_dim", head_dim, f"its heads are hidden_size / heads = {d / h:g}")


def check_hf_expressible(model: object) -> str:
    """Check that a family of Hugging Face can express a book model exactly.

    Args:
        model: A :class:`~transformer.models.decoder_only.DecoderOnlyTransformer`.

    Returns:
        The family, ``"gpt2"`` or ``"llama"``.

    Raises:
        TypeError: If ``model`` is not a ``DecoderOnlyTransformer``.
        ValueError: If neither family can, naming the options that the
            nearer family would need changed.
    """
    if type(model).__name__ != "DecoderOnlyTransformer":
        raise TypeError(
            f"model must be a DecoderOnlyTransformer, got {type(model).__name__}"
        )
    config, wrong = model.config, {}
    for family, needs in NEEDS.items():
        wrong[family] = [
            f"{name}={want!r} (the model has {getattr(config, name)!r})"
            for name, want in needs.items()
            if getattr(config, name) != want
        ]
        if family == "gpt2" and config.activation not in GPT2_ACTIVATIONS.values():
            wrong[family].append(
                f"activation in gelu_tanh, gelu, relu "
                f"(the model has {config.activation!r})"
            )
        if not wrong[family]:
            return family
    near = min(wrong, key=lambda f: len(wrong[f]))
    name = {"gpt2": "GPT-2", "llama": "LLaMA"}[near]
    raise ValueError(
        f"no Hugging Face family expresses this model exactly; the nearest, "
        f"{name}, needs " + ", ".join(wrong[near])
    )


def check_pretrained_folder(folder: object) -> Path:
    """Check that ``folder`` holds a ``config.json`` and ``*.safetensors`` files.

    Returns:
        The folder as a ``Path``.

    Raises:
        TypeError: If ``folder`` is not a string or path.
        FileNotFoundError: If the folder, its config or its weights are missing.
    """
    if not isinstance(folder, (str, Path)):
        raise TypeError(f"folder must be a str or Path, got {type(folder).__name__}")
    path = Path(folder)
    if not (path / "config.json").is_file():
        raise FileNotFoundError(f"folder {str(path)!r} has no config.json")
    if not any(path.glob("*.safetensors")):
        raise FileNotFoundError(f"folder {str(path)!r} has no *.safetensors file")
    return path
