"""d2l 1.0.3's `d2l/mxnet.py`, converted as installed (one call, no --class), and every model class in it matches
real mxnet 1.9.1 under `npx.set_np()`.

The file (3,400 lines) is written against mxnet's NumPy interface (`from mxnet import np, npx`, `forward(self, X)`,
`np.dot`, `npx.batch_dot`, `npx.sequence_mask`, ndarray methods with NumPy's semantics, module-level aliases such as
`d2l.matmul = np.dot` and `d2l.transpose = lambda a: a.T`) and mixes the book's models with plotting, data loading
and training code. Each model class is built small in mxnet, called once (deferred shapes are sized then), its
parameters moved off their defaults (BatchNorm statistics included), saved with `save_parameters` (the V3 .params
format numpy mode writes) and called again; the port loads that file and must match within 1e-4 of the output's
scale, eagerly and under XLA. The scratch models (LinearRegressionScratch, RNNScratch, RNNLMScratch) hold their
weights as plain arrays, which save_parameters does not write: both sides set them to the same drawn values.
Convnets trace at most 2 Transposes; sequence and attention models none beyond the source's own
`transpose`/`.T`/`swapaxes` calls (MultiHeadAttention's head split: 3 + 1 per attention).

The reference runs in .venv-mxnet by subprocess (one process for every class): it imports d2l/mxnet.py by path after
registering empty modules for what that environment lacks (pandas, IPython, matplotlib, matplotlib_inline: imported
by the book's plotting and data helpers, which no model calls); mxnet and every model line are the real ones.
"""

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from porter.convert import ConvertOptions, convert
from porter.output import write_tree
from porter.verify.compare import assert_equivalent
from porter.verify.harness import count_transposes
from porter.weights.gluon_params import read_gluon_params
from tests.mxnet.gluon_fixtures import needs_mxnet

SPEC = importlib.util.find_spec("d2l")
pytestmark = [needs_mxnet, pytest.mark.skipif(SPEC is None, reason="d2l 1.0.3 is not installed (scripts/setup.sh "
                                                                    "installs it with --no-deps)")]
SOURCE = Path(SPEC.submodule_search_locations[0]) / "mxnet.py" if SPEC is not None else None
RNN_ARGUMENT = "RNN(8)"  # RNNLM takes a recurrent model as its first argument: built on each side
SCRATCH_RNN_ARGUMENT = "RNNScratch(6, 8)"  # and RNNLMScratch a scratch one
ARGUMENTS = {RNN_ARGUMENT: ("RNN", (8,)), SCRATCH_RNN_ARGUMENT: ("RNNScratch", (6, 8))}
# the scratch models hold their weights as plain arrays (`self.W_xh = d2l.randn(...) * sigma`), which
# save_parameters does not write: both sides set these attributes to the same drawn values instead
SCRATCH = {"LinearRegressionScratch": ("w", "b"), "RNNScratch": ("W_xh", "W_hh", "b_h"),
           "RNNLMScratch": ("W_hq", "b_q", "rnn.W_xh", "rnn.W_hh", "rnn.b_h")}


def _valid_lens():
    return np.array([3.0, 5.0])


