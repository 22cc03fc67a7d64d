"""When the checks run: once per call path at the public entry, or not at all.

Most routines that call, or are called by, other checked routines (the
``forward`` of the models and their parts, the attention functions and
``generate``) are marked with ``@entry`` and start with one call to their
check, a function marked with ``@contract``; smaller public functions call
a plain check function, which runs on every call. When an entry calls
another entry, as the model calls its layers, the inner check is skipped:
the outer check already covered its inputs. :func:`set_checks` turns every
check off, to skip them once a model is known to be called correctly;
``benchmarks/README.md`` measures what they cost, which is little.
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


_state = _CheckState()


def set_checks(enabled: bool) -> bool:
    """Turn the package's input checks on or off, and return the previous setting.

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
    """Turn the input checks off inside a ``with`` block (see :func:`set_checks`)."""
    previous = set_checks(False)
    try:
        yield
    finally:
        set_checks(previous)


def entry(function: Callable[P, R]) -> Callable[P, R]:
    """Mark a public entry point: the checks of entries it calls are skipped.

    The outermost entry's own check runs; once it has passed, the checks of
    every entry called inside it (a model's layers, a layer's attention) are
    skipped, because the outer check already covered their inputs.
    """

    @functools.wraps(function)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        _state.depth += 1
        try:
            return function(*args, **kwargs)
        finally:
            _state.depth -= 1
            if _state.depth == 0:
                _state.checked = False

    return call


def contract(check: Callable[P, None]) -> Callable[P, None]:
    """Mark the check of an entry point: run once per call path, unless turned off."""

    @functools.wraps(check)
    def run(*args: P.args, **kwargs: P.kwargs) -> None:
        if not _state.enabled or _state.checked:
            return
        check(*args, **kwargs)
        if _state.depth:
            _state.checked = True

    return run
