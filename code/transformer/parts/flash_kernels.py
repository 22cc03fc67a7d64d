"""FlashAttention's three Triton kernels, and two small ones that teach Triton.

``write_program_ids`` and ``softmax_scores`` are the first steps of the
:doc:`/flash_attention` chapter: a kernel that only writes which program it
is, and one that computes the attention weights of a block of queries
against all the keys in one tile. ``_forward``, ``_backward_keys`` and
``_backward_queries`` are FlashAttention's forward pass and the two halves
of its backward pass.

Imported only by :func:`transformer.parts.flash_attention.flash_attention`,
the first time it runs, because ``triton.jit`` decides when a kernel is
defined whether it will run natively on a GPU or under Triton's interpreter
(``TRITON_INTERPRET=1``), which runs it on the CPU with NumPy.

Every tensor is contiguous: queries ``(B·h, L, D)``, keys and values
``(B·h_kv, S, D)``, and one float32 log-sum-exp per query ``(B·h, L)``. The
query head ``bh`` reads the key/value head ``bh // group``, with
``group = h // h_kv``. A block of ``BLOCK`` queries meets the keys
``BLOCK`` at a time; rows and columns past ``L`` or ``S`` are loaded as zeros
and masked out of the softmax.
"""

from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def write_program_ids(
    Out, L, stride_bh, stride_row, D: tl.constexpr, BLOCK: tl.constexpr
):
    # One program: one (batch, head), and one block of BLOCK rows of it.
    bh, i = tl.program_id(0), tl.program_id(1)
    rows, cols = i * BLOCK + tl.arange(0, BLOCK), tl.arange(0, D)
    # (BLOCK, D): where each number of this block lives, counted from Out
    offsets = bh * stride_bh + rows[:, None] * stride_row + cols[None, :]
    # (BLOCK, D): the program's id, pid0 · grid1 + pid1, in every number
    ids = tl.zeros((BLOCK, D), tl.int32) + bh * tl.num_programs(1) + i
    tl.store(Out + offsets, ids, mask=rows[:, None] < L)


@triton.jit
def softmax_scores(
    Q, K, P, L, S, scale,
    D: tl.constexpr, BLOCK: tl.constexpr, S_BLOCK: tl.constexpr,
):  # fmt: skip
    # One program: one block of BLOCK queries against S_BLOCK >= S keys, one head.
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    keys, cols = tl.arange(0, S_BLOCK), tl.arange(0, D)
    # (BLOCK, D) and (S_BLOCK, D): a pointer to each query and key number
    q_at = Q + rows[:, None] * D + cols[None, :]
    k_at = K + keys[:, None] * D + cols[None, :]
    # The rows past L and the keys past S are not read: they load as zeros.
    q = tl.load(q_at, mask=rows[:, None] < L, other=0.0)
    k = tl.load(k_at, mask=keys[:, None] < S, other=0.0)
    # (BLOCK, S_BLOCK); the columns past S get no weight
    scores = tl.dot(q, tl.trans(k)) * scale
    scores = tl.where(keys[None, :] < S, scores, float("-inf"))
    p = tl.exp(scores - tl.max(scores, 1)[:, None])
    p = p / tl.sum(p, 1)[:, None]
    inside = (rows[:, None] < L) & (keys[None, :] < S)
    tl.store(P + rows[:, None] * S + keys[None, :], p, mask=inside)


