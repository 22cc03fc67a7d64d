"""Tests of transformer.repro: seeds, threads and the provenance line."""

import random
import re

import pytest
import torch

import transformer
from transformer.repro import package_fingerprint, provenance


def test_setup_makes_random_numbers_repeat(capsys):
    transformer.setup(seed=3)
    first = (torch.randn(4), random.random())
    transformer.setup(seed=3)
    second = (torch.randn(4), random.random())
    torch.testing.assert_close(first[0], second[0], rtol=0, atol=0)
    assert first[1] == second[1]
    transformer.setup(seed=4)
    assert not torch.equal(first[0], torch.randn(4))


def test_setup_sets_thread_count_and_prints_provenance(capsys):
    transformer.setup(seed=0, threads=2)
    assert torch.get_num_threads() == 2
    out = capsys.readouterr().out
    assert f"transformer {transformer.__version__}" in out
    assert f"torch {torch.__version__}" in out
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", out)
    assert "seed 0, 2 torch thread(s)" in out
    torch.set_num_threads(1)


def test_setup_quiet_prints_nothing(capsys):
    transformer.setup(quiet=True)
    assert capsys.readouterr().out == ""


def test_provenance_names_no_machine_path():
    info = provenance()
    assert info["source"] == package_fingerprint() and len(info["source"]) == 12
    for value in info.values():
        assert "/" not in value, value


@pytest.mark.parametrize(
    "kwargs,error", [({"threads": 0}, ValueError), ({"seed": "1"}, TypeError)]
)
def test_setup_rejects_bad_arguments(kwargs, error):
    with pytest.raises(error):
        transformer.setup(quiet=True, **kwargs)
