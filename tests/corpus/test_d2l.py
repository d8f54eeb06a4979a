"""d2l 1.0.3's `d2l/torch.py`, converted as installed (one call, no --class), and every model class in it matches
torch.

The file (140 KB, 59 classes) mixes the book's models with plotting (matplotlib, IPython), data loading
(torchvision, pandas, requests), training utilities (Trainer, Animator, Timer) and HPO code, and names itself
through `d2l = sys.modules[__name__]`. Each model class is built small, called once (its lazy layers are sized
then), its weights moved off their defaults and copied into the port through `load_state_dict`; outputs must match
within 1e-4 of their scale.

The torch reference imports d2l/torch.py itself. That file imports matplotlib, pandas, torchvision, scipy and PIL
at its top; where one of them is missing (or broken) in this environment, an empty stand-in module takes its place
for the reference's import only (sys.modules restored afterwards): the model classes never touch them. torch is
never stood in for.
"""

import contextlib
import importlib
import importlib.util
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from porter.convert import ConvertOptions
from porter.output import write_tree
from porter.verify.compare import assert_equivalent
from porter.verify.harness import count_transposes, import_path
from tests.in_process import convert  # porter convert's collector settings (tests/in_process.py)

SPEC = importlib.util.find_spec("d2l")
pytestmark = pytest.mark.skipif(SPEC is None, reason="d2l 1.0.3 is not installed (scripts/setup.sh installs it "
                                                     "with --no-deps)")
SOURCE = Path(SPEC.submodule_search_locations[0]) / "torch.py" if SPEC is not None else None
# imported at the top of d2l/torch.py for plotting and data, never by a model class
NOT_MODEL_MODULES = ("matplotlib", "matplotlib.pyplot", "matplotlib_inline", "matplotlib_inline.backend_inline",
                     "pandas", "torchvision", "torchvision.transforms", "scipy", "scipy.spatial", "PIL", "PIL.Image",
                     "IPython", "IPython.display", "requests")
# every nn.Module model class of the file: (constructor args, inputs(rng)); RNNLM takes an RNN as its first arg
MODELS = {
    "LeNet": ((), lambda r: [r.standard_normal((2, 1, 28, 28))]),
    "Residual": ((4, True, 2), lambda r: [r.standard_normal((2, 3, 8, 8))]),
    "ResNeXtBlock": ((8, 2, 1, True, 2), lambda r: [r.standard_normal((2, 4, 8, 8))]),
    "SoftmaxRegression": ((5, 0.1), lambda r: [r.standard_normal((2, 7))]),
    "LinearRegression": ((0.1,), lambda r: [r.standard_normal((2, 3))]),
    "RNN": ((5, 6), lambda r: [r.standard_normal((4, 2, 5))]),
    "GRU": ((5, 6, 2), lambda r: [r.standard_normal((4, 2, 5))]),
    "RNNLM": (("RNN(6, 8)", 6), lambda r: [r.integers(0, 6, (2, 4))]),
    "Seq2SeqEncoder": ((11, 6, 8, 2), lambda r: [r.integers(0, 11, (2, 5))]),
    "DotProductAttention": ((0.0,), lambda r: [r.standard_normal((2, 3, 4)), r.standard_normal((2, 5, 4)),
                                               r.standard_normal((2, 5, 6)), np.array([3, 5])]),
    "AdditiveAttention": ((8, 0.0), lambda r: [r.standard_normal((2, 3, 4)), r.standard_normal((2, 5, 7)),
                                               r.standard_normal((2, 5, 6)), np.array([3, 5])]),
    "MultiHeadAttention": ((8, 2, 0.0), lambda r: [r.standard_normal((2, 3, 8)), r.standard_normal((2, 5, 8)),
                                                   r.standard_normal((2, 5, 8)), np.array([3, 5])]),
    "PositionalEncoding": ((8, 0.0), lambda r: [r.standard_normal((2, 5, 8))]),
    "PositionWiseFFN": ((16, 8), lambda r: [r.standard_normal((2, 5, 8))]),
    "AddNorm": ((8, 0.0), lambda r: [r.standard_normal((2, 5, 8)), r.standard_normal((2, 5, 8))]),
    "TransformerEncoderBlock": ((8, 16, 2, 0.0), lambda r: [r.standard_normal((2, 5, 8)), np.array([3, 5])]),
    "TransformerEncoder": ((11, 8, 16, 2, 2, 0.0), lambda r: [r.integers(0, 11, (2, 5)), np.array([3, 5])]),
    "BERTEncoder": ((11, 8, 16, 2, 2, 0.0, 50), lambda r: [r.integers(0, 11, (2, 5)), r.integers(0, 2, (2, 5)),
                                                           np.array([3, 5])]),
    "MaskLM": ((11, 8), lambda r: [r.standard_normal((2, 5, 8)), r.integers(0, 5, (2, 3))]),
    "NextSentencePred": ((), lambda r: [r.standard_normal((2, 8))]),
    "BERTModel": ((11, 8, 16, 2, 2, 0.0, 50), lambda r: [r.integers(0, 11, (2, 5)), r.integers(0, 2, (2, 5)),
                                                         np.array([3, 5]), r.integers(0, 5, (2, 3))]),
}


