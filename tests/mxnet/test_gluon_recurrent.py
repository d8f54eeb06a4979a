"""Gluon's recurrent layers and cells (porter/runtime/gluon_recurrent.py) against real mxnet 1.9.1.

Property tests draw a few small configurations per example (batch 1, one timestep, odd sizes, both layouts, 1-3
layers, bidirectional, deferred input sizes, explicit begin states or none), build them all as children of one
Gluon Block so that one mxnet subprocess (porter's driver) serves every configuration of an example, and compare
the port's runtime layers, loaded from the `.params` file mxnet saved, eagerly and under XLA. The same small driver
code (USAGE) runs the mxnet blocks there and the port's layers here. The fixtures' variants and a converted model
with explicit states and cell unrolls check the translation.
"""

import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from porter.weights.gluon_params import read_gluon_params
from tests.mxnet.gluon_fixtures import GLUON_FIXTURES_DIR, GLUON_VARIANTS, make_inputs, needs_mxnet

REPOSITORY = Path(__file__).resolve().parents[2]
TOLERANCE = 1e-4

# Builds and runs one configuration; `rnn` is mxnet.gluon.rnn there and the port's runtime classes here, `zeros`
# mx.nd.zeros there and the name the port's begin_state takes ("zeros", as porter translates `func=mx.nd.zeros`).
USAGE = '''
def build(rnn, c):
    size = c["input_size"] if c["sized"] else 0
    if c["kind"] in ("LSTM", "GRU", "RNN"):
        kwargs = dict(num_layers=c["layers"], layout=c["layout"], bidirectional=c["bidirectional"],
                      dropout=c["dropout"], input_size=size)
        if c["kind"] == "RNN":
            kwargs["activation"] = c["activation"]
        if c.get("projection"):
            kwargs["projection_size"] = c["projection"]
        return getattr(rnn, c["kind"])(c["hidden"], **kwargs)

    def cell(inputs):
        if c["kind"] == "RNNCell":
            return rnn.RNNCell(c["hidden"], activation=c["activation"], input_size=inputs)
        return getattr(rnn, c["kind"])(c["hidden"], input_size=inputs)

    if c["wrap"] == "sequential":
        stack = rnn.SequentialRNNCell()
        for index in range(c["layers"]):
            stack.add(cell(size if index == 0 or not c["sized"] else c["hidden"]))
        return stack
    if c["wrap"] == "bidirectional":
        return rnn.BidirectionalCell(cell(size), cell(size))
    return cell(size)


def apply(block, c, inputs, zeros):
    first, count = c["first"], c["state_count"]
    x = inputs[first]
    states = list(inputs[first + 1:first + 1 + count]) if c["states"] else None
    steps = list(inputs[first + 1 + (count if c["states"] else 0):c["last"]])
    if c["kind"] in ("LSTM", "GRU", "RNN"):
        if states is None:
            return [block(x)]
        output, states = block(x, states)
        return [output] + list(states)
    if states is None and (c["usage"] == "step" or c["begin"]):
        states = block.begin_state(batch_size=c["batch"], func=zeros)
    if c["usage"] == "step":
        outputs = []
        for step in steps:
            output, states = block(step, states)
            outputs.append(output)
        return outputs + list(states)
    valid_length = inputs[c["valid_at"]] if c.get("valid") else None
    outputs, states = block.unroll(c["steps"], steps if c["as_list"] else x, begin_state=states,
                                   layout=c["layout"], merge_outputs=c["merge"], valid_length=valid_length)
    return (list(outputs) if isinstance(outputs, list) else [outputs]) + list(states)
'''

ZOO = '''
import mxnet as mx
from mxnet import gluon
from mxnet.gluon import rnn
''' + USAGE + '''

class Zoo(gluon.Block):
    def __init__(self, configs, **kwargs):
        super(Zoo, self).__init__(**kwargs)
        self.configs = configs
        with self.name_scope():
            for index, config in enumerate(configs):
                setattr(self, "m%d" % index, build(rnn, config))

    def forward(self, *inputs):
        return [apply(getattr(self, "m%d" % index), config, inputs, mx.nd.zeros)
                for index, config in enumerate(self.configs)]
'''


