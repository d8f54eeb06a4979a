"""Fixtures of the training tests: tiny converted models (one conversion per session and head)."""

import os

import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: end-to-end training runs (a few; they run in CI too)")


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory):
    from tests.training.helpers import HEADS, TinyModel

    root = tmp_path_factory.mktemp("tiny")
    return {head: TinyModel(root, head) for head in HEADS}
