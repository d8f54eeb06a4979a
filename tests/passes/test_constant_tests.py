"""Tests the port decides as constants: `if input.is_cuda and self.ngpu > 1:` (pytorch/examples' DCGAN, whose
multi-GPU branch calls `nn.parallel.data_parallel`), `if not x.is_cuda or torch.jit.is_scripting():` and the like.

What broke before: `and`/`or`/`not` over a fact of the port (no TensorFlow tensor is on CUDA, nothing is scripted)
were written out as `if False and (self.ngpu > 1):`, so the branch that never runs was translated too: its
`data_parallel` became a stub and the whole model was reported partial. Now the test short-circuits as Python does,
only the branch taken is carried over, and the report says which. Each port matches torch eagerly and under XLA.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.passes.snippet_ports import assert_matches_torch, snippet_ports

SOURCE = '''
import torch
from torch import nn


class Generator(nn.Module):
    def __init__(self, ngpu):
        super().__init__()
        self.ngpu = ngpu
        self.main = nn.Sequential(nn.ConvTranspose2d(4, 6, 4, 2, 1, bias=False), nn.BatchNorm2d(6), nn.ReLU(True))

    def forward(self, input):
        if input.is_cuda and self.ngpu > 1:
            output = nn.parallel.data_parallel(self.main, input, range(self.ngpu))
        else:
            output = self.main(input)
        return output


class Net(nn.Module):
    def __init__(self, ngpu=2):
        super().__init__()
        self.gen = Generator(ngpu)
        self.conv = nn.Conv2d(6, 3, 3, padding=1)

    def forward(self, x):
        y = self.gen(x)
        if not y.is_cuda or torch.jit.is_scripting():
            y = self.conv(y)
        else:
            y = torch.cuda.comm.broadcast(y)
        if torch.jit.is_scripting() and self.training:
            y = y.cuda()
        return y
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    """ngpu -> output folder of the port built with it."""
    return snippet_ports(tmp_path_factory, SOURCE, "4,5,5", "ngpu")


@given(ngpu=st.sampled_from([1, 2]), batch=st.integers(1, 2), size=st.sampled_from([3, 4, 7]),
       seed=st.integers(0, 2**16))
@settings(max_examples=4, deadline=None)
def test_constant_tests_keep_the_branch_taken(ported, ngpu, batch, size, seed):
    assert_matches_torch(ported(ngpu), seed, (batch, 4, size, size))


def test_no_stub_and_the_report_says_which_branch(ported):
    out = ported(2)
    code = (out / "op_model_keras.py").read_text()
    assert "not_supported" not in code and "if False" not in code and "if True" not in code
    report = (out / "PORTING.md").read_text()
    assert "`if input.is_cuda and self.ngpu > 1:` never holds in the port: only its else branch" in report
    assert "always holds in the port: only its body" in report
