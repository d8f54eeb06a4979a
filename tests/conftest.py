"""Shared test setup: quiet TensorFlow, deterministic fp32 math, hypothesis profiles, a resident mxnet process."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")
# Gluon references from one resident mxnet process that forks per run (porter/verify/mxnet_resident.py): mxnet's
# import costs seconds, and the suite runs hundreds of references.
os.environ.setdefault("PORTER_MXNET_RESIDENT", "1")

from hypothesis import HealthCheck, settings  # noqa: E402

settings.register_profile("default", max_examples=15, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("ci", max_examples=10, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "default"))
