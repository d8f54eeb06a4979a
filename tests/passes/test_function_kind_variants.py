"""A module-level function called with a tensor by one caller and a Python number by another (demucs'
`center_trim(tensor, reference)`, `reference` a tensor or a length, told apart by `hasattr(reference, "size")`).
`hasattr` on a tensor is decided as torch answers it (TensorFlow tensors have no `size`: the tensor flowed into the
length arithmetic), and each kind of caller gets the translation for what it hands (`center_trim_for_value`), as
callers handing other layouts get theirs. A lambda called where it is written, `(lambda t: t * 2.0)(f)`, stays a
call (it became `lambda t: t * 2.0(f)`, a function returned). Each matches torch for drawn sizes."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, port_cache, random_input

SOURCES = {
    "trim_by_tensor_and_length": '''
import torch
import torch.nn as nn


def center_trim(tensor, reference):
    if hasattr(reference, "size"):
        reference = reference.size(-1)
    delta = tensor.size(-1) - reference
    if delta:
        tensor = tensor[..., delta // 2:-(delta - delta // 2)]
    return tensor


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 4)

    def forward(self, x):
        return center_trim(x, self.fc(x)) * 2 + center_trim(x, 4)
''',
    "applied_lambda": '''
import torch
import torch.nn as nn


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(6, 4, 3, padding=1)

    def forward(self, x):
        f = self.conv(x[:, :, None, :].expand(-1, -1, 3, -1))
        return (lambda t, s: t * s)(f, 2.0)
''',
}


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return port_cache(tmp_path_factory, SOURCES, input_specs=("6,6",))


@pytest.mark.parametrize("name", sorted(SOURCES))
@settings(max_examples=4, deadline=None)
@given(batch=st.integers(1, 3), channels=st.just(6), seed=st.integers(0, 2**16))
def test_function_kinds_match_torch(ported, name, batch, channels, seed):
    x = random_input(seed, (batch, channels, 6))
    assert_same_outputs(ported(name), [x], tolerance=1e-5, what=f"{name} {x.shape}")


def test_each_kind_of_caller_gets_its_translation(ported):
    code = (ported("trim_by_tensor_and_length").out_dir / "op_model_keras.py").read_text()
    assert "def center_trim_for_value(" in code and "center_trim_for_value(x, 4)" in code
    assert 'hasattr(reference, "size")' not in code.split("def center_trim_for_value")[0]
