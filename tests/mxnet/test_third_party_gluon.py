"""Gluon model code written outside this project, converted as it is (the files are vendored unchanged under
tests/mxnet/third_party/, see its README for sources and licenses): d2lzh 1.0.0's `utils.py` (a library file of the
Chinese "Dive into Deep Learning" book: a Residual block, the `resnet18(num_classes)` factory and RNNModel mixed
with plotting, data loading and training loops), and GluonNLP 0.10.0's model files (StandardRNN, BERTEncoder and
BERTModel, TransformerEncoder; fetched by scripts/setup.sh). Every port loads the `.params` file real mxnet 1.9.1 wrote
(BatchNorm statistics and affine parameters moved off their defaults) and matches mxnet within 1e-4 of the output's
scale, eagerly and under XLA; convnets trace at most 2 Transposes, sequence models none.

The reference side imports the file by path through a small factory module written beside the test's scratch files:
it registers empty `IPython` and `matplotlib` modules first (imported by the book's plotting helpers, which the
models never call; `.venv-mxnet` has neither), so mxnet itself and every model line are the real ones."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest

from porter.verify.harness import inference_trace, transposes_in
from porter.weights.gluon_params import read_gluon_params
from tests.mxnet.gluon_fixtures import needs_mxnet

REPOSITORY = Path(__file__).resolve().parents[2]
THIRD_PARTY = Path(__file__).resolve().parent / "third_party"
D2LZH_UTILS = THIRD_PARTY / "d2lzh" / "utils.py"

# the plotting helpers' imports, empty on the reference side only (the models never reach them)
FACTORIES = '''
import importlib.util
import sys
import types

for _name in ("IPython", "IPython.display", "matplotlib", "matplotlib.pyplot"):
    sys.modules.setdefault(_name, types.ModuleType(_name))
sys.modules["IPython"].display = sys.modules["IPython.display"]
sys.modules["matplotlib"].pyplot = sys.modules["matplotlib.pyplot"]

_spec = importlib.util.spec_from_file_location("third_party_source", {source!r})
source = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(source)
from mxnet.gluon import rnn


def residual(**kwargs):
    return source.Residual(**kwargs)


def resnet18(**kwargs):
    return source.resnet18(**kwargs)


def rnn_model(kind, hidden, vocab_size, num_layers=1):
    return source.RNNModel(getattr(rnn, kind)(hidden, num_layers=num_layers), vocab_size)
'''


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return tmp_path_factory.mktemp("third-party-gluon")


def _port(scratch, source):
    out = scratch / f"{source.parent.name}_{source.stem}"
    if not out.exists():
        completed = subprocess.run([sys.executable, "-m", "porter", "convert", str(source), "-o", str(out)],
                                   capture_output=True, text=True, cwd=REPOSITORY, check=False)
        assert completed.returncode in (0, 1), completed.stderr
    spec = importlib.util.spec_from_file_location(f"third_party_{source.parent.name}_{source.stem}",
                                                  out / f"{source.stem}_keras.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return out, module


def _factories(scratch, source):
    path = scratch / f"factories_{source.parent.name}.py"
    path.write_text(FACTORIES.format(source=str(source)))
    return path


def test_d2lzh_library_file_converts_models_and_lists_the_rest(scratch):
    out, _ = _port(scratch, D2LZH_UTILS)
    manifest = json.loads((out / "porter-manifest.json").read_text())
    classes = {c["name"]: c for c in manifest["sources"][0]["classes"]}
    assert {name: c["status"] for name, c in classes.items()} == {"Residual": "converted", "RNNModel": "converted"}
    porting = (out / "PORTING.md").read_text()
    # plotting, data loading and training code is read, left out and listed
    for helper in ("def show_images", "def load_data_fashion_mnist", "def train_ch5", "def train_and_predict_rnn",
                   "class VOCSegDataset", "class Benchmark"):
        assert helper in porting.split("## Not carried over", 1)[1]


def _matches(model, inputs, reference, params, module, keywords=()):
    """The worst error of `model`'s outputs on `inputs` (the last len(keywords) passed by those names) against
    mxnet's, eagerly and under XLA, once the .params file is loaded; and the Transposes its graph traces."""
    import tensorflow as tf

    def run(*arrays, training=False):
        split = len(arrays) - len(keywords)
        return model(*arrays[:split], **dict(zip(keywords, arrays[split:])), training=training)

    tensors = [tf.constant(x) for x in inputs]
    run(*tensors)  # deferred (in_units=0) layers are built on a first call
    module.load_state_dict(model, read_gluon_params(params))
    eager = _flat(run(*tensors))
    compiled, trace = inference_trace(run, inputs, jit_compile=True)  # one trace: run under XLA, Transposes counted
    xla = _flat(compiled(*tensors))
    assert len(eager) == len(xla) == len(reference.outputs)
    errors = [_error(got, expected) for outputs in (eager, xla) for got, expected in zip(outputs, reference.outputs)]
    return max(errors), transposes_in(trace)