@triton.jit
def _forward(
    Q, K, V, Out, LSE, L, S, group, scale,
    IS_CAUSAL: tl.constexpr, D: tl.constexpr, BLOCK: tl.constexpr,
):  # fmt: skip
    # One program: one (batch, head) and one block of queries.
    bh, q0 = tl.program_id(0), tl.program_id(1) * BLOCK
    rows, cols = q0 + tl.arange(0, BLOCK), tl.arange(0, D)
    # (BLOCK, D)
    qo = (bh * L + rows[:, None]) * D + cols
    # (BLOCK, D): scaled in float32, cast back to the inputs' dtype for tl.dot
    q = tl.load(Q + qo, mask=rows[:, None] < L, other=0.0)
    q = (q.to(tl.float32) * scale).to(Q.dtype.element_ty)
    running_max = tl.full((BLOCK,), float("-inf"), tl.float32)
    running_sum = tl.zeros((BLOCK,), tl.float32)
    # (BLOCK, D)
    acc = tl.zeros((BLOCK, D), tl.float32)
    end = S
    if IS_CAUSAL:
        # Every key block from here on lies in every query's future: skipped.
        end = tl.minimum(S, q0 + BLOCK)
    for k0 in range(0, end, BLOCK):
        keys = k0 + tl.arange(0, BLOCK)
        kv = (bh // group * S + keys[:, None]) * D + cols
        # (BLOCK, D)
        k = tl.load(K + kv, mask=keys[:, None] < S, other=0.0)
        # (BLOCK, BLOCK)
        scores = tl.dot(q, tl.trans(k))
        allowed = keys[None, :] < S
        if IS_CAUSAL:
            allowed = allowed & (keys[None, :] <= rows[:, None])
        scores = tl.where(allowed, scores, float("-inf"))
        new_max = tl.maximum(running_max, tl.max(scores, 1))
        # (BLOCK, BLOCK)
        p = tl.exp(scores - new_max[:, None])
        rescale = tl.exp(running_max - new_max)
        running_sum = running_sum * rescale + tl.sum(p, 1)
        v = tl.load(V + kv, mask=keys[:, None] < S, other=0.0)
        acc = acc * rescale[:, None] + tl.dot(p.to(v.dtype), v)
        running_max = new_max
    out = acc / running_sum[:, None]
    tl.store(Out + qo, out.to(Out.dtype.element_ty), mask=rows[:, None] < L)
    # What the backward pass needs to recompute p: log Σ exp(scores), per query.
    tl.store(LSE + bh * L + rows, running_max + tl.log(running_sum), mask=rows < L)


@triton.jit
def _backward_keys(
    Q, K, V, dOut, LSE, Delta, dK, dV, L, S, group, scale,
    IS_CAUSAL: tl.constexpr, D: tl.constexpr, BLOCK: tl.constexpr,
):  # fmt: skip
    # One program: one (batch, key/value head) and one block of keys.
    bkv, k0 = tl.program_id(0), tl.program_id(1) * BLOCK
    keys, cols = k0 + tl.arange(0, BLOCK), tl.arange(0, D)
    kv = (bkv * S + keys[:, None]) * D + cols
    # (BLOCK, D)
    k = tl.load(K + kv, mask=keys[:, None] < S, other=0.0)
    v = tl.load(V + kv, mask=keys[:, None] < S, other=0.0)
    dk = tl.zeros((BLOCK, D), tl.float32)
    dv = tl.zeros((BLOCK, D), tl.float32)
    start = 0
    if IS_CAUSAL:
        # Queries before the block's first key never see it: skipped.
        start = k0
    # Every query head of the group shares these keys: their gradients add up.
    for bh in range(bkv * group, bkv * group + group):
        for q0 in range(start, L, BLOCK):
            rows = q0 + tl.arange(0, BLOCK)
            qo = (bh * L + rows[:, None]) * D + cols
            # (BLOCK, D)
            q = tl.load(Q + qo, mask=rows[:, None] < L, other=0.0)
            q = (q.to(tl.float32) * scale).to(Q.dtype.element_ty)
            do = tl.load(dOut + qo, mask=rows[:, None] < L, other=0.0)
            lse = tl.load(LSE + bh * L + rows, mask=rows < L, other=0.0)
            delta = tl.load(Delta + bh * L + rows, mask=rows < L, other=0.0)
            allowed = (rows[:, None] < L) & (keys[None, :] < S)
            if IS_CAUSAL:
                allowed = allowed & (keys[None, :] <= rows[:, None])
            # (BLOCK, BLOCK): the weights, recomputed from the saved log-sum-exp
            p = tl.where(allowed, tl.exp(tl.dot(q, tl.trans(k)) - lse[:, None]), 0.0)
            dv += tl.dot(tl.trans(p.to(do.dtype)), do)
            # dL/dscores of a softmax: p (dL/dp - Σ_j p dL/dp), and Σ_j p dL/dp = delta
            ds = p * (tl.dot(do, tl.trans(v)) - delta[:, None])
            dk += tl.dot(tl.trans(ds.to(q.dtype)), q)
    tl.store(dK + kv, dk.to(dK.dtype.element_ty), mask=keys[:, None] < S)
    tl.store(dV + kv, dv.to(dV.dtype.element_ty), mask=keys[:, None] < S)


@triton.jit
def _backward_queries(
    Q, K, V, dOut, LSE, Delta, dQ, L, S, group, scale,
    IS_CAUSAL: tl.constexpr, D: tl.constexpr, BLOCK: tl.constexpr,
):  # fmt: skip
    # One program: one (batch, head) and one block of queries, as in _forward.
    bh, q0 = tl.program_id(0), tl.program_id(1) * BLOCK
    rows, cols = q0 + tl.arange(0, BLOCK), tl.arange(0, D)
    qo = (bh * L + rows[:, None]) * D + cols
    # (BLOCK, D)
    q = tl.load(Q + qo, mask=rows[:, None] < L, other=0.0)
    q = (q.to(tl.float32) * scale).to(Q.dtype.element_ty)
    do = tl.load(dOut + qo, mask=rows[:, None] < L, other=0.0)
    lse = tl.load(LSE + bh * L + rows, mask=rows < L, other=0.0)
    delta = tl.load(Delta + bh * L + rows, mask=rows < L, other=0.0)
    dq = tl.zeros((BLOCK, D), tl.float32)
    end = S
    if IS_CAUSAL:
        end = tl.minimum(S, q0 + BLOCK)
    for k0 in range(0, end, BLOCK):
        keys = k0 + tl.arange(0, BLOCK)
        kv = (bh // group * S + keys[:, None]) * D + cols
        # (BLOCK, D)
        k = tl.load(K + kv, mask=keys[:, None] < S, other=0.0)
        v = tl.load(V + kv, mask=keys[:, None] < S, other=0.0)
        allowed = (rows[:, None] < L) & (keys[None, :] < S)
        if IS_CAUSAL:
            allowed = allowed & (keys[None, :] <= rows[:, None])
        # (BLOCK, BLOCK)
        p = tl.where(allowed, tl.exp(tl.dot(q, tl.trans(k)) - lse[:, None]), 0.0)
        ds = p * (tl.dot(do, tl.trans(v)) - delta[:, None])
        dq += tl.dot(ds.to(k.dtype), k)
    tl.store(dQ + qo, (dq * scale).to(dQ.dtype.element_ty), mask=rows[:, None] < L)
