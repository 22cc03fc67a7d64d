"""Convert modules to and from PyTorch's own, with the same weights.

The pairs:

* :class:`~transformer.parts.multihead.MultiHeadAttention` and
  ``nn.MultiheadAttention``;
* :class:`~transformer.models.layers.EncoderLayer` and ``nn.TransformerEncoderLayer``;
* :class:`~transformer.models.layers.DecoderLayer` and ``nn.TransformerDecoderLayer``;
* :class:`~transformer.models.stacks.Encoder` and ``nn.TransformerEncoder``;
* :class:`~transformer.models.stacks.Decoder` and ``nn.TransformerDecoder``.

Given the same weights and the same input, a converted pair computes the same
output, up to floating-point rounding; the tests check this. PyTorch's
modules built here are batch first, and their stacks do not use nested
tensors. Masks are the one thing that does not carry over unchanged: see
:func:`to_torch_mask`.
"""

from __future__ import annotations

from collections.abc import Iterator

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..models.layers import DecoderLayer, EncoderLayer
from ..models.stacks import Decoder, Encoder
from ..parts.multihead import MultiHeadAttention
from ..parts.norm import LayerNorm

Pairs = Iterator[tuple[torch.Tensor, torch.Tensor]]

_OURS: dict[type[nn.Module], type[nn.Module]] = {
    nn.TransformerEncoderLayer: EncoderLayer,
    nn.TransformerDecoderLayer: DecoderLayer,
    nn.TransformerEncoder: Encoder,
    nn.TransformerDecoder: Decoder,
}


def to_torch_mask(mask: torch.Tensor) -> torch.Tensor:
    """Translate one of our masks into a PyTorch boolean mask, by flipping it.

    The two conventions are opposite. Here ``True`` means *may attend*;
    in ``nn.MultiheadAttention`` and the ``nn.Transformer*`` modules, a
    boolean ``attn_mask``, ``key_padding_mask``, ``tgt_mask`` or
    ``memory_key_padding_mask`` means *blocked* where it is ``True``. So the
    translation is ``~mask``, and it is its own inverse: calling this on a
    PyTorch mask gives ours back.

    The shape is kept. PyTorch wants an ``attn_mask`` of shape ``(L, S)`` or
    ``(B * h, L, S)`` and a key-padding mask of shape ``(B, S)``, so a
    ``(B, 1, 1, S)`` padding mask from :func:`~transformer.parts.masks.padding_mask`
    becomes ``to_torch_mask(mask[:, 0, 0])``. A query that may attend to
    nothing gets zeros here; in PyTorch, NaN or zeros, by module and version.

    Args:
        mask: A boolean mask, ``True`` = may attend.

    Returns:
        The PyTorch mask, ``True`` = blocked.

    Shape:
        - mask: any
        - output: same as ``mask``

    Raises:
        TypeError: If ``mask`` is not a boolean tensor.
    """
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
        kind = mask.dtype if isinstance(mask, torch.Tensor) else type(mask).__name__
        raise TypeError(
            f"mask must be a boolean torch.Tensor (True = may attend), got {kind}"
        )
    return ~mask


def from_torch(module: nn.Module) -> nn.Module:
    """Build this package's equivalent of a PyTorch module, copying its weights.

    Args:
        module: An ``nn.MultiheadAttention``, ``nn.TransformerEncoderLayer``,
            ``nn.TransformerDecoderLayer``, ``nn.TransformerEncoder`` or
            ``nn.TransformerDecoder``.

    Returns:
        This package's equivalent module, on the same device, with the same
        dtype and training mode. It is batch first, whatever
        ``module.batch_first`` says: only the weights are taken from ``module``.

    Raises:
        TypeError: If there is no equivalent for ``module``'s type.
        ValueError: If ``module`` uses an option this package lacks (separate
            key/value widths, extra key/value biases, a custom activation,
            layers without biases, or stacks whose layers differ).
    """
    if isinstance(module, nn.MultiheadAttention):
        _check_torch_attention(module)
        ours = MultiHeadAttention(
            module.embed_dim,
            module.num_heads,
            dropout=module.dropout,
            bias=module.in_proj_bias is not None,
        )
    elif isinstance(module, (nn.TransformerEncoderLayer, nn.TransformerDecoderLayer)):
        sizes, options = _torch_layer_args(module)
        ours = _OURS[type(module)](*sizes, **options)
    elif isinstance(module, (nn.TransformerEncoder, nn.TransformerDecoder)):
        sizes, options = _torch_layer_args(module.layers[0])
        _check_torch_final_norm(module.norm, options["eps"])
        N, final_norm = len(module.layers), module.norm is not None
        ours = _OURS[type(module)](*sizes, N, final_norm=final_norm, **options)
    else:
        raise TypeError(
            "module must be an nn.MultiheadAttention, nn.TransformerEncoderLayer, "
            "nn.TransformerDecoderLayer, nn.TransformerEncoder or "
            f"nn.TransformerDecoder, got {type(module).__name__}"
        )
    reference = next(module.parameters())
    ours = ours.to(device=reference.device, dtype=reference.dtype).train(
        module.training
    )
    _copy(_pairs(ours, module), to_torch=False)
    return ours