def port_namespace():
    from porter.runtime import gluon_recurrent as runtime

    names = ("LSTM", "GRU", "RNN", "LSTMCell", "GRUCell", "RNNCell", "SequentialRNNCell", "BidirectionalCell")
    return types.SimpleNamespace(**{name: getattr(runtime, f"Gluon{name}") for name in names})


def port_usage():
    namespace = {}
    exec(compile(USAGE, "USAGE", "exec"), namespace)  # noqa: S102 - the test's own driver code
    return namespace["build"], namespace["apply"]


@st.composite
def fused_config(draw):
    kind = draw(st.sampled_from(["LSTM", "GRU", "RNN"]))
    return {"kind": kind, "hidden": draw(st.integers(1, 7)), "layers": draw(st.integers(1, 3)),
            "layout": draw(st.sampled_from(["TNC", "NTC"])), "bidirectional": draw(st.booleans()),
            "dropout": draw(st.sampled_from([0.0, 0.3])), "input_size": draw(st.integers(1, 6)),
            "sized": draw(st.booleans()), "activation": draw(st.sampled_from(["relu", "tanh"])),
            "batch": draw(st.integers(1, 3)), "steps": draw(st.integers(1, 5)), "states": draw(st.booleans()),
            "state_count": 2 if kind == "LSTM" else 1}


@st.composite
def cell_config(draw):
    kind = draw(st.sampled_from(["LSTMCell", "GRUCell", "RNNCell"]))
    wrap = draw(st.sampled_from(["none", "sequential", "bidirectional"]))
    usage = "unroll" if wrap == "bidirectional" else draw(st.sampled_from(["step", "unroll"]))
    layers = draw(st.integers(1, 3)) if wrap == "sequential" else 1
    per_cell = 2 if kind == "LSTMCell" else 1
    return {"kind": kind, "wrap": wrap, "usage": usage, "layers": layers, "hidden": draw(st.integers(1, 7)),
            "input_size": draw(st.integers(1, 6)), "sized": draw(st.booleans()),
            "activation": draw(st.sampled_from(["tanh", "relu", "sigmoid", "softsign"])),
            "batch": draw(st.integers(1, 3)), "steps": draw(st.integers(1, 5)),
            "layout": draw(st.sampled_from(["NTC", "TNC"])), "merge": draw(st.sampled_from([True, False, None])),
            "as_list": draw(st.booleans()), "states": draw(st.booleans()), "begin": draw(st.booleans()),
            "valid": usage == "unroll" and draw(st.booleans()),
            "state_count": per_cell * (layers if wrap == "sequential" else 2 if wrap == "bidirectional" else 1)}


def inputs_for(configs, seed):
    """The zoo's inputs, each configuration's after the previous one's; the configurations learn where theirs
    are (`first`, `last`, `valid_at`)."""
    generator = np.random.default_rng(seed)
    arrays = []
    for config in configs:
        batch, steps, size = config["batch"], config["steps"], config["input_size"]
        time_major = config["layout"] == "TNC"
        x = generator.standard_normal((steps, batch, size) if time_major else (batch, steps, size)).astype(np.float32)
        config["first"] = len(arrays)
        arrays.append(x)
        if config["states"]:
            arrays.extend(state_arrays(config, generator))
        if config["kind"].endswith("Cell") and (config["usage"] == "step" or config["as_list"]):
            arrays.extend(np.ascontiguousarray(x[t] if time_major else x[:, t]) for t in range(steps))
        config["last"] = len(arrays)
        if config.get("valid"):  # unroll's valid_length: (N,) lengths from 1 to T, float32 as Gluon code has them
            config["valid_at"] = len(arrays)
            arrays.append(generator.integers(1, steps + 1, size=(batch,)).astype(np.float32))
    return arrays