@contextlib.contextmanager
def stand_ins_for_missing(names):
    """Empty modules for those of `names` that do not import here, for the duration of the block."""
    saved = dict(sys.modules)
    for name in names:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - missing, or installed against another torch (torchvision)
            for key in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
                del sys.modules[key]
            module = types.ModuleType(name)
            module.__path__ = []
            module.__getattr__ = _stand_in_attribute
            sys.modules[name] = module
            parent, _, child = name.rpartition(".")
            if parent in sys.modules:
                setattr(sys.modules[parent], child, module)
    try:
        yield
    finally:
        for key in set(sys.modules) - set(saved):
            if key.split(".")[0] in {n.split(".")[0] for n in names}:
                del sys.modules[key]
        sys.modules.update({k: v for k, v in saved.items() if k.split(".")[0] in {n.split(".")[0] for n in names}})


def _stand_in_attribute(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return lambda *args, **kwargs: None


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    out = tmp_path_factory.mktemp("d2l") / "out"
    conversion = convert(ConvertOptions(SOURCE, out))
    write_tree(out, conversion.files)
    with stand_ins_for_missing(NOT_MODEL_MODULES):
        reference = import_path(SOURCE, "d2l_torch_reference")
    return conversion, reference, import_path(out / conversion.manifest["sources"][0]["module"])


def test_the_file_converts_in_one_call_with_every_model_class(converted):
    conversion, _, _ = converted
    assert conversion.exit_code in (0, 1)  # 1: optimizers in configure_optimizers are stubs
    classes = {c["name"]: c for c in conversion.manifest["sources"][0]["classes"]}
    assert set(MODELS) <= set(classes)
    for name in MODELS:  # the only stubs: optimizers built in configure_optimizers (training code)
        assert all(u["construct"].startswith("torch.optim.") for u in classes[name]["unsupported"]), \
            (name, classes[name]["unsupported"])
    # plotting, data and training classes are not model classes
    assert not {"Trainer", "DataModule", "ProgressBoard", "Animator", "Timer", "Vocab"} & set(classes)


def _build(module, name):
    args, _ = MODELS[name]
    args = [module.RNN(6, 8) if arg == "RNN(6, 8)" else arg for arg in args]
    return getattr(module, name)(*args)


def _outputs(result, to_numpy):
    if isinstance(result, (tuple, list)):
        return [y for item in result for y in _outputs(item, to_numpy)]
    return [] if result is None else [to_numpy(result)]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_class_matches_torch(converted, name):
    import torch

    _, reference_module, keras_module = converted
    inputs = [i.astype(np.float32) if i.dtype.kind == "f" else i.astype(np.int64)
              for i in MODELS[name][1](np.random.default_rng(0))]
    torch.manual_seed(0)
    _assert_matches(_build(reference_module, name), _build(keras_module, name), keras_module, inputs, name)


def _assert_matches(reference, port, keras_module, inputs, name):
    """The port matches `reference` on `inputs` (weights moved off their defaults, copied over); the worst error."""
    import torch

    with torch.no_grad():
        reference(*[torch.from_numpy(i) for i in inputs])  # lazy layers are sized at the first call
        for key, value in reference.state_dict().items():
            if value.dtype.is_floating_point:
                value.copy_(torch.rand_like(value) + 0.5 if "var" in key else torch.randn_like(value) * 0.5)
    reference.eval()
    with torch.no_grad():
        expected = _outputs(reference(*[torch.from_numpy(i) for i in inputs]), lambda t: t.numpy())
    port(*inputs)
    keras_module.load_state_dict(port, {k: v.numpy() for k, v in reference.state_dict().items()})
    actual = _outputs(port(*inputs, training=False), np.asarray)
    assert len(actual) == len(expected)
    return max(assert_equivalent(want, got, tolerance=1e-4, what=name) for want, got in zip(expected, actual,
                                                                                           strict=True))


def test_resnet18_factory_matches_torch_and_runs_channels_last(converted):
    """`resnet18(num_classes)` builds an nn.Sequential of Residual blocks through a helper defined inside it: the
    blocks it builds run their channels-last case, so the model converts only on entry (one channel here: a
    reshape) and exit (a flat vector), where each block converted in and out before."""
    import torch

    _, reference_module, keras_module = converted
    inputs = [np.random.default_rng(0).standard_normal((2, 1, 16, 16)).astype(np.float32)]
    torch.manual_seed(0)
    port = keras_module.resnet18(10)
    error = _assert_matches(reference_module.resnet18(10), port, keras_module, inputs, "resnet18")
    transposes = count_transposes(port, inputs)
    print(f"d2l resnet18: worst error {error:.2e} of the output scale, {transposes} Transposes")
    assert transposes <= 2