# every Block model class of the file: (constructor args, inputs(rng), most Transposes in the port's graph)
MODELS = {
    "LeNet": ((), lambda r: [r.standard_normal((2, 1, 28, 28))], 2),
    "Residual": ((4, True, 2), lambda r: [r.standard_normal((2, 3, 8, 8))], 2),
    "ResNeXtBlock": ((8, 2, 1, True, 2), lambda r: [r.standard_normal((2, 4, 8, 8))], 2),
    "SoftmaxRegression": ((5, 0.1), lambda r: [r.standard_normal((2, 7))], 0),
    "LinearRegression": ((0.1,), lambda r: [r.standard_normal((2, 3))], 0),
    "RNN": ((6,), lambda r: [r.standard_normal((4, 2, 5))], 0),
    "GRU": ((6, 2), lambda r: [r.standard_normal((4, 2, 5))], 0),
    "RNNLM": ((RNN_ARGUMENT, 6), lambda r: [r.integers(0, 6, (2, 4))], 2),  # the source's X.T and swapaxes
    "Seq2SeqEncoder": ((11, 6, 8, 2), lambda r: [r.integers(0, 11, (2, 5))], 1),  # the source's transpose(X)
    "DotProductAttention": ((0.0,), lambda r: [r.standard_normal((2, 3, 4)), r.standard_normal((2, 5, 4)),
                                               r.standard_normal((2, 5, 6)), _valid_lens()], 0),
    "AdditiveAttention": ((8, 0.0), lambda r: [r.standard_normal((2, 3, 4)), r.standard_normal((2, 5, 7)),
                                               r.standard_normal((2, 5, 6)), _valid_lens()], 0),
    "MultiHeadAttention": ((8, 2, 0.0), lambda r: [r.standard_normal((2, 3, 8)), r.standard_normal((2, 5, 8)),
                                                   r.standard_normal((2, 5, 8)), _valid_lens()], 4),
    "PositionalEncoding": ((8, 0.0), lambda r: [r.standard_normal((2, 5, 8))], 0),
    "PositionWiseFFN": ((16, 8), lambda r: [r.standard_normal((2, 5, 8))], 0),
    "AddNorm": ((0.0,), lambda r: [r.standard_normal((2, 5, 8)), r.standard_normal((2, 5, 8))], 0),
    "TransformerEncoderBlock": ((8, 16, 2, 0.0), lambda r: [r.standard_normal((2, 5, 8)), _valid_lens()], 4),
    "TransformerEncoder": ((11, 8, 16, 2, 2, 0.0), lambda r: [r.integers(0, 11, (2, 5)), _valid_lens()], 8),
    "BERTEncoder": ((11, 8, 16, 2, 2, 0.0, 50), lambda r: [r.integers(0, 11, (2, 5)), r.integers(0, 2, (2, 5)),
                                                           _valid_lens()], 8),
    "MaskLM": ((11, 8), lambda r: [r.standard_normal((2, 5, 8)), r.integers(0, 5, (2, 3))], 0),
    "NextSentencePred": ((), lambda r: [r.standard_normal((2, 8))], 0),
    "BERTModel": ((11, 8, 16, 2, 2, 0.0, 50), lambda r: [r.integers(0, 11, (2, 5)), r.integers(0, 2, (2, 5)),
                                                         _valid_lens(), r.integers(0, 5, (2, 3))], 8),
    "LinearRegressionScratch": ((3, 0.1), lambda r: [r.standard_normal((2, 3))], 0),
    "RNNScratch": ((5, 6), lambda r: [r.standard_normal((4, 2, 5))], 0),
    "RNNLMScratch": ((SCRATCH_RNN_ARGUMENT, 6), lambda r: [r.integers(0, 6, (2, 4))], 1),  # the source's X.T
    "resnet18": ((10,), lambda r: [r.standard_normal((2, 1, 16, 16))], 2),  # a factory: returns an nn.Sequential
}
FACTORIES = frozenset({"resnet18"})  # module-level functions that build a model (not classes)

REFERENCE = r'''
import importlib.util, json, sys, types
import numpy as onp
for _name in ("pandas", "requests", "IPython", "IPython.display", "matplotlib", "matplotlib.pyplot",
              "matplotlib_inline", "matplotlib_inline.backend_inline"):
    try:
        __import__(_name)
    except ImportError:
        sys.modules[_name] = types.ModuleType(_name)
for _name in list(sys.modules):
    _parent, _, _child = _name.rpartition(".")
    if _parent in sys.modules and not hasattr(sys.modules[_parent], _child):
        setattr(sys.modules[_parent], _child, sys.modules[_name])
import mxnet as mx
from mxnet import np, npx
_spec = importlib.util.spec_from_file_location("d2l_mxnet_reference", sys.argv[1])
d2l = importlib.util.module_from_spec(_spec)
sys.modules["d2l_mxnet_reference"] = d2l
_spec.loader.exec_module(d2l)
npx.set_np()
request = json.loads(open(sys.argv[2]).read())
folder = request["folder"]


def flat(result):
    if isinstance(result, (list, tuple)):
        return [y for item in result for y in flat(item)]
    return [] if result is None else [result.asnumpy()]


for name, args in request["models"].items():
    mx.random.seed(0)
    built = {text: getattr(d2l, cls)(*given) for text, (cls, given) in request["arguments"].items()}
    model = getattr(d2l, name)(*[built.get(a, a) if isinstance(a, str) else a for a in args])
    model.initialize()  # (a second call for the classes that initialize themselves only warns)
    arrays = onp.load(f"{folder}/{name}_in.npz")
    inputs = [np.array(arrays[f"arr_{i}"], dtype=arrays[f"arr_{i}"].dtype) for i in range(len(arrays.files))]
    model(*inputs)
    generator = onp.random.RandomState(0)
    for key, parameter in sorted(model.collect_params().items()):
        value = generator.rand(*parameter.shape) + 0.5 if key.endswith("var") else \
            generator.standard_normal(parameter.shape) * 0.5
        parameter.set_data(np.array(value.astype(onp.float32)))
    if list(model.collect_params().keys()):
        model.save_parameters(f"{folder}/{name}.params")
    scratch = {}
    for path in request["scratch"].get(name, ()):
        owner, _, attribute = ("model." + path).rpartition(".")
        owner = eval(owner)
        value = (generator.standard_normal(getattr(owner, attribute).shape) * 0.5).astype(onp.float32)
        setattr(owner, attribute, np.array(value))
        scratch[path] = value
    if scratch:
        onp.savez(f"{folder}/{name}_scratch.npz", **scratch)
    onp.savez(f"{folder}/{name}_out.npz", *flat(model(*inputs)))
'''


def _inputs(name):
    return [i.astype(np.float32) if i.dtype.kind == "f" else i.astype(np.int32)
            for i in MODELS[name][1](np.random.default_rng(0))]