def state_arrays(config, generator):
    batch, hidden = config["batch"], config["hidden"]
    if config["kind"] in ("LSTM", "GRU", "RNN"):
        shape = (config["layers"] * (2 if config["bidirectional"] else 1), batch, hidden)
        projected = shape[:2] + (config.get("projection") or hidden,)  # h has the projection's size
        return [generator.standard_normal(size).astype(np.float32) for size in (projected, shape)][
            :config["state_count"]]
    return [generator.standard_normal((batch, hidden)).astype(np.float32) for _ in range(config["state_count"])]


def flatten(result):
    if isinstance(result, (list, tuple)):
        return [leaf for item in result for leaf in flatten(item)]
    return [result]


class _Zoo:
    """The port's blocks side by side, loaded as one model (keys `m<index>.` as the Gluon Zoo saves them)."""

    def __init__(self, blocks):
        self.blocks = blocks

    def torch_state(self, prefix=""):
        return [entry for index, block in enumerate(self.blocks) for entry in block.torch_state(f"{prefix}m{index}.")]


def check_zoo(configs, tmp_path, seed, call_first):
    """Run `configs` in mxnet (one subprocess) and in the port; assert every output agrees, eager and XLA."""
    import tensorflow as tf

    from porter.runtime.base import load_state_dict
    from porter.verify.mxnet_reference import run_gluon_reference

    inputs = inputs_for(configs, seed)
    source = tmp_path / "zoo.py"
    source.write_text(ZOO)
    params = tmp_path / "zoo.params"
    reference = run_gluon_reference(source, "Zoo", inputs, init_kwargs={"configs": configs}, perturb=True,
                                    save_parameters=params, seed=seed)
    build, apply = port_usage()
    namespace = port_namespace()
    blocks = [build(namespace, config) for config in configs]
    tensors = [tf.constant(x) for x in inputs]

    def run():
        return flatten([apply(block, config, tensors, "zeros") for block, config in zip(blocks, configs)])

    if call_first:  # deferred sizes from a call; otherwise from the saved arrays
        run()
    state = read_gluon_params(params)
    assert set(state) == set(reference.parameters)
    load_state_dict(_Zoo(blocks), state)
    eager = [np.asarray(y) for y in run()]
    xla = [np.asarray(y) for y in tf.function(run, jit_compile=True, autograph=False)()]
    assert len(eager) == len(reference.outputs), (len(eager), len(reference.outputs))
    for index, expected in enumerate(reference.outputs):
        scale = float(np.max(np.abs(expected), initial=0.0)) or 1.0
        for mode, actual in (("eager", eager[index]), ("XLA", xla[index])):
            assert actual.shape == expected.shape, (index, mode, actual.shape, expected.shape, configs)
            error = float(np.max(np.abs(actual - expected), initial=0.0)) / scale
            assert error <= TOLERANCE, (index, mode, error, configs)
    return len(configs)


