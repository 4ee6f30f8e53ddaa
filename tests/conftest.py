"""Shared fixtures for the xfskde test suite, and how many processes run it."""

from __future__ import annotations

import os

import numpy as np
import psutil
import pytest

#: memory one test process may need at once (the largest fast tests, a 2048² segmentation or a
#: LocalCluster's worker processes, stay well under it)
WORKER_MEMORY = 3 * 2**30


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` (the default in ``pyproject.toml``): one test process per CPU this process
    may run on, and no more than the available memory holds at :data:`WORKER_MEMORY` each.

    pytest-xdist's own ``auto`` counts the machine's cores, which in a container limited to 2
    of 64 visible CPUs starts 64 processes; the CPUs the scheduler gives this process are the
    ones that count (``os.sched_getaffinity``, where the platform has it)."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    memory = psutil.virtual_memory().available // WORKER_MEMORY
    return int(max(1, min(cpus or 1, memory)))


@pytest.fixture(scope="session")
def forked_python():
    """Runs scripts and code as new Python processes, forked from one that has imported the
    dependencies once (:mod:`_forked`)."""
    from _forked import ForkedPython

    runner = ForkedPython()
    yield runner
    runner.close()


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261122)
