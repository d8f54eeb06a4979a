"""A torch function held by a module attribute and called in `forward` (`self.pool = F.max_pool2d`, then
`self.pool(y, 2)`; `self.gap = F.adaptive_avg_pool2d`): its calls are that function's calls, translated by its
rule in the layout the tensor is held in. They went through `call_module`, which handed the runtime function (a
channels-last pool) a tensor in torch's layout: a crash at the next convolution, or a silent mismatch. An attribute
that two assignments bind to different functions stays a value called at run time. Each case matches torch for
hypothesis-drawn sizes (odd ones, batch 1), eagerly and under XLA, with no Transpose but the boundary's."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import count_transposes
from tests.rules.op_ports import assert_same_outputs, port_cache, random_input

TEMPLATE = '''
import torch.nn as nn
import torch.nn.functional as F


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.pool = {function}
        self.out = nn.Conv2d(8, 3, 1)

    def forward(self, x):
        return self.out(self.pool(self.conv(x), {argument}))
'''

CASES = {
    "max_pool": ("F.max_pool2d", "2"),
    "adaptive_avg_pool": ("F.adaptive_avg_pool2d", "(3, 2)"),
    "avg_pool_keyword": ("F.avg_pool2d", "kernel_size=3, stride=2, padding=1"),
}


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    sources = {name: TEMPLATE.replace("{function}", function).replace("{argument}", argument)
               for name, (function, argument) in CASES.items()}
    return port_cache(tmp_path_factory, sources, input_specs=("3,9,11",))


@pytest.mark.parametrize("name", sorted(CASES))
@settings(max_examples=4, deadline=None)
@given(batch=st.integers(1, 2), height=st.sampled_from([6, 9]), width=st.sampled_from([7, 12]),
       seed=st.integers(0, 2**16))
def test_function_attribute_matches_torch(ported, name, batch, height, width, seed):
    x = random_input(seed, (batch, 3, height, width))
    assert_same_outputs(ported(name), [x], tolerance=1e-5, what=f"{name} {x.shape}")


@pytest.mark.parametrize("name", sorted(CASES))
def test_function_attribute_keeps_the_layout(ported, name):
    x = random_input(0, (2, 3, 9, 11))
    assert_same_outputs(ported(name), [x], tolerance=1e-5, what=f"{name} XLA", jit=True)
    assert count_transposes(ported(name).keras_model, [x]) <= 2
