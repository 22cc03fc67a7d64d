"""When the checks run: once per outermost call, or not at all.

Most routines that call, or are called by, other checked routines (the
``forward`` of the models and their parts, the attention functions and
``generate``) are marked with ``@entry`` and start with one call to their
check, a function marked with ``@contract``; smaller public functions call
a plain check function, which runs on every call. Only the first
``@contract`` check in an outermost call runs (:func:`entry` says why).
:func:`set_checks` turns every
``@contract`` check off (plain checks still run), to skip them once a model
is known to be called correctly;
``benchmarks/README.md`` measures what they cost, which is little.
:func:`trace_checks` records which entries a call runs and which checks run.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


class _CheckState(threading.local):
    """Per-thread state: are checks on, how deep in entries, and already checked?"""

    enabled = True
    depth = 0
    checked = False
    trace: list[str] | None = None


_state = _CheckState()


def set_checks(enabled: bool) -> bool:
    """Turn the ``@contract`` input checks on or off; return the previous setting.

    The plain checks of small functions, such as ``causal_mask``'s, always run.

    With checks off, bad input is no longer caught early: it fails inside
    PyTorch, or not at all. Turn them off only for code already known to be
    called correctly, e.g. a long training run.

    Args:
        enabled: ``True`` to check inputs (the default), ``False`` to skip.

    Returns:
        Whether checks were on before the call.

    Raises:
        TypeError: If ``enabled`` is not a bool.
    """
    if not isinstance(enabled, bool):
        raise TypeError(f"enabled must be a bool, got {type(enabled).__name__}")
    previous, _state.enabled = _state.enabled, enabled
    return previous


@contextmanager
def no_checks() -> Iterator[None]:
    """Turn the ``@contract`` checks off inside a ``with`` block.

    See :func:`set_checks`; plain checks still run.
    """
    previous = set_checks(False)
    try:
        yield
    finally:
        set_checks(previous)


@contextmanager
def trace_checks() -> Iterator[list[str]]:
    """Record, inside a ``with`` block, every entry called and what its check did.

    Each line of the list it yields is one event, indented by the call's
    depth in entries: an entry starting (its qualified name), or a check
    that ran (``<check> runs``) or was skipped (``<check> skipped``). The list
    is filled as the block runs, in the thread that opened it.
    """
    previous, _state.trace = _state.trace, []
    try:
        yield _state.trace
    finally:
        _state.trace = previous


def _record(event: str, depth: int) -> None:
    """Add one line to the list of :func:`trace_checks`, if one is open."""
    if _state.trace is not None:
        _state.trace.append("  " * depth + event)


def entry(function: Callable[P, R]) -> Callable[P, R]:
    """Mark a public entry point: one ``@contract`` check runs per outermost call.

    The first check called inside the outermost entry runs, usually that
    entry's own, and marks the call checked; every later check in it, such
    as those of a model's layers, is skipped, because its input comes from
    checked code. An entry without a check leaves its input to
    the first check that runs; the mark is cleared when the call returns.
    """

    @functools.wraps(function)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        _state.depth += 1
        _record(function.__qualname__, _state.depth - 1)
        try:
            return function(*args, **kwargs)
        finally:
            _state.depth -= 1
            if _state.depth == 0:
                _state.checked = False

    return call


def contract(check: Callable[P, None]) -> Callable[P, None]:
    """Mark an entry's check: only the first in an outermost call runs, unless off."""

    @functools.wraps(check)
    def run(*args: P.args, **kwargs: P.kwargs) -> None:
        skip = not _state.enabled or _state.checked
        _record(f"{check.__name__} {'skipped' if skip else 'runs'}", _state.depth)
        if skip:
            return
        check(*args, **kwargs)
        if _state.depth:
            _state.checked = True

    return run