def to_torch(module: nn.Module) -> nn.Module:
    """Build PyTorch's equivalent of one of this package's modules, copying its weights.

    Args:
        module: A :class:`~transformer.parts.multihead.MultiHeadAttention`,
            :class:`~transformer.models.layers.EncoderLayer`,
            :class:`~transformer.models.layers.DecoderLayer`,
            :class:`~transformer.models.stacks.Encoder` or
            :class:`~transformer.models.stacks.Decoder`.

    Returns:
        The equivalent PyTorch module, batch first, on the same
        device, with the same dtype and training mode. Stacks are built with
        ``enable_nested_tensor=False`` so that padded positions are computed
        rather than zeroed.

    Raises:
        TypeError: If there is no equivalent for ``module``'s type.
    """
    if not isinstance(
        module, (MultiHeadAttention, EncoderLayer, DecoderLayer, Encoder, Decoder)
    ):
        raise TypeError(
            "module must be a MultiHeadAttention, EncoderLayer, DecoderLayer, "
            f"Encoder or Decoder, got {type(module).__name__}"
        )
    reference = next(module.parameters())
    factory = {"device": reference.device, "dtype": reference.dtype}
    if isinstance(module, MultiHeadAttention):
        theirs: nn.Module = nn.MultiheadAttention(
            module.d_model,
            module.h,
            module.dropout,
            bias=module.w_q.bias is not None,
            batch_first=True,
            **factory,
        )
    elif isinstance(module, (EncoderLayer, DecoderLayer)):
        theirs = _torch_layer(module, factory)
    else:
        layer = _torch_layer(module.layers[0], factory)
        norm = None
        if not isinstance(module.norm, nn.Identity):
            norm = nn.LayerNorm(module.norm.d_model, module.norm.eps, **factory)
        if isinstance(module, Encoder):
            theirs = nn.TransformerEncoder(
                layer, len(module.layers), norm=norm, enable_nested_tensor=False
            )
        else:
            theirs = nn.TransformerDecoder(layer, len(module.layers), norm=norm)
    theirs.train(module.training)
    _copy(_pairs(module, theirs), to_torch=True)
    return theirs


def _check_torch_attention(module: nn.MultiheadAttention) -> None:
    """Reject the ``nn.MultiheadAttention`` options that have no equivalent here."""
    if not module._qkv_same_embed_dim:
        raise ValueError(
            "module must have kdim == vdim == embed_dim; separate key/value widths "
            f"are not supported, got kdim={module.kdim}, vdim={module.vdim}, "
            f"embed_dim={module.embed_dim}"
        )
    if module.bias_k is not None or module.add_zero_attn:
        raise ValueError("module must not use add_bias_kv or add_zero_attn")


def _check_torch_final_norm(norm: nn.Module | None, eps: float) -> None:
    """Reject a stack's final norm unless it is a ``LayerNorm`` like the layers'."""
    if norm is None:
        return
    if not isinstance(norm, nn.LayerNorm) or norm.bias is None or norm.eps != eps:
        raise ValueError(
            f"module.norm must be None or an nn.LayerNorm with a bias and eps={eps} "
            "as in "
            f"the layers, got {norm!r}"
        )


