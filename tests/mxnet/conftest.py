"""Fixtures shared by the mxnet property tests."""

import pytest


@pytest.fixture(scope="session")
def mxnet():
    """One long-lived mxnet 1.9.1 process for the session (tests/mxnet/mxnet_worker.py), shared by the 14 property
    test modules: each request brings its own arrays and names, and starting mxnet takes seconds."""
    from tests.mxnet.mxnet_worker import MxnetWorker

    worker = MxnetWorker()
    yield worker
    worker.close()
