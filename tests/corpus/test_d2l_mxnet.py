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
from pathlib import Path

import numpy as np
import pytest

from tests.mxnet.gluon_fixtures import needs_mxnet
from tests.mxnet.numpy_mode_support import assert_matches_mxnet, convert_with_reference, model_inputs

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

# imported at the top of d2l/mxnet.py for plotting and data, never by a model class; .venv-mxnet lacks some
NOT_MODEL_MODULES = ["pandas", "requests", "IPython", "IPython.display", "matplotlib", "matplotlib.pyplot",
                     "matplotlib_inline", "matplotlib_inline.backend_inline"]


@pytest.fixture(scope="module")
def converted_and_reference(tmp_path_factory):
    """(conversion, the port's module, the folder of mxnet's outputs and .params files of every model)."""
    folder = tmp_path_factory.mktemp("d2l_mxnet_reference")
    conversion, module = convert_with_reference(
        SOURCE, folder, tmp_path_factory.mktemp("d2l_mxnet") / "out", {n: list(m[0]) for n, m in MODELS.items()},
        {n: model_inputs(m[1]) for n, m in MODELS.items()}, arguments=ARGUMENTS, scratch=SCRATCH,
        stand_ins=NOT_MODEL_MODULES)
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


def _build(module, name):
    built = {text: getattr(module, cls)(*given) for text, (cls, given) in ARGUMENTS.items()}
    return getattr(module, name)(*[built.get(a, a) if isinstance(a, str) else a for a in MODELS[name][0]])


@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_class_matches_mxnet(converted, reference, name):
    _, module = converted
    assert_matches_mxnet(_build(module, name), module, model_inputs(MODELS[name][1]), reference, name,
                         MODELS[name][2])
