"""A tensor made from data porter cannot type, meeting a float: `torch.tensor([i % 3 for i in range(n)]) * 0.5` (an
RWKV-style constant: int64 where the data are ints, which torch promotes to float32). The port multiplied an int64
tensor by 0.5 and raised when built ("Cannot convert 0.5 to EagerTensor of dtype int64"); it now promotes as torch
does (`promote_like_torch`), and leaves float data as they are. Compared with torch for drawn sizes."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch
import torch.nn as nn


class OpModel(nn.Module):
    def __init__(self, n=5):
        super().__init__()
        self.decay = nn.Parameter(torch.tensor([i % 3 for i in range(n)]) * 0.5)
        self.register_buffer("mix", torch.tensor([float(i) / n for i in range(n)]) + 0.25)

    def forward(self, x):
        return x * self.decay + self.mix - 1.5 * torch.tensor([i for i in range(5)])
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("promotion"), SOURCE, input_specs=("5",))


@settings(max_examples=4, deadline=None)
@given(batch=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_data_tensors_meeting_floats_are_promoted_as_torch_does(pair, batch, seed):
    assert_same_outputs(pair, [random_input(seed, (batch, 5))], tolerance=1e-6)