D2LZH_CASES = [
    ("residual", {"num_channels": 8, "use_1x1conv": True, "strides": 2}, (2, 4, 12, 12), 2),
    # the factory puts Residual blocks straight into nn.Sequentials and nothing calls them in a `forward` porter
    # reads: the factory tells each one to run its channels-last case (0 Transposes: one input channel goes
    # channels-last by a reshape, the Dense reads a flat vector; 24 when each block converted in and out)
    ("resnet18", {"num_classes": 10}, (2, 1, 32, 32), 2),
]


@needs_mxnet
@pytest.mark.parametrize("factory, kwargs, shape, most_transposes", D2LZH_CASES, ids=[c[0] for c in D2LZH_CASES])
def test_d2lzh_convnet_matches_mxnet(scratch, factory, kwargs, shape, most_transposes):
    from porter.verify.mxnet_reference import run_gluon_reference

    _, module = _port(scratch, D2LZH_UTILS)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    params = scratch / f"d2lzh_{factory}.params"
    reference = run_gluon_reference(_factories(scratch, D2LZH_UTILS), factory, [x], init_kwargs=kwargs, perturb=True,
                                    save_parameters=params)
    model = module.Residual(**kwargs) if factory == "residual" else module.resnet18(**kwargs)
    error, transposes = _matches(model, [x], reference, params, module)
    print(f"d2lzh {factory}: worst error {error:.2e} of the output scale (eager and XLA), {transposes} Transposes")
    assert error <= 1e-4
    assert transposes <= most_transposes


@needs_mxnet
@pytest.mark.parametrize("kind, num_layers", [("RNN", 1), ("GRU", 1), ("LSTM", 2)])
def test_d2lzh_rnn_model_matches_mxnet(scratch, kind, num_layers):
    """RNNModel(rnn_layer, vocab_size): the book builds the recurrent layer outside (`rnn.RNN(256)`) and passes it
    in, as the port's caller passes the runtime's layer; token ids arrive (batch, steps) as float32, one-hot encoded
    time-major (`nd.one_hot(inputs.T, vocab_size)`), and the state goes in and comes back."""
    _, module = _port(scratch, D2LZH_UTILS)
    batch, steps, hidden, vocab = 3, 5, 6, 11
    generator = np.random.default_rng(1)
    tokens = generator.integers(0, vocab, (batch, steps)).astype(np.float32)
    states = [generator.standard_normal((num_layers, batch, hidden)).astype(np.float32)
              for _ in range(2 if kind == "LSTM" else 1)]
    kwargs = {"kind": kind, "hidden": hidden, "vocab_size": vocab, "num_layers": num_layers}
    params = scratch / f"d2lzh_rnn_{kind}.params"
    reference = _rnn_reference(scratch, kwargs, tokens, states, params)
    from porter.runtime import gluon_recurrent  # the layer comes from outside the file: the port ships none

    layer = getattr(gluon_recurrent, f"Gluon{kind}")(hidden, num_layers=num_layers)
    model = module.RNNModel(layer, vocab)
    import tensorflow as tf

    def run(*arrays):
        state = list(arrays[1:]) if kind == "LSTM" else arrays[1]
        return model(arrays[0], state, training=False)

    tensors = [tf.constant(tokens)] + [tf.constant(s) for s in states]
    run(*tensors)
    module.load_state_dict(model, read_gluon_params(params))
    eager = _flat(run(*tensors))
    compiled = tf.function(run, jit_compile=True)
    xla = _flat(compiled(*tensors))
    assert len(eager) == len(xla) == len(reference)
    error = max(_error(got, expected) for outputs in (eager, xla) for got, expected in zip(outputs, reference))
    transposes = _count_transposes(compiled, tensors)  # the trace XLA ran
    print(f"d2lzh RNNModel({kind}, num_layers={num_layers}): worst error {error:.2e} of the output scale "
          f"(eager and XLA), {transposes} Transposes")
    assert error <= 1e-4
    assert transposes <= 1  # the source's own `inputs.T`; no layout conversion