@pytest.fixture(scope="module")
def converted_and_reference(tmp_path_factory):
    """The port's module, and the folder of mxnet's outputs and saved parameters of every model class (one mxnet
    process, started first: it runs while porter converts)."""
    from porter.verify.mxnet_reference import mxnet_python

    folder = tmp_path_factory.mktemp("d2l_mxnet_reference")
    for name in MODELS:
        np.savez(folder / f"{name}_in.npz", *_inputs(name))
    request = folder / "request.json"
    request.write_text(json.dumps({"folder": str(folder), "models": {n: list(m[0]) for n, m in MODELS.items()},
                                   "arguments": ARGUMENTS, "scratch": SCRATCH}))
    script = folder / "reference.py"
    script.write_text(REFERENCE)
    process = subprocess.Popen([str(mxnet_python()), str(script), str(SOURCE), str(request)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        out = tmp_path_factory.mktemp("d2l_mxnet") / "out"
        conversion = convert(ConvertOptions(SOURCE, out))
        write_tree(out, conversion.files)
        spec = importlib.util.spec_from_file_location("d2l_mxnet_port",
                                                      out / conversion.manifest["sources"][0]["module"])
        module = importlib.util.module_from_spec(spec)
        sys.modules["d2l_mxnet_port"] = module
        spec.loader.exec_module(module)
    finally:
        _, errors = process.communicate(timeout=600)
    assert process.returncode == 0, errors[-3000:]
    return conversion, module, folder


@pytest.fixture(scope="module")
def converted(converted_and_reference):
    return converted_and_reference[:2]


@pytest.fixture(scope="module")
def reference(converted_and_reference):
    return converted_and_reference[2]


def test_the_file_converts_in_one_call_with_every_model_class(converted):
    conversion, _ = converted
    assert conversion.exit_code in (0, 1)  # 1: losses and trainers in the training methods are stubs
    classes = {c["name"]: c for c in conversion.manifest["sources"][0]["classes"]}
    assert set(MODELS) - FACTORIES <= set(classes)
    training = ("mxnet.gluon.Trainer", "mxnet.gluon.loss.", "mxnet.autograd.")
    for name in set(MODELS) - FACTORIES:  # the only stubs: training code (losses, trainers) the models inherit
        assert all(u["construct"].startswith(training) or u["construct"] == "Tensor.data"
                   for u in classes[name]["unsupported"]), (name, classes[name]["unsupported"])
    # not one mxnet.np / mxnet.npx call of the file is left a stub
    stubs = [u["construct"] for c in classes.values() for u in c["unsupported"]]
    assert not [s for s in stubs if s.startswith(("mxnet.np.", "mxnet.npx."))], stubs
    assert not {"Trainer", "DataModule", "ProgressBoard", "Animator", "Timer", "Vocab"} & set(classes)


def _flat(result):
    if isinstance(result, (tuple, list)):
        return [y for item in result for y in _flat(item)]
    return [] if result is None else [np.asarray(result)]


def _build(module, name):
    built = {text: getattr(module, cls)(*given) for text, (cls, given) in ARGUMENTS.items()}
    return getattr(module, name)(*[built.get(a, a) if isinstance(a, str) else a for a in MODELS[name][0]])


def _set_scratch(port, arrays):
    """The scratch weights mxnet drew, set on the port (a variable is assigned, a plain array replaced)."""
    import tensorflow as tf

    for path in arrays.files:
        owner = port
        *parents, attribute = path.split(".")
        for parent in parents:
            owner = getattr(owner, parent)
        current = getattr(owner, attribute)
        if hasattr(current, "assign"):
            current.assign(arrays[path])
        else:
            setattr(owner, attribute, tf.constant(arrays[path]))


@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_class_matches_mxnet(converted, reference, name):
    import tensorflow as tf

    _, module = converted
    inputs = _inputs(name)
    with np.load(reference / f"{name}_out.npz") as archive:
        expected = [archive[f"arr_{i}"] for i in range(len(archive.files))]
    port = _build(module, name)
    port(*inputs)  # deferred shapes are sized at the first call
    params = reference / f"{name}.params"
    if params.exists():  # (attention and positional encoding have no parameters)
        module.load_state_dict(port, read_gluon_params(params))
    if (reference / f"{name}_scratch.npz").exists():
        with np.load(reference / f"{name}_scratch.npz") as arrays:
            _set_scratch(port, arrays)
    eager = _flat(port(*inputs, training=False))
    xla = _flat(tf.function(lambda *a: port(*a, training=False), jit_compile=True)(*[tf.constant(i) for i in inputs]))
    assert len(eager) == len(xla) == len(expected)
    for want, got, compiled in zip(expected, eager, xla, strict=True):
        assert want.shape == got.shape == compiled.shape, (name, want.shape, got.shape)
        assert_equivalent(want, got, tolerance=1e-4, what=name)
        assert_equivalent(want, compiled, tolerance=1e-4, what=f"{name} (XLA)")
    transposes = count_transposes(port, inputs)
    print(f"d2l mxnet {name}: {transposes} Transposes")
    assert transposes <= MODELS[name][2]
