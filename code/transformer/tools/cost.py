"""What a computation costs, counted rather than timed: FLOPs and the largest tensor.

Both counts are exact and deterministic, so a page can print them and two
builds agree. Wall-clock times depend on the machine and live in
``benchmarks/`` instead.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves


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
