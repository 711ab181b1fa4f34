"""A shared warm pool: the forkserver (and its torch import) starts once per test session."""

from __future__ import annotations

import pytest

from trainkb.check import WarmPool


@pytest.fixture(scope="session")
def pool():
    pool = WarmPool()
    env = pool.probe([])
    pool.env = env
    yield pool
    pool.shutdown()
