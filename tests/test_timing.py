"""fastest_seconds: each run's fastest turn, the runs taking turns."""

import time

import pytest

from transformer.training.timing import fastest_seconds


def test_fastest_seconds_keeps_each_runs_fastest_turn_and_runs_them_in_turn():
    calls = []
    waits = iter([0.02, 0.0, 0.0, 0.02])  # slow then fast for "a", the reverse for "b"

    def run(name):
        def call():
            calls.append(name)
            wait = next(waits)
            end = time.perf_counter() + wait
            while time.perf_counter() < end:
                pass

        return call

    seconds = fastest_seconds({"a": run("a"), "b": run("b")}, rounds=2)
    assert calls == ["a", "b", "a", "b"]
    assert set(seconds) == {"a", "b"}
    assert seconds["a"] < 0.01 and seconds["b"] < 0.01


def test_fastest_seconds_needs_a_round():
    with pytest.raises(ValueError, match="rounds must be at least 1, got 0"):
        fastest_seconds({"a": lambda: None}, rounds=0)
