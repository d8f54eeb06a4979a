"""A d2l-style library file (tests/models/d2l_style.py) converts in one call and every model class in it matches
torch: the file names itself through `sys.modules[__name__]` (`class LeNet(d2l.Classifier)`), aliases framework
names at module level (`nn_Module = nn.Module`, `zeros = torch.zeros`), saves constructor arguments with
`save_hyperparameters()`, builds lazy layers (LazyConv2d, LazyBatchNorm2d, LazyLinear: sized at the first call),
forwards tensor methods through lambdas (`astype = lambda x, *args, **kwargs: x.type(*args, **kwargs)`), calls an
ancestor's constructor past its direct base (GRU(RNN) calling `d2l.Module.__init__`), reads an RNN's
`_flat_weights_names`, rebinds a converted input inside an `if` (`X = self.conv3(X)`), compares an integer tensor
with a float one, and fills a tensor attribute by slices in __init__. Its plotting helpers and the Trainer are not
model code: they never make the exit code 1.
"""

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.convert import ConvertOptions, convert
from porter.output import write_tree
from porter.verify.compare import assert_equivalent
from porter.verify.harness import import_path

SOURCE = Path(__file__).resolve().parents[1] / "models" / "d2l_style.py"


def _floats(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def _ints(rng, high, *shape):
    return rng.integers(0, high, size=shape).astype(np.int64)


# class -> (constructor args, inputs(rng, batch))
CASES = {
    "LeNet": ((), lambda rng, b: [_floats(rng, b, 1, 12, 12)]),
    "LinearRegression": ((0.1,), lambda rng, b: [_floats(rng, b, 3)]),
    "Residual": ((4, True, 2), lambda rng, b: [_floats(rng, b, 3, 8, 8)]),
    "RNN": ((5, 6), lambda rng, b: [_floats(rng, 4, b, 5)]),
    "GRU": ((5, 6, 2), lambda rng, b: [_floats(rng, 4, b, 5)]),
    "Seq2SeqEncoder": ((11, 6, 8, 2), lambda rng, b: [_ints(rng, 11, b, 5)]),
    "DotProductAttention": ((0.0,), lambda rng, b: [_floats(rng, b, 3, 4), _floats(rng, b, 5, 4),
                                                    _floats(rng, b, 5, 6), _ints(rng, 5, b) + 1]),
    "PositionalEncoding": ((8, 0.0, 50), lambda rng, b: [_floats(rng, b, 5, 8)]),
}


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    out = tmp_path_factory.mktemp("d2l_style") / "out"
    conversion = convert(ConvertOptions(SOURCE, out))
    write_tree(out, conversion.files)
    entry = conversion.manifest["sources"][0]
    return conversion, import_path(SOURCE), import_path(out / entry["module"])


def test_every_model_class_converts_and_plotting_is_not_a_stub(converted):
    conversion, _, _ = converted
    classes = {c["name"]: c for c in conversion.manifest["sources"][0]["classes"]}
    assert set(CASES) <= set(classes)
    assert conversion.exit_code == 0, [c["unsupported"] for c in classes.values() if c["unsupported"]]
    assert not {"Trainer", "ProgressBoard", "HyperParameters"} & set(classes)  # plain classes, not models
    model = conversion.files[conversion.manifest["sources"][0]["module"]]
    assert "d2l." not in model


def _outputs(result, to_numpy):
    if isinstance(result, (tuple, list)):
        return [y for item in result for y in _outputs(item, to_numpy)]
    return [] if result is None else [to_numpy(result)]


@settings(deadline=None, max_examples=3)
@given(batch=st.integers(1, 3), seed=st.integers(0, 2**16))
@pytest.mark.parametrize("name", sorted(CASES))
def test_model_class_matches_torch(converted, name, batch, seed):
    import torch

    _, torch_module, keras_module = converted
    args, make_inputs = CASES[name]
    inputs = make_inputs(np.random.default_rng(seed), batch)
    torch.manual_seed(seed)
    reference = getattr(torch_module, name)(*args)
    with torch.no_grad():
        reference(*[torch.from_numpy(i) for i in inputs])  # lazy layers are sized at the first call
        for key, value in reference.state_dict().items():  # off their defaults: a dropped term shows
            if value.dtype.is_floating_point:
                value.copy_(torch.rand_like(value) + 0.5 if "var" in key else torch.randn_like(value) * 0.5)
    reference.eval()
    with torch.no_grad():
        expected = _outputs(reference(*[torch.from_numpy(i) for i in inputs]), lambda t: t.numpy())
    port = getattr(keras_module, name)(*args)
    port(*inputs)
    keras_module.load_state_dict(port, {k: v.numpy() for k, v in reference.state_dict().items()})
    actual = _outputs(port(*inputs, training=False), np.asarray)
    assert len(actual) == len(expected)
    for want, got in zip(expected, actual, strict=True):
        assert_equivalent(want, got, tolerance=1e-4, what=name)


def test_lazy_layer_state_before_the_first_call_is_a_clear_error(converted):
    _, _, keras_module = converted
    with pytest.raises(ValueError, match="first call"):
        keras_module.load_state_dict(keras_module.LeNet(), {})