@needs_mxnet
@settings(max_examples=4, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(configs=st.lists(fused_config(), min_size=4, max_size=7), call_first=st.booleans())
def test_fused_layers_match_mxnet(configs, call_first, tmp_path):
    check_zoo(configs, tmp_path, seed=len(configs), call_first=call_first)


@needs_mxnet
@settings(max_examples=4, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(configs=st.lists(cell_config(), min_size=4, max_size=7), call_first=st.booleans())
def test_cells_match_mxnet(configs, call_first, tmp_path):
    check_zoo(configs, tmp_path, seed=len(configs), call_first=call_first)


@needs_mxnet
def test_edge_shapes_match_mxnet(tmp_path):
    """Batch 1 with one timestep, bidirectional three-layer stacks, GRU and LSTM cells in a bidirectional unroll
    (with valid_length too): the corners hypothesis may not draw."""
    fused = {"hidden": 3, "dropout": 0.0, "input_size": 5, "activation": "relu"}
    cell = {"hidden": 5, "input_size": 3, "activation": "tanh", "merge": True, "as_list": False, "begin": False}
    configs = [
        {**fused, "kind": "LSTM", "layers": 3, "layout": "NTC", "bidirectional": True, "sized": False, "batch": 1,
         "steps": 1, "states": True, "state_count": 2},
        {**fused, "kind": "GRU", "layers": 2, "layout": "TNC", "bidirectional": True, "sized": True, "batch": 2,
         "steps": 4, "states": True, "state_count": 1},
        {**fused, "kind": "RNN", "layers": 1, "layout": "NTC", "bidirectional": False, "sized": True, "batch": 1,
         "steps": 3, "states": False, "state_count": 1},
        {**cell, "kind": "GRUCell", "wrap": "bidirectional", "usage": "unroll", "layers": 1, "sized": True,
         "batch": 1, "steps": 1, "layout": "NTC", "states": True, "state_count": 2},
        {**cell, "kind": "LSTMCell", "wrap": "sequential", "usage": "unroll", "layers": 3, "sized": False,
         "batch": 2, "steps": 3, "layout": "TNC", "states": False, "state_count": 6},
        {**cell, "kind": "GRUCell", "wrap": "bidirectional", "usage": "unroll", "layers": 1, "sized": True,
         "batch": 3, "steps": 4, "layout": "NTC", "states": False, "state_count": 2, "valid": True},
    ]
    assert check_zoo(configs, tmp_path, seed=3, call_first=False) == 6


PROJECTION_SCRIPT = """
import sys
import mxnet as mx
import numpy as np
from mxnet.gluon import rnn

layer = rnn.LSTM(6, num_layers=2, layout="NTC", bidirectional=True, projection_size=3, input_size=4)
layer.initialize(mx.init.Uniform(0.5))
x = mx.nd.array(np.random.RandomState(0).randn(2, 5, 4).astype(np.float32))
states = [mx.nd.array(np.random.RandomState(1).randn(4, 2, 3)), mx.nd.array(np.random.RandomState(2).randn(4, 2, 6))]
output, states = layer(x, states)
layer.save_parameters(sys.argv[1] + ".params")
np.savez(sys.argv[1] + ".npz", x=x.asnumpy(), output=output.asnumpy(), h=states[0].asnumpy(), c=states[1].asnumpy())
"""


@needs_mxnet
def test_lstm_projection_matches_mxnet_forward(tmp_path):
    """`projection_size` (h2r_weight): mxnet 1.9.1 has no CPU backward for it, so the driver (which differentiates)
    cannot run it; the forward comes from mxnet directly."""
    import os

    import tensorflow as tf

    from porter.runtime.base import load_state_dict
    from porter.runtime.gluon_recurrent import GluonLSTM
    from porter.verify.mxnet_reference import mxnet_python

    base = tmp_path / "projection"
    subprocess.run([str(mxnet_python()), "-I", "-c", PROJECTION_SCRIPT, str(base)], check=True, capture_output=True,
                   env={**os.environ, "MXNET_MKLDNN_ENABLED": "1", "OMP_NUM_THREADS": "1"}, timeout=300)
    reference = np.load(f"{base}.npz")
    layer = GluonLSTM(6, num_layers=2, layout="NTC", bidirectional=True, projection_size=3)  # deferred input size
    load_state_dict(layer, read_gluon_params(f"{base}.params"))
    h0 = np.random.RandomState(1).randn(4, 2, 3)
    c0 = np.random.RandomState(2).randn(4, 2, 6)
    output, (h, c) = layer(tf.constant(reference["x"]), [tf.constant(h0, tf.float32), tf.constant(c0, tf.float32)])
    for actual, name in ((output, "output"), (h, "h"), (c, "c")):
        expected = reference[name]
        assert np.max(np.abs(np.asarray(actual) - expected)) <= TOLERANCE * np.max(np.abs(expected)), name


def convert(source, out, *extra):
    completed = subprocess.run([sys.executable, "-m", "porter", "convert", str(source), "-o", str(out), *extra],
                               capture_output=True, text=True, cwd=REPOSITORY, check=False)
    assert completed.returncode == 0, completed.stderr
    return completed


def import_port(out, stem):
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"gluon_recurrent_port_{out.name}", out / f"{stem}_keras.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def assert_port_matches(module, model, inputs, reference, params):
    import tensorflow as tf

    tensors = [tf.constant(x) for x in inputs]
    model(*tensors)
    module.load_state_dict(model, read_gluon_params(params))
    eager = [np.asarray(y) for y in flatten(model(*tensors))]
    compiled = tf.function(lambda *xs: model(*xs), jit_compile=True)
    xla = [np.asarray(y) for y in flatten(compiled(*tensors))]
    errors = []
    assert len(eager) == len(reference.outputs)
    for expected, actual_eager, actual_xla in zip(reference.outputs, eager, xla):
        scale = float(np.max(np.abs(expected))) or 1.0
        assert actual_eager.shape == expected.shape
        errors.append((float(np.max(np.abs(actual_eager - expected))) / scale,
                       float(np.max(np.abs(actual_xla - expected))) / scale))
    assert max(max(pair) for pair in errors) <= TOLERANCE, errors
    return errors


RNN_VARIANTS = sorted(key for key in GLUON_VARIANTS if key.startswith("text_rnn_classifier.py"))
# The recurrence reads the time axis in place: the only Transpose is the source's own `F.transpose` for 'TNC'.
VARIANT_TRANSPOSES = {"text_rnn_classifier.py gru TNC": 1, "text_rnn_classifier.py lstm one-way": 0}


@needs_mxnet
@pytest.mark.parametrize("key", RNN_VARIANTS)
def test_text_rnn_classifier_variants_match_mxnet(key, tmp_path):
    from porter.verify.mxnet_reference import run_gluon_reference

    name, case = GLUON_VARIANTS[key]
    convert(GLUON_FIXTURES_DIR / name, tmp_path / "port")
    inputs = make_inputs(case.inputs)
    params = tmp_path / "variant.params"
    reference = run_gluon_reference(GLUON_FIXTURES_DIR / name, case.main, inputs, init_kwargs=case.init_kwargs,
                                    perturb=True, save_parameters=params)
    assert reference.outputs[0].shape == case.output_shape
    module = import_port(tmp_path / "port", Path(name).stem)
    model = module.TextClassifier(**case.init_kwargs)
    errors = assert_port_matches(module, model, inputs, reference, params)
    print(f"{key}: max error relative to the output scale: eager {errors[0][0]:.2e}, XLA {errors[0][1]:.2e}")
    import tensorflow as tf

    specs = [tf.TensorSpec(x.shape, x.dtype) for x in inputs]
    graph = tf.function(lambda *xs: model(*xs), autograph=False).get_concrete_function(*specs).graph
    assert [op.type for op in graph.get_operations()].count("Transpose") == VARIANT_TRANSPOSES.get(key, 0)


STATEFUL_SOURCE = '''
import mxnet as mx
from mxnet import gluon
from mxnet.gluon import nn, rnn


class StatefulTagger(gluon.HybridBlock):
    """Explicit begin states into a fused GRU, its final states out; a stepped LSTMCell; a bidirectional cell
    unrolled over a list of steps."""

    def __init__(self, hidden=6, cell_mode="lstm", **kwargs):
        super(StatefulTagger, self).__init__(**kwargs)
        with self.name_scope():
            self.encoder = rnn.GRU(hidden, num_layers=2, layout="NTC", bidirectional=True, input_size=5)
            cell_class = rnn.LSTMCell if cell_mode == "lstm" else rnn.GRUCell
            self.cell = cell_class(hidden, input_size=2 * hidden)
            self.both = rnn.BidirectionalCell(rnn.GRUCell(3, input_size=2 * hidden),
                                              rnn.RNNCell(3, activation="relu", input_size=2 * hidden))
            self.head = nn.Dense(4, flatten=False)

    def hybrid_forward(self, F, x, h0):
        encoded, states = self.encoder(x, [h0])
        state = self.cell.begin_state(batch_size=4, func=F.zeros)
        steps, state = self.cell.unroll(3, encoded, begin_state=state, layout="NTC", merge_outputs=True)
        both, _ = self.both.unroll(3, encoded, layout="NTC", merge_outputs=True)
        return self.head(steps), both, states[0]
'''


@needs_mxnet
def test_converted_model_with_states_and_cells_matches_mxnet(tmp_path):
    from porter.verify.mxnet_reference import run_gluon_reference

    source = tmp_path / "stateful_tagger.py"
    source.write_text(STATEFUL_SOURCE)
    convert(source, tmp_path / "port")
    generator = np.random.default_rng(5)
    inputs = [generator.standard_normal((4, 3, 5)).astype(np.float32),
              generator.standard_normal((4, 4, 6)).astype(np.float32)]
    params = tmp_path / "stateful.params"
    reference = run_gluon_reference(source, "StatefulTagger", inputs, perturb=True, save_parameters=params)
    assert [o.shape for o in reference.outputs] == [(4, 3, 4), (4, 3, 6), (4, 4, 6)]
    module = import_port(tmp_path / "port", "stateful_tagger")
    assert_port_matches(module, module.StatefulTagger(), inputs, reference, params)


def test_legacy_fused_names_read_as_mxnet_1_9_1_writes_them():
    from porter.weights.gluon_params import modern_rnn_names

    legacy = {"encoder.l0_i2h_weight": 1, "encoder.r0_h2h_bias": 2, "encoder.l1_i2h_weight": 3, "rnn.l0_i2h_bias": 4,
              "dense.weight": 5, "_unfused.0.i2h_weight": 6}
    assert modern_rnn_names(legacy) == {
        "encoder._unfused.0.l_cell.i2h_weight": 1, "encoder._unfused.0.r_cell.h2h_bias": 2,
        "encoder._unfused.1.l_cell.i2h_weight": 3, "rnn._unfused.0.i2h_bias": 4, "dense.weight": 5,
        "_unfused.0.i2h_weight": 6}


TORCH_CHOICE = '''
import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self, mode="lstm"):
        super().__init__()
        rnn_class = {"lstm": nn.LSTM, "gru": nn.GRU}[mode]
        self.encoder = rnn_class(8, 16, batch_first=True)
        act = nn.ReLU if mode == "lstm" else nn.Tanh
        self.act = act()

    def forward(self, x):
        out, _ = self.encoder(x)
        return self.act(out)
'''


def model_code(path):
    from porter.convert import ConvertOptions
    from tests.in_process import convert  # porter convert's collector settings (tests/in_process.py)

    conversion = convert(ConvertOptions(path))
    return next(text for name, text in conversion.files.items() if name.endswith("_keras.py"))


def test_a_dict_of_layer_classes_names_the_runtime_classes(tmp_path):
    """`{"lstm": rnn.LSTM, "gru": rnn.GRU}[mode]` (Gluon or torch) picks among the port's classes, and the layer it
    builds is called as the layers it may be (no run-time dispatch)."""
    gluon = model_code(GLUON_FIXTURES_DIR / "text_rnn_classifier.py")
    assert 'rnn_class = {"lstm": GluonLSTM, "gru": GluonGRU}[mode]' in gluon
    assert "encoded = self.encoder(embedded, training=training)" in gluon
    source = tmp_path / "choice.py"
    source.write_text(TORCH_CHOICE)
    torch_code = model_code(source)
    assert 'rnn_class = {"lstm": LSTM, "gru": GRU}[mode]' in torch_code
    assert "out, _ = self.encoder(x, training=training)" in torch_code
    assert "return self.act(out)" in torch_code


def test_cell_api_without_mxnet():
    import tensorflow as tf

    from porter.runtime.gluon_recurrent import (
        GluonBidirectionalCell,
        GluonGRU,
        GluonLSTM,
        GluonLSTMCell,
        GluonRNNCell,
        GluonSequentialRNNCell,
    )

    stack = GluonSequentialRNNCell()
    stack.add(GluonLSTMCell(4, input_size=3))
    stack.add(GluonRNNCell(5, activation="relu"))
    states = stack.begin_state(batch_size=2, func="zeros")
    assert [tuple(s.shape) for s in states] == [(2, 4), (2, 4), (2, 5)]
    output, states = stack(tf.ones((2, 3)), states)
    assert tuple(output.shape) == (2, 5) and len(states) == 3
    outputs, states = stack.unroll(3, tf.ones((2, 3, 3)), layout="NTC", merge_outputs=False)
    assert len(outputs) == 3 and tuple(outputs[0].shape) == (2, 5)
    assert [e.key for e in stack.torch_state("cells.")][:2] == ["cells.0.i2h_weight", "cells.0.h2h_weight"]
    both = GluonBidirectionalCell(GluonLSTMCell(2, input_size=3), GluonLSTMCell(2, input_size=3))
    with pytest.raises(NotImplementedError, match="cannot be stepped"):
        both(tf.ones((1, 3)), both.begin_state(batch_size=1))
    merged, _ = both.unroll(4, tf.ones((4, 1, 3)), layout="TNC", merge_outputs=True)
    assert tuple(merged.shape) == (4, 1, 4)
    lstm = GluonLSTM(3, num_layers=2, bidirectional=True)
    assert [tuple(s.shape) for s in lstm.begin_state(batch_size=5)] == [(4, 5, 3), (4, 5, 3)]
    assert lstm.torch_state("rnn.")[0].key == "rnn._unfused.0.l_cell.i2h_weight"
    assert GluonGRU(3).torch_state()[0].key == "_unfused.0.i2h_weight"
    with pytest.raises(NotImplementedError, match="use_sequence_length"):
        GluonLSTM(3, use_sequence_length=True)
    with pytest.raises(ValueError, match="Invalid layout"):
        GluonGRU(3, layout="NCT")


WORD_LM_SOURCE = '''
import mxnet as mx
from mxnet import gluon
from mxnet.gluon import nn, rnn


class RNNModel(gluon.Block):
    """The model of mxnet's example/gluon/word_language_model: the layer chosen by `mode` in if/elif branches,
    hidden states passed in and returned."""

    def __init__(self, mode, vocab_size, num_embed, num_hidden, num_layers, dropout=0.5, **kwargs):
        super(RNNModel, self).__init__(**kwargs)
        with self.name_scope():
            self.drop = nn.Dropout(dropout)
            self.encoder = nn.Embedding(vocab_size, num_embed, weight_initializer=mx.init.Uniform(0.1))
            if mode == "rnn_relu":
                self.rnn = rnn.RNN(num_hidden, num_layers, activation="relu", dropout=dropout, input_size=num_embed)
            elif mode == "rnn_tanh":
                self.rnn = rnn.RNN(num_hidden, num_layers, dropout=dropout, input_size=num_embed)
            elif mode == "lstm":
                self.rnn = rnn.LSTM(num_hidden, num_layers, dropout=dropout, input_size=num_embed)
            elif mode == "gru":
                self.rnn = rnn.GRU(num_hidden, num_layers, dropout=dropout, input_size=num_embed)
            else:
                raise ValueError("Invalid mode %s. Options are rnn_relu, rnn_tanh, lstm, and gru" % mode)
            self.decoder = nn.Dense(vocab_size, in_units=num_hidden)
            self.num_hidden = num_hidden

    def forward(self, inputs, hidden):
        emb = self.drop(self.encoder(inputs))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output.reshape((-1, self.num_hidden)))
        return decoded, hidden

    def begin_state(self, *args, **kwargs):
        return self.rnn.begin_state(*args, **kwargs)
'''


@needs_mxnet
@pytest.mark.parametrize("mode", ["gru", "rnn_tanh"])
def test_word_language_model_matches_mxnet(mode, tmp_path):
    """Float32 token ids (T, N) into an Embedding, a time-major fused layer given the hidden state, (decoded,
    [h_n]) out; the Dropout blocks and the layer's dropout do nothing in inference."""
    from porter.verify.mxnet_reference import run_gluon_reference

    source = tmp_path / "word_lm.py"
    source.write_text(WORD_LM_SOURCE)
    convert(source, tmp_path / "port")
    init = {"mode": mode, "vocab_size": 50, "num_embed": 8, "num_hidden": 10, "num_layers": 2, "dropout": 0.2}
    generator = np.random.default_rng(1)
    inputs = [generator.integers(0, 50, (7, 3)).astype(np.float32),
              generator.standard_normal((2, 3, 10)).astype(np.float32)]
    params = tmp_path / "word_lm.params"
    reference = run_gluon_reference(source, "RNNModel", inputs, init_kwargs=init, perturb=True,
                                    save_parameters=params)
    assert [o.shape for o in reference.outputs] == [(21, 50), (2, 3, 10)]
    module = import_port(tmp_path / "port", "word_lm")
    assert_port_matches(module, module.RNNModel(**init), inputs, reference, params)


MODIFIER_SOURCE = '''
import mxnet as mx
from mxnet import gluon
from mxnet.gluon import rnn


class ModifiedCells(gluon.Block):
    """ResidualCell, ZoneoutCell and DropoutCell around cells, a HybridSequentialRNNCell holding a residual LSTM."""

    def __init__(self, **kwargs):
        super(ModifiedCells, self).__init__(**kwargs)
        with self.name_scope():
            self.res = rnn.ResidualCell(rnn.GRUCell(4, input_size=4))
            self.zoneout = rnn.ZoneoutCell(rnn.LSTMCell(4, input_size=4), zoneout_outputs=0.3, zoneout_states=0.2)
            self.drop = rnn.DropoutCell(0.5)
            self.stack = rnn.HybridSequentialRNNCell()
            self.stack.add(rnn.LSTMCell(3, input_size=4))
            self.stack.add(rnn.ResidualCell(rnn.LSTMCell(3, input_size=3)))

    def forward(self, x):
        residual, _ = self.res.unroll(3, x, merge_outputs=True)
        zoned, states = self.zoneout.unroll(3, x, merge_outputs=False)
        dropped, _ = self.drop.unroll(3, x, merge_outputs=True)
        stacked, _ = self.stack.unroll(3, x, merge_outputs=True)
        step, _ = self.stack(zoned[-1], self.stack.begin_state(batch_size=2, func=mx.nd.zeros))
        return residual, zoned[0], states[1], dropped, stacked, step
'''


@needs_mxnet
def test_modifier_cells_match_mxnet(tmp_path):
    """Residual, zoneout (inference) and dropout cells, and a hybrid sequential stack, converted and run as mxnet
    runs them; zoneout in training is refused rather than computed differently."""
    import tensorflow as tf

    from porter.verify.mxnet_reference import run_gluon_reference

    source = tmp_path / "modified_cells.py"
    source.write_text(MODIFIER_SOURCE)
    convert(source, tmp_path / "port")
    inputs = [np.random.default_rng(2).standard_normal((2, 3, 4)).astype(np.float32)]
    params = tmp_path / "modified.params"
    reference = run_gluon_reference(source, "ModifiedCells", inputs, perturb=True, save_parameters=params)
    module = import_port(tmp_path / "port", "modified_cells")
    model = module.ModifiedCells()
    assert_port_matches(module, model, inputs, reference, params)
    with pytest.raises(NotImplementedError, match="ZoneoutCell in training"):
        model(tf.constant(inputs[0]), training=True)
