"""Shared test set-up: a fixed seed and one torch thread for every test."""

from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _seeded():
    torch.manual_seed(0)
    torch.set_num_threads(1)
    yield