def _rnn_reference(scratch, kwargs, tokens, states, params):
    """mxnet's outputs of the book's RNNModel on (tokens, state): the state passed as the book passes it (one
    array for RNN/GRU, a list for LSTM), through a one-off script since the driver hands inputs over flat."""
    from porter.verify.mxnet_reference import mxnet_python

    factories = _factories(scratch, D2LZH_UTILS)
    script = f'''
import sys
import numpy as np
import mxnet as mx
sys.path.insert(0, {str(factories.parent)!r})
import {factories.stem} as factories
mx.random.seed(0)
np.random.seed(0)
net = factories.rnn_model(**{kwargs!r})
net.initialize()
arrays = dict(np.load({str(scratch / "rnn_in.npz")!r}))
tokens = mx.nd.array(arrays["tokens"])
states = [mx.nd.array(arrays[f"state_{{i}}"]) for i in range(len(arrays) - 1)]
state = states if len(states) > 1 else states[0]
net(tokens, state)
rng = np.random.RandomState(0)
for name, parameter in sorted(net.collect_params().items()):
    parameter.set_data(mx.nd.array(rng.standard_normal(parameter.shape).astype(np.float32) * 0.5))
net.save_parameters({str(params)!r})
output, state = net(tokens, state)
outputs = [output] + (list(state) if isinstance(state, (list, tuple)) else [state])
np.savez({str(scratch / "rnn_out.npz")!r}, *[o.asnumpy() for o in outputs])
'''
    np.savez(scratch / "rnn_in.npz", tokens=tokens, **{f"state_{i}": s for i, s in enumerate(states)})
    completed = subprocess.run([str(mxnet_python()), "-c", script], capture_output=True, text=True, timeout=600,
                               check=False)
    assert completed.returncode == 0, completed.stderr[-3000:]
    with np.load(scratch / "rnn_out.npz") as archive:
        return [archive[f"arr_{i}"] for i in range(len(archive.files))]


def _count_transposes(function, tensors):
    """Transpose ops `function` (a tf.function: its trace for `tensors` is reused) traces on `tensors`."""
    graph = function.get_concrete_function(*tensors).graph
    return sum(op.type == "Transpose" for op in graph.get_operations())


def _flat(result):
    if isinstance(result, (tuple, list)):
        return [array for item in result for array in _flat(item)]
    return [np.asarray(result)]


def _error(got, expected):
    assert got.shape == expected.shape, (got.shape, expected.shape)
    return float(np.max(np.abs(got - expected))) / (float(np.max(np.abs(expected))) or 1.0)


MASKED_SCORE = Path(__file__).resolve().parent / "models" / "masked_score.py"


