"""FlashAttention in Triton: the loop of ``tiled_attention`` as one GPU kernel.

The kernels are in :mod:`transformer.parts.flash_kernels`. Triton is imported
the first time :func:`flash_attention` runs, not with the package: on a CPU
the kernels run under Triton's interpreter, which must be switched on
(``TRITON_INTERPRET=1``) before they are defined.
"""

from __future__ import annotations

import math
import os
import sys
from types import ModuleType

import torch

from ..checks.attention import check_flash_attention
from ..checks.contract import entry


@entry
def flash_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    *,
    is_causal: bool = False,
    block_size: int = 64,
) -> torch.Tensor:
    """Compute softmax(Q Kᵀ / √d_k) V with FlashAttention's Triton kernels.

    The forward kernel runs one program per batch entry, head and block of
    ``block_size`` queries, and walks over the keys ``block_size`` at a time
    with the running maximum, running sum and rescaled accumulator of
    :func:`~transformer.parts.tiled_attention.tiled_attention`; it keeps only
    the output and one log-sum-exp per query. The backward kernels recompute
    the weights tile by tile from that log-sum-exp. Each query head ``i``
    attends with the key/value head ``i // (h // h_kv)``, as grouped-query
    attention does. On a CPU the kernels run under Triton's interpreter
    (slow, for tests and the book); on a CUDA GPU, natively.

    Args:
        query: Queries.
        key: Keys, ``h_kv`` heads of them; ``h_kv`` divides ``h``.
        value: Values, one per key.
        is_causal: Let query ``i`` attend to keys ``j <= i`` only (aligned at
            the top left when ``L != S``, as PyTorch does). Key blocks wholly
            in a query block's future are skipped.
        block_size: Rows of queries and of keys per tile: a power of two, at
            least 16.

    Returns:
        The output, in the inputs' dtype.

    Shape:
        - query: ``(B, h, L, d)``, ``d`` in 16, 32, 64, 128
        - key: ``(B, h_kv, S, d)``
        - value: ``(B, h_kv, S, d)``
        - output: ``(B, h, L, d)``

    Raises:
        TypeError: If an input is not a tensor, the dtypes differ or are not
            float32, float16 or bfloat16, or ``is_causal`` is not a bool.
        ValueError: If the shapes do not fit, ``d`` or ``block_size`` is not
            supported, or the inputs are not on the CPU or a CUDA GPU.
        RuntimeError: If Triton was set up for the other kind of device
            earlier in this process: start a new one.
    """
    check_flash_attention(query, key, value, is_causal, block_size)
    return _FlashAttention.apply(query, key, value, is_causal, block_size)


def _triton_kernels(device: torch.device) -> ModuleType:
    """Import the Triton kernels, under the interpreter when ``device`` is a CPU.

    ``triton.jit`` reads ``TRITON_INTERPRET`` when a kernel is defined, Triton's
    own helpers included, so the first import of triton in a process decides.
    If triton is not imported yet, CPU tensors set ``TRITON_INTERPRET=1``.

    Args:
        device: Where the tensors are.

    Returns:
        The module :mod:`transformer.parts.flash_kernels`.

    Raises:
        RuntimeError: If triton was imported for the other kind of device:
            start a new process, with ``TRITON_INTERPRET=1`` set for the CPU
            and unset for a GPU.
    """
    if device.type == "cpu" and "triton" not in sys.modules:
        os.environ["TRITON_INTERPRET"] = "1"
    from . import flash_kernels

    # Triton's own helpers (tl.zeros, tl.max) were defined when triton was imported.
    interpreted = type(flash_kernels.tl.zeros).__name__ == "InterpretedFunction"
    if (device.type == "cpu") != interpreted:
        raise RuntimeError(
            f"flash_attention got {device.type} tensors, but triton was imported "
            f"{'for a GPU' if device.type == 'cpu' else 'under its interpreter'} "
            "earlier in this process: run it in a new process, with "
            "TRITON_INTERPRET=1 set before triton is imported for CPU tensors, "
            "and unset for CUDA tensors"
        )
    return flash_kernels


def _launch(kernel, grid, *tensors, lengths, group, scale, is_causal, block_size):
    """Run one kernel on contiguous tensors; ``lengths`` are ``(L, S)``."""
    kernel[grid](
        *tensors, *lengths, group, scale,
        IS_CAUSAL=is_causal, D=tensors[0].shape[-1], BLOCK=block_size,
    )  # fmt: skip


class _FlashAttention(torch.autograd.Function):
    """The forward and backward kernels, for autograd. Tensors are ``(B, h, L, d)``."""

    @staticmethod
    def forward(ctx, query, key, value, is_causal, block_size):
        kernels = _triton_kernels(query.device)
        query, key, value = (t.contiguous() for t in (query, key, value))
        B, h, L, d = query.shape
        h_kv, S = key.shape[1], key.shape[2]
        out = torch.empty_like(query)
        # (B, h, L): log Σ_j exp(score_ij), all the backward pass keeps of the weights
        lse = query.new_empty((B, h, L), dtype=torch.float32)
        options = dict(
            lengths=(L, S), group=h // h_kv, scale=1.0 / math.sqrt(d),
            is_causal=is_causal, block_size=block_size,
        )  # fmt: skip
        grid = (B * h, math.ceil(L / block_size))
        _launch(kernels._forward, grid, query, key, value, out, lse, **options)
        ctx.save_for_backward(query, key, value, out, lse)
        ctx.options = options
        return out

    @staticmethod
    def backward(ctx, grad_out):
        query, key, value, out, lse = ctx.saved_tensors
        kernels = _triton_kernels(query.device)
        grad_out = grad_out.contiguous()
        # (B, h, L): Σ_j p_ij dL/dp_ij = Σ_d dL/dout · out, one number per query
        delta = (grad_out.float() * out.float()).sum(dim=-1)
        dq, dk, dv = (torch.empty_like(t) for t in (query, key, value))
        (B, h, L, _), (h_kv, S) = query.shape, key.shape[1:3]
        block = ctx.options["block_size"]
        common = (query, key, value, grad_out, lse, delta)
        grid = (B * h_kv, math.ceil(S / block))
        _launch(kernels._backward_keys, grid, *common, dk, dv, **ctx.options)
        grid = (B * h, math.ceil(L / block))
        _launch(kernels._backward_queries, grid, *common, dq, **ctx.options)
        return dq, dk, dv, None, None