def _activation_name(module: nn.Module) -> str:
    """Return ``"relu"`` or ``"gelu"`` for a PyTorch layer's activation."""
    act = module.activation
    if act is F.relu or isinstance(act, nn.ReLU):
        return "relu"
    if act is F.gelu or (isinstance(act, nn.GELU) and act.approximate == "none"):
        return "gelu"
    raise ValueError(f"module.activation must be relu or exact gelu, got {act!r}")


def _torch_layer_args(module: nn.Module) -> tuple[tuple, dict]:
    """Read ``(d_model, h, d_ff)`` and the options of our layer off a torch layer."""
    attn = module.self_attn
    _check_torch_attention(attn)
    biases = (attn.in_proj_bias, module.linear1.bias, module.norm1.bias)
    if any(b is None for b in biases):
        raise ValueError(
            "module must have biases (bias=True); layers without them are not supported"
        )
    sizes = (attn.embed_dim, attn.num_heads, module.linear1.out_features)
    options = {
        "dropout": module.dropout.p,
        "activation": _activation_name(module),
        "norm_first": module.norm_first,
        "eps": module.norm1.eps,
    }
    return sizes, options


def _torch_layer(layer: EncoderLayer | DecoderLayer, factory: dict) -> nn.Module:
    """Build an empty PyTorch layer with the sizes of one of ours."""
    attn, ff = layer.self_attn, layer.feed_forward
    theirs = {EncoderLayer: nn.TransformerEncoderLayer}
    return theirs.get(type(layer), nn.TransformerDecoderLayer)(
        attn.d_model,
        attn.h,
        ff.d_ff,
        attn.dropout,
        ff.activation_name,
        layer_norm_eps=layer.add_norm1.norm.eps,
        batch_first=True,
        norm_first=layer.add_norm1.norm_first,
        **factory,
    )


def _pairs(ours: nn.Module, theirs: nn.Module) -> Pairs:
    """Yield ``(ours, theirs)`` for every parameter tensor the two modules share."""
    if isinstance(ours, MultiHeadAttention):
        d = ours.d_model
        for i, proj in enumerate((ours.w_q, ours.w_k, ours.w_v)):
            yield proj.weight, theirs.in_proj_weight[i * d : (i + 1) * d]
            if proj.bias is not None:
                yield proj.bias, theirs.in_proj_bias[i * d : (i + 1) * d]
        yield from _linear_pairs(ours.w_o, theirs.out_proj)
    elif isinstance(ours, LayerNorm):
        yield ours.weight, theirs.weight
        yield ours.bias, theirs.bias
    elif isinstance(ours, (EncoderLayer, DecoderLayer)):
        yield from _pairs(ours.self_attn, theirs.self_attn)
        if isinstance(ours, DecoderLayer):
            yield from _pairs(ours.cross_attn, theirs.multihead_attn)
            yield from _pairs(ours.add_norm3.norm, theirs.norm3)
        yield from _linear_pairs(ours.feed_forward.w_1, theirs.linear1)
        yield from _linear_pairs(ours.feed_forward.w_2, theirs.linear2)
        yield from _pairs(ours.add_norm1.norm, theirs.norm1)
        yield from _pairs(ours.add_norm2.norm, theirs.norm2)
    elif isinstance(ours, (Encoder, Decoder)):
        for our_layer, their_layer in zip(ours.layers, theirs.layers, strict=True):
            yield from _pairs(our_layer, their_layer)
        if not isinstance(ours.norm, nn.Identity):
            yield from _pairs(ours.norm, theirs.norm)


def _linear_pairs(ours: nn.Linear, theirs: nn.Linear) -> Pairs:
    """Yield the weight and (if any) bias of two linear maps."""
    yield ours.weight, theirs.weight
    if ours.bias is not None:
        yield ours.bias, theirs.bias


def _copy(pairs: Pairs, *, to_torch: bool) -> None:
    """Copy every pair in one direction, after checking that the shapes agree."""
    with torch.no_grad():
        for ours, theirs in pairs:
            if ours.shape != theirs.shape:
                raise ValueError(
                    "module's layers must all have the same sizes: a parameter of "
                    f"shape {tuple(theirs.shape)} cannot be copied into one of "
                    f"shape {tuple(ours.shape)}"
                )
            target, source = (theirs, ours) if to_torch else (ours, theirs)
            target.copy_(source)
