"""Shared harness of the rule-family property tests: a small torch model written as source, ported once.

`ported_models` (a module-scoped cache, see `port_cache`) converts a model source with `porter.convert`, writes the
output tree and returns the `PortedPair` (torch model and Keras port with the same weights). Property tests then
draw inputs with hypothesis and compare both sides; the comparison itself is `porter.verify.compare`'s.
"""

import textwrap

import numpy as np

from porter.convert import ConvertOptions
from porter.output import write_tree
from porter.verify.compare import assert_equivalent
from porter.verify.harness import PortedPair
from tests.in_process import convert  # porter convert's collector settings (tests/in_process.py)

# A model whose op under test reads the output of a Conv2d: a channels-last tensor inside the port, so axis
# remapping and layout bookkeeping are what the comparison tests.
CONV_TEMPLATE = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, {channels}, 3, padding=1)

    def forward(self, x):
        y = self.conv(x)
        {op}
        return y
'''


def conv_model(op, channels=6):
    """Source of OpModel: Conv2d(3, channels) then the statement(s) `op` on `y` (more lines indented by 8)."""
    return textwrap.dedent(CONV_TEMPLATE).replace("{channels}", str(channels)).replace("{op}", op)


# A model whose statements `{body}` (ending in a return) read `y`, a Linear's output in torch's layout.
LINEAR_TEMPLATE = '''
from typing import List

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        y = self.fc(x)
        {body}
'''


def linear_model_cache(tmp_path_factory, bodies, input_specs=("4",)):
    """name -> PortedPair of the LINEAR_TEMPLATE model with `bodies[name]` (lines after the first indented by 8)."""
    sources = {name: textwrap.dedent(LINEAR_TEMPLATE).replace("{body}", body) for name, body in bodies.items()}
    return port_cache(tmp_path_factory, sources, input_specs)


def template_cache(tmp_path_factory, template, ops, input_specs=("3,8,8",)):
    """name -> PortedPair of `template` with its `{op}` replaced by `ops[name]` (lines after the first indented by
    8), converted on first use."""
    sources = {name: textwrap.dedent(template).replace("{op}", op) for name, op in ops.items()}
    return port_cache(tmp_path_factory, sources, input_specs)


def port(folder, source, input_specs=("3,8,8",), init_args=None):
    """Write `source` to folder/op_model.py, convert it (exit code 0 required) and return the PortedPair."""
    path = folder / "op_model.py"
    path.write_text(source)
    options = ConvertOptions(path, folder / "out", input_specs=list(input_specs))
    conversion = convert(options)
    assert conversion.exit_code == 0, (conversion.exit_code, conversion.manifest)
    write_tree(folder / "out", conversion.files)
    return PortedPair(folder / "out", init_args=init_args)


def port_cache(tmp_path_factory, sources, input_specs=("3,8,8",)):
    """name -> PortedPair, converting `sources[name]` on first use."""
    return cached(lambda name: port(tmp_path_factory.mktemp(name), sources[name], input_specs))


def cached(make):
    """name -> make(name), made once; a failure is kept and raised again (hypothesis does not convert anew for
    every example it shrinks)."""
    cache = {}

    def get(name):
        if name not in cache:
            try:
                cache[name] = make(name)
            except Exception as error:  # noqa: BLE001 (re-raised on every use)
                cache[name] = error
        if isinstance(cache[name], Exception):
            raise cache[name]
        return cache[name]

    return get


def random_input(seed, shape, scale=1.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def assert_same_outputs(pair, inputs, tolerance=1e-5, what="output", jit=False):
    """Torch and Keras outputs equal within `tolerance` (relative to the output's scale); returns the worst error."""
    expected = pair.run_torch(inputs)  # a RuntimeError here is a bad strategy: it fails, never passes silently
    actual = run_keras(pair, inputs, jit)
    assert len(expected) == len(actual), f"{what}: {len(actual)} Keras outputs for {len(expected)} torch outputs"
    return max((assert_equivalent(want, got, tolerance=tolerance, what=what)
                for want, got in zip(expected, actual, strict=True)), default=0.0)


def forget_traces(model):
    """Drop the traces `inference_trace` keeps for `model`: a test that sets attributes the model's call reads
    (`model.eps = eps`) between examples would otherwise run a trace that read the old values as constants."""
    from porter.verify.harness import _TRACES

    _TRACES.pop(model, None)


def run_keras(pair, inputs, jit=False):
    """The port's outputs on `inputs` (numpy), eagerly or under XLA: an XLA run goes through the trace
    `inference_trace` keeps for the model, which a Transposes count on inputs of the same shapes then reads."""
    if not jit:
        return pair.run_keras(inputs)
    import tensorflow as tf

    from porter.verify.harness import inference_trace

    function, _ = inference_trace(pair.keras_model, inputs, jit_compile=True)
    return flat_numpy(function(*[tf.constant(i) for i in inputs]))


def flat_numpy(result):
    """A model's result (a tensor, or tuples, lists and dicts of them) as a flat list of numpy arrays, dicts in
    key order (as PortedPair.run_keras returns them)."""
    if isinstance(result, (tuple, list)):
        return [array for item in result for array in flat_numpy(item)]
    if isinstance(result, dict):
        return [array for key in sorted(result) for array in flat_numpy(result[key])]
    return [] if result is None else [np.asarray(result)]


def assert_matches_at_two_batches(pair, transposes, seeds, tolerance=1e-5):
    """The port matches torch eagerly at batch 1 and under XLA at batch 2 (inputs drawn with `seeds`, one each), and
    traces at most `transposes` Transposes at batch 2 (a corpus file's stated bound)."""
    from porter.verify.harness import count_transposes

    assert_same_outputs(pair, pair.example_inputs(batch=1, seed=seeds[0]), tolerance=tolerance)
    inputs = pair.example_inputs(batch=2, seed=seeds[1])
    assert_same_outputs(pair, inputs, tolerance=tolerance, jit=True)
    counted = count_transposes(pair.keras_model, inputs)
    assert counted <= transposes, counted


def assert_matches_converting_at_the_boundary(pair, x, tolerance=1e-4):
    """The port matches torch on `x` eagerly and under XLA, and traces no Transpose beyond the boundary's two."""
    from porter.verify.harness import count_transposes

    assert_same_outputs(pair, [x], tolerance=tolerance)
    assert_same_outputs(pair, [x], tolerance=tolerance, jit=True)
    assert count_transposes(pair.keras_model, [x]) <= 2
