"""Wall-clock timing on a busy machine: the fastest of interleaved rounds."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping


def fastest_seconds(
    runs: Mapping[str, Callable[[], object]], *, rounds: int = 5
) -> dict[str, float]:
    """Return each run's fastest time, in seconds, over ``rounds`` turns.

    A busy machine slows some calls and not others. So the runs take turns,
    and each keeps its fastest turn: the time it takes when nothing else gets
    in its way. Taking turns also lets every run see the same load.

    Args:
        runs: Functions of no argument, by name.
        rounds: Turns each run takes.

    Returns:
        The fastest turn of each run, by name.

    Raises:
        ValueError: If ``rounds`` is not positive.
    """
    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, got {rounds}")
    fastest = dict.fromkeys(runs, math.inf)
    for _ in range(rounds):
        for name, run in runs.items():
            start = time.perf_counter()
            run()
            fastest[name] = min(fastest[name], time.perf_counter() - start)
    return fastest
