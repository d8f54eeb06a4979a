"""Fixtures shared by the mxnet property tests."""

import pytest


@pytest.fixture(scope="module")
def mxnet():
    """One long-lived mxnet 1.9.1 process per test module (tests/mxnet/mxnet_worker.py): each request brings its own
    arrays and names, and starting mxnet takes seconds. Not one per session: a module that turns on mxnet's numpy
    mode (`npx.set_np()`) leaves it on in the process, and the next module's NDArray code then fails."""
    from tests.mxnet.mxnet_worker import MxnetWorker

    worker = MxnetWorker()
    yield worker
    worker.close()
