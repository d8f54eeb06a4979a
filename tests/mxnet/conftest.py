"""Fixtures shared by the mxnet property tests."""

import pytest


@pytest.fixture(scope="session")
def mxnet():
    """One long-lived mxnet 1.9.1 process per test session (tests/mxnet/mxnet_worker.py): each request brings its own
    arrays and names, and starting mxnet takes seconds. The worker switches numpy mode (`npx.set_np()` in a request's
    setup) off after every request, so a numpy-mode module leaves nothing behind for the next module's NDArray code."""
    from tests.mxnet.mxnet_worker import MxnetWorker

    worker = MxnetWorker()
    yield worker
    worker.close()
