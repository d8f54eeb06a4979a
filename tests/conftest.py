"""Shared test setup: quiet TensorFlow, deterministic fp32 math, hypothesis profiles, a resident mxnet process, the
order xdist deals test files in (longest first, tests/scheduling.py), and the corpus XLA traces let go per module."""

import gc
import os
import sys

# Collecting the test modules imports TensorFlow, torch, keras and the corpus libraries: millions of objects that live
# until the process ends. Under CPython's default thresholds a dozen full collections rescanned them while they were
# imported (1.5-4 s of every pytest process, and scripts/run_tests.py starts one per batch). The collector runs
# rarely until collection is done (porter's own settings for a conversion, porter/gc_tuning.py), then with the
# defaults again for the tests themselves.
_TEST_THRESHOLDS = gc.get_threshold()
gc.set_threshold(50_000, 50, 1_000)

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")
# Gluon references from one resident mxnet process that forks per run (porter/verify/mxnet_resident.py): mxnet's
# import costs seconds, and the suite runs hundreds of references.
os.environ.setdefault("PORTER_MXNET_RESIDENT", "1")
# XLA on the CPU compiles each traced model with LLVM's optimisations by default: seconds for a corpus network, and
# hundreds of tests run one. The suite checks what XLA computes, not how fast its code runs: the backend's optimisation
# level 0 keeps XLA's own graph passes (fusion, layout assignment) and cuts the compile (measured: 7% of the
# held-out models' and timm's files).
if "xla_backend_optimization_level" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} --xla_backend_optimization_level=0".strip()

import pytest
from hypothesis import HealthCheck, settings  # noqa: E402

from tests.scheduling import longest_file_first, networks_together, recorded_seconds  # noqa: E402

settings.register_profile("default", max_examples=15, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("ci", max_examples=10, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "default"))


def pytest_configure(config):
    # loadfile's default deals the files with the most tests first, which would undo the longest-first order below
    # (without a table of seconds that default stays)
    if getattr(config.option, "dist", "no") == "loadfile" and recorded_seconds():
        config.option.loadscopereorder = False


def pytest_collection_finish(session):
    gc.set_threshold(*_TEST_THRESHOLDS)  # the tests run under the collector's usual schedule


@pytest.hookimpl(tryfirst=True)
def pytest_unconfigure(config):
    """The tests are over and reported: keep every object still alive out of the last full collections (pytest's
    unraisable-exception check runs two as the session closes, the interpreter one more as it exits), which
    rescanned the whole heap of a process that had built networks for minutes (1-4 s each)."""
    gc.freeze()


def pytest_collection_modifyitems(session, config, items):
    # a corpus file's tests of one network together (its module keeps one network built at a time), in every run
    items[:] = networks_together(items)
    # on xdist workers only: they hand the controller this order, which deals files from it; a run without xdist
    # keeps the collection order
    seconds = recorded_seconds() if os.environ.get("PYTEST_XDIST_WORKER") else {}
    if seconds:
        items[:] = longest_file_first(items, seconds)


@pytest.fixture(scope="module", autouse=True)
def corpus_traces_released():
    """The corpus tests' XLA traces (tests/corpus/test_torchvision.py: shared by the tests of one module) are let go
    as the module ends, and with them its Keras models: an xdist worker runs dozens of modules."""
    yield
    corpus = sys.modules.get("tests.corpus.test_torchvision")
    if corpus is not None:
        corpus.release_xla_traces()
