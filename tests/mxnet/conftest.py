"""Fixtures shared by the mxnet property tests."""

import pytest


@pytest.fixture(scope="module")
def mxnet():
    """One long-lived mxnet 1.9.1 process for a test module (tests/mxnet/mxnet_worker.py)."""
    from tests.mxnet.mxnet_worker import MxnetWorker

    worker = MxnetWorker()
    yield worker
    worker.close()
