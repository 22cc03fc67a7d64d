"""What the GPU benchmarks share: the device, or a clear exit without one, and
a CUDA-event timer that reports the median of interleaved runs."""

from __future__ import annotations

import statistics
import sys
from collections.abc import Callable

import torch


def cuda_or_exit(name: str) -> torch.device:
    """Return the CUDA device, or exit with a message when there is none."""
    if not torch.cuda.is_available():
        sys.exit(f"{name}: no CUDA GPU on this machine; nothing was measured.")
    return torch.device("cuda")


def describe_device() -> str:
    """The fields benchmarks/README.md records for a GPU run."""
    props = torch.cuda.get_device_properties(0)
    return (
        f"device: {props.name} ({props.total_memory / 2**30:.0f} GiB), "
        f"torch {torch.__version__}, CUDA {torch.version.cuda}"
    )


def median_cuda_ms(
    runs: dict[str, Callable[[], object]], *, reps: int = 20, warmup: int = 3
) -> dict[str, float]:
    """Time each run ``reps`` times, interleaved, after ``warmup`` untimed rounds."""
    for _ in range(warmup):
        for run in runs.values():
            run()
    torch.cuda.synchronize()
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(reps):
        for name, run in runs.items():
            start, end = torch.cuda.Event(True), torch.cuda.Event(True)
            start.record()
            run()
            end.record()
            torch.cuda.synchronize()
            times[name].append(start.elapsed_time(end))
    return {name: statistics.median(t) for name, t in times.items()}