@needs_mxnet
def test_gluonnlp_style_masked_score_matches_mxnet(scratch):
    """GluonNLP's idioms convert (exit 1: the class defined inside `__init__` is a stub naming its line) and the
    port of the other path matches mxnet: `amp._amp_initialized` is False, `F == mx.nd` True, F.where masks with a
    number mask, `isinstance(..., gluon.Block)` / `ndarray.NDArray` read the port's layers and tensors."""
    from porter.verify.mxnet_reference import run_gluon_reference

    out = scratch / "masked_score"
    completed = subprocess.run([sys.executable, "-m", "porter", "convert", str(MASKED_SCORE), "-o", str(out)],
                               capture_output=True, text=True, cwd=REPOSITORY, check=False)
    assert completed.returncode == 1, completed.stderr
    manifest = json.loads((out / "porter-manifest.json").read_text())
    [cell] = [c for c in manifest["sources"][0]["classes"] if c["name"] == "MaskedScore"]
    assert [u["construct"] for u in cell["unsupported"]] == ["class _NormalizedProjection"]
    spec = importlib.util.spec_from_file_location("third_party_masked_score", out / "masked_score_keras.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    generator = np.random.default_rng(2)
    x = generator.standard_normal((2, 3, 4)).astype(np.float32)
    mask = (generator.random((2, 3, 4)) > 0.3).astype(np.float32)
    params = scratch / "masked_score.params"
    reference = run_gluon_reference(MASKED_SCORE, "MaskedScore", [x, mask], init_kwargs={"units": 4}, perturb=True,
                                    save_parameters=params)
    error, transposes = _matches(module.MaskedScore(units=4), [x, mask], reference, params, module)
    assert error <= 1e-5
    assert transposes == 0
    with pytest.raises(NotImplementedError, match="masked_score.py:24"):
        module.MaskedScore(units=4, normalized=True)


# GluonNLP 0.10's sources (Apache-2.0), not vendored: scripts/setup.sh fetches the sdist from the package index and
# unpacks it into the git-ignored .cache/gluonnlp-0.10.0 (PORTER_GLUONNLP_SRC names another `src` folder)
GLUONNLP_SOURCE = Path(os.environ.get("PORTER_GLUONNLP_SRC", REPOSITORY / ".cache" / "gluonnlp-0.10.0" / "src")) / \
    "gluonnlp"
needs_gluonnlp = pytest.mark.skipif(not (GLUONNLP_SOURCE / "model").is_dir(), reason=f"GluonNLP 0.10's sources are "
                                    f"not in {GLUONNLP_SOURCE.parent} (scripts/setup.sh fetches them; or set "
                                    "PORTER_GLUONNLP_SRC to an unpacked sdist's src folder)")
# the reference side enters gluonnlp.model without the package initialisers (they import the data pipeline, whose
# Cython tokenizer is not built), with empty stand-ins for the two names the model files import but the language
# models never use (pretrained-vocabulary loading, the multi-GPU helper)
GLUONNLP_REFERENCE = '''
import sys, types
import numpy as np
import mxnet as mx
source = {source!r}
for name, path in (("gluonnlp", source), ("gluonnlp.model", source + "/model"),
                   ("gluonnlp.model.train", source + "/model/train")):
    module = types.ModuleType(name)
    module.__path__ = [path]
    sys.modules[name] = module
sys.modules["gluonnlp.utils"] = types.ModuleType("gluonnlp.utils")
sys.modules["gluonnlp.utils"].Parallelizable = object
for name in ("gluonnlp.data", "gluonnlp.data.utils"):
    sys.modules[name] = types.ModuleType(name)
sys.modules["gluonnlp.data.utils"]._load_pretrained_vocab = None
import gluonnlp.model.train.language_model as models
mx.random.seed(0)
net = getattr(models, {name!r})(**{kwargs!r})
net.initialize()
tokens = mx.nd.array(np.load({inputs!r}))
net(tokens)
rng = np.random.RandomState(0)
for key, parameter in sorted(net.collect_params().items()):
    parameter.set_data(mx.nd.array(rng.standard_normal(parameter.shape).astype(np.float32) * 0.3))
net.save_parameters({params!r})
def flat(x):
    return [a for item in x for a in flat(item)] if isinstance(x, (list, tuple)) else [x.asnumpy()]
np.savez({outputs!r}, *flat(net(tokens)))
'''


@needs_mxnet
@needs_gluonnlp
@pytest.mark.parametrize("mode", ["lstm", "gru"])
def test_gluonnlp_standard_rnn_matches_mxnet(scratch, mode):
    """GluonNLP's StandardRNN language model (model/train/language_model.py, converted as it sits in the package):
    embedding, a 2-layer fused RNN with its own begin_state (`if F == nd:`), variational dropout over time
    (`F.Dropout(axes=(0,))`), dense decoder; outputs and states match mxnet in inference, eagerly and under XLA."""
    from porter.verify.mxnet_reference import mxnet_python

    source = GLUONNLP_SOURCE / "model" / "train" / "language_model.py"
    _, module = _port(scratch, source)
    kwargs = {"mode": mode, "vocab_size": 20, "embed_size": 8, "hidden_size": 8, "num_layers": 2, "dropout": 0.2}
    tokens = np.random.default_rng(3).integers(0, 20, (5, 3)).astype(np.float32)  # (T, N) as GluonNLP feeds it
    np.save(scratch / f"lm_{mode}_in.npy", tokens)
    params, outputs = scratch / f"lm_{mode}.params", scratch / f"lm_{mode}_out.npz"
    script = GLUONNLP_REFERENCE.format(source=str(GLUONNLP_SOURCE), name="StandardRNN", kwargs=kwargs,
                                       inputs=str(scratch / f"lm_{mode}_in.npy"), params=str(params),
                                       outputs=str(outputs))
    completed = subprocess.run([str(mxnet_python()), "-c", script], capture_output=True, text=True, timeout=600,
                               check=False)
    assert completed.returncode == 0, completed.stderr[-3000:]
    with np.load(outputs) as archive:
        reference = [archive[f"arr_{i}"] for i in range(len(archive.files))]

    class Reference:
        pass

    expected = Reference()
    expected.outputs = reference
    error, transposes = _matches(module.StandardRNN(**kwargs), [tokens], expected, params, module)
    print(f"gluonnlp StandardRNN({mode}): worst error {error:.2e} of the output scale (eager and XLA), "
          f"{transposes} Transposes")
    assert error <= 1e-4
    assert transposes == 0


# BERT and the Transformer encoder: the model files import the package's data, pretrained-weight and multi-GPU
# helpers, which these models never call; on the reference side those modules are empty stand-ins
GLUONNLP_MODEL_REFERENCE = '''
import sys, types
import numpy as np
import mxnet as mx
source = {source!r}
for name, path in (("gluonnlp", source), ("gluonnlp.model", source + "/model"), ("gluonnlp.utils", None),
                   ("gluonnlp.utils.parallel", None), ("gluonnlp.data", None), ("gluonnlp.data.utils", None)):
    module = types.ModuleType(name)
    if path is not None:
        module.__path__ = [path]
    sys.modules[name] = module
sys.modules["gluonnlp.utils"].Parallelizable = sys.modules["gluonnlp.utils.parallel"].Parallelizable = object
sys.modules["gluonnlp.data.utils"]._load_pretrained_vocab = None
import gluonnlp.model.{module} as models
mx.random.seed(0)
net = {factory}
net.initialize()
arrays = dict(np.load({inputs!r}))
inputs = [mx.nd.array(arrays["arr_%d" % i], dtype=arrays["arr_%d" % i].dtype) for i in range(len(arrays))]
keywords = {keywords!r}
split = len(inputs) - len(keywords)
call = lambda: net(*inputs[:split], **dict(zip(keywords, inputs[split:])))
call()
rng = np.random.RandomState(0)
for key, parameter in sorted(net.collect_params().items()):
    scale = 1.0 if key.endswith(("gamma", "beta")) else 0.3
    parameter.set_data(mx.nd.array(rng.standard_normal(parameter.shape).astype(np.float32) * scale))
net.save_parameters({params!r})
def flat(x):
    return [a for item in x for a in flat(item)] if isinstance(x, (list, tuple)) else [x.asnumpy()]
np.savez({outputs!r}, *flat(call()))
'''


def _gluonnlp_reference(scratch, tag, module, factory, inputs, keywords=()):
    """mxnet's outputs of `factory` (Python text building the model from `models`, GluonNLP's `module`) on
    `inputs` (the last len(keywords) passed by those names), its parameters perturbed and saved to
    <scratch>/<tag>.params: (outputs, params path)."""
    from porter.verify.mxnet_reference import mxnet_python

    np.savez(scratch / f"{tag}_in.npz", *inputs)
    params, outputs = scratch / f"{tag}.params", scratch / f"{tag}_out.npz"
    script = GLUONNLP_MODEL_REFERENCE.format(source=str(GLUONNLP_SOURCE), module=module, factory=factory,
                                             inputs=str(scratch / f"{tag}_in.npz"), params=str(params),
                                             outputs=str(outputs), keywords=tuple(keywords))
    completed = subprocess.run([str(mxnet_python()), "-c", script], capture_output=True, text=True, timeout=600,
                               check=False)
    assert completed.returncode == 0, completed.stderr[-3000:]
    with np.load(outputs) as archive:
        return [archive[f"arr_{i}"] for i in range(len(archive.files))], params


class _Reference:
    def __init__(self, outputs):
        self.outputs = outputs


BERT_SIZES = {"num_layers": 2, "units": 16, "hidden_size": 32, "max_length": 12, "num_heads": 2, "dropout": 0.1}
TRANSFORMER_SIZES = {"attention_cell": "multi_head", "num_layers": 2, "units": 16, "hidden_size": 32,
                     "max_length": 12, "num_heads": 2, "scaled": True, "dropout": 0.1}


class _Encoder(NamedTuple):
    """A GluonNLP encoder as it sits in the package, and what its port is held to."""
    module: str  # model/<module>.py
    name: str
    sizes: dict
    seed: int
    time_major: bool  # (T, N, C) input, else (N, T, C)
    lengths: list  # the valid lengths of the three sequences
    most_transposes: int


GLUONNLP_ENCODERS = {
    # time-major input, learned positions (`F.Embedding` of `arange_like`), the fused interleaved self-attention
    # with its masked softmax (`use_length`), GELU feed-forward: no Transpose
    "bert": _Encoder("bert", "BERTEncoder", BERT_SIZES, 4, True, [7, 3, 1], 0),
    # batch-major input, a `broadcast_lesser` padding mask, multi-head scaled dot-product attention (`div_sqrt_dim`,
    # `broadcast_axis`; the cells of attention_cell.py come along), the sinusoidal positions held as a constant:
    # the only Transposes are the source's own F.transpose, per layer 3 head splits and 1 merge
    "transformer": _Encoder("transformer", "TransformerEncoder", TRANSFORMER_SIZES, 6, False, [7, 2, 5], 8),
}


@needs_mxnet
@needs_gluonnlp
@pytest.mark.parametrize("with_lengths", [True, False], ids=["valid-length", "no-length"])
@pytest.mark.parametrize("kind", sorted(GLUONNLP_ENCODERS))
def test_gluonnlp_encoder_matches_mxnet(scratch, kind, with_lengths):
    """GluonNLP's BERTEncoder (model/bert.py) and TransformerEncoder (model/transformer.py), converted as they sit
    in the package: outputs match mxnet eagerly and under XLA, with no more Transposes than GLUONNLP_ENCODERS
    allows (see there what each exercises)."""
    encoder = GLUONNLP_ENCODERS[kind]
    _, module = _port(scratch, GLUONNLP_SOURCE / "model" / f"{encoder.module}.py")
    generator = np.random.default_rng(encoder.seed)
    steps, batch = 7, 3
    shape = (steps, batch, 16) if encoder.time_major else (batch, steps, 16)
    inputs = [generator.standard_normal(shape).astype(np.float32)]
    if with_lengths:
        inputs.append(np.array(encoder.lengths, np.float32))
    tag, keywords = f"{kind}_encoder_{with_lengths}", ("valid_length",) if with_lengths else ()
    reference, params = _gluonnlp_reference(scratch, tag, encoder.module,
                                            f"models.{encoder.name}(**{encoder.sizes!r})", inputs, keywords)
    error, transposes = _matches(getattr(module, encoder.name)(**encoder.sizes), inputs, _Reference(reference),
                                 params, module, keywords)
    print(f"gluonnlp {encoder.name} ({tag}): worst error {error:.2e} of the output scale (eager and XLA), "
          f"{transposes} Transposes")
    assert error <= 1e-4
    assert transposes <= encoder.most_transposes


@needs_mxnet
@needs_gluonnlp
def test_gluonnlp_bert_model_matches_mxnet(scratch):
    """BERTModel (word and token-type embeddings, the encoder, pooler, next-sentence classifier and the masked-LM
    decoder reading `masked_positions` by gather_nd + reshape_like, its output Dense sharing the word embedding's
    weight): every output matches mxnet; the source's own two transposes (batch-major in and out) are the only
    ones."""
    _, module = _port(scratch, GLUONNLP_SOURCE / "model" / "bert.py")
    generator = np.random.default_rng(5)
    batch, steps, vocab = 2, 6, 50
    tokens = generator.integers(0, vocab, (batch, steps)).astype(np.float32)
    types = generator.integers(0, 2, (batch, steps)).astype(np.float32)
    lengths = np.array([6, 4], np.float32)
    masked = np.array([[1, 3], [0, 2]], np.float32)
    inputs = [tokens, types, lengths, masked]
    factory = (f"models.BERTModel(models.BERTEncoder(**{BERT_SIZES!r}), vocab_size={vocab}, "
               f"token_type_vocab_size=2, units=16, embed_size=16)")
    reference, params = _gluonnlp_reference(scratch, "bert_model", "bert", factory, inputs)
    model = module.BERTModel(module.BERTEncoder(**BERT_SIZES), vocab_size=vocab, token_type_vocab_size=2, units=16,
                             embed_size=16)
    error, transposes = _matches(model, inputs, _Reference(reference), params, module)
    print(f"gluonnlp BERTModel: worst error {error:.2e} of the output scale (eager and XLA), {transposes} Transposes")
    assert error <= 1e-4
    assert transposes <= 2
