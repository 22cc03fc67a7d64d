"""What a computation costs, counted rather than timed: FLOPs and memory.

FLOPs, the largest tensor, and the bytes autograd keeps for the backward
pass. Every count is exact and deterministic, so a page can print them and two
builds agree. This module does not time: wall-clock times depend on the
machine; :mod:`transformer.training.timing` measures the few ratios the pages
quote (in their text, never in a printed output), and ``benchmarks/`` the rest.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from ..checks.inspection import check_kept_options


def _fused_attention_flops(query_shape, key_shape, value_shape, *args, **kwargs) -> int:
    """Two matrix products per query and key: ``Q Kᵀ`` and ``weights V``."""
    *batch, L, d_k = query_shape
    S, d_v = key_shape[-2], value_shape[-1]
    return 2 * L * S * (d_k + d_v) * torch.Size(batch).numel()


def _fused_attention_backward_flops(
    grad_out_shape, query_shape, key_shape, value_shape, *args, **kwargs
) -> int:
    """Four matrix products of the forward's sizes: the two products' gradients."""
    return 2 * _fused_attention_flops(query_shape, key_shape, value_shape)


# PyTorch counts its fused attention kernels on GPU; on CPU, teach it the CPU kernel.
_CPU_ATTENTION_FLOPS = {
    torch.ops.aten._scaled_dot_product_flash_attention_for_cpu: _fused_attention_flops,
    torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward: (
        _fused_attention_backward_flops
    ),
}


def count_flops(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> int:
    """Return the floating-point operations of ``fn(*args, **kwargs)``, as torch counts.

    Uses ``torch.utils.flop_counter.FlopCounterMode``, which counts the
    matrix products (a multiply-add is two operations) and the fused
    attention kernels, on CPU as on GPU; element-wise operations such as the
    softmax are not counted, because the matrix products dominate.

    Args:
        fn: The computation, e.g. a model or ``lambda: model(x)``.
        *args: Positional arguments of ``fn``.
        **kwargs: Keyword arguments of ``fn``.

    Returns:
        The total count.

    Raises:
        TypeError: If ``fn`` is not callable.
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    # Imported here, not with the package: it imports triton, which must wait
    # until flash_attention knows whether to run it under the interpreter.
    from torch.utils.flop_counter import FlopCounterMode

    counter = FlopCounterMode(display=False, custom_mapping=_CPU_ATTENTION_FLOPS)
    with counter:
        fn(*args, **kwargs)
    return counter.get_total_flops()


@dataclass(frozen=True)
class LargestTensor:
    """The largest tensor an operation produced during a computation.

    Attributes:
        numel: Its number of elements.
        nbytes: Its size in bytes.
        shape: Its shape.
        op: The name of the operation that produced it, e.g. ``"aten.bmm"``.
    """

    numel: int
    nbytes: int
    shape: tuple[int, ...]
    op: str


class _SizeRecorder(TorchDispatchMode):
    """Watch every operation PyTorch dispatches and keep its largest output."""

    def __init__(self) -> None:
        super().__init__()
        self.largest = LargestTensor(0, 0, (), "")

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
        out = func(*args, **(kwargs or {}))
        for t in tree_leaves(out):
            if isinstance(t, torch.Tensor) and t.numel() > self.largest.numel:
                name = str(func.overloadpacket)
                self.largest = LargestTensor(
                    t.numel(), t.numel() * t.element_size(), tuple(t.shape), name
                )
        return out


def largest_tensor(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> LargestTensor:
    """Run ``fn(*args, **kwargs)`` and return the largest tensor any of its ops made.

    Every operation that PyTorch dispatches is watched (a
    ``TorchDispatchMode``), so the answer covers intermediate tensors that
    the code never names, and nothing is sampled or estimated. Views count
    with the size they show. The inputs themselves are not counted unless
    an operation creates them.

    Args:
        fn: The computation.
        *args: Positional arguments of ``fn``.
        **kwargs: Keyword arguments of ``fn``.

    Returns:
        The largest output of any operation.

    Raises:
        TypeError: If ``fn`` is not callable.
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    with _SizeRecorder() as recorder:
        fn(*args, **kwargs)
    return recorder.largest


def kept_for_backward(
    attend: Callable[..., Any], L: int = 256, d: int = 64, **options: Any
) -> int:
    """Return the bytes autograd keeps for the backward pass of one attention call.

    Runs ``attend(q, k, v, **options)`` on random float32 tensors of shape
    ``(1, 1, L, d)`` that require gradients, inside
    ``torch.autograd.graph.saved_tensors_hooks``, and adds up every storage
    that autograd saves, once however many views share it, leaving out
    ``q``, ``k`` and ``v`` themselves, which every method keeps.

    Args:
        attend: The attention, called as ``attend(q, k, v, **options)``.
        L: Number of queries and of keys.
        d: Width of each query, key and value.
        **options: Keyword arguments of ``attend``, e.g. ``block_size``.

    Returns:
        The bytes kept, besides the inputs.

    Raises:
        TypeError: If ``attend`` is not callable, or ``L`` or ``d`` not an int.
        ValueError: If ``L`` or ``d`` is not positive.
    """
    check_kept_options(attend, L, d)
    q, k, v = (torch.randn(1, 1, L, d, requires_grad=True) for _ in range(3))
    inputs = {t.untyped_storage().data_ptr() for t in (q, k, v)}
    kept = {}  # storage address -> bytes, so that views count once

    def pack(t: torch.Tensor) -> torch.Tensor:
        storage = t.untyped_storage()
        if storage.data_ptr() not in inputs:
            kept[storage.data_ptr()] = storage.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        attend(q, k, v, **options)
    return sum(kept.values())
