"""timm's models run their stages as `if self.grad_checkpointing: x = checkpoint_seq([self.layer1, ...], x) else:
x = self.layer1(x) ...` (activation checkpointing). The port ran `checkpoint_seq` in its runtime, calling each stage
on the channels-last image as if it were in torch's layout (the checkpointing path computed something else: a
MatMul size error in res2net's head), and the join put the image back into torch's order on the other path, which
the head then converted again (res2net at 64x64: 3 Transposes). `checkpoint_seq([f, g], x)` is translated as
`g(f(x))` (passes/calls.py), so both paths lay out alike and the image stays channels-last. Compared with real
torch on hypothesis-drawn inputs, both paths taken."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import count_transposes
from tests.corpus.torchvision_support import import_torchvision
from tests.rules.op_ports import assert_same_outputs, port, random_input

import_torchvision()  # timm imports torchvision, whose compiled ops need their schemas registered first
pytest.importorskip("timm", reason="timm is not installed (scripts/setup.sh installs timm==1.0.31 with --no-deps)")

SOURCE = '''
import torch
import torch.nn as nn
from timm.models._manipulate import checkpoint_seq


class Stage(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, 3, stride=2, padding=1)
        self.bn = nn.BatchNorm2d(c_out)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))


class OpModel(nn.Module):
    def __init__(self, grad_checkpointing=False):
        super().__init__()
        self.grad_checkpointing = grad_checkpointing
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.stage1 = Stage(8, 16)
        self.stage2 = Stage(16, 16)
        self.head = nn.Linear(16, 5)

    def forward_features(self, x):
        x = self.stem(x)
        if self.grad_checkpointing:
            x = checkpoint_seq([self.stage1, self.stage2], x)
        else:
            x = self.stage1(x)
            x = self.stage2(x)
        return x

    def forward(self, x):
        x = self.forward_features(x)
        return self.head(x.mean((2, 3)))
'''


@pytest.fixture(scope="module", params=[False, True], ids=["stages", "checkpointed"])
def pair(request, tmp_path_factory):
    return port(tmp_path_factory.mktemp("checkpointed"), textwrap.dedent(SOURCE), input_specs=("3,16,16",),
                init_args={"grad_checkpointing": request.param})


def test_checkpointed_stages_are_called_as_the_plain_path_calls_them(pair):
    code = (pair.out_dir / "op_model_keras.py").read_text()
    assert "checkpoint_seq" not in code.split("def forward_features", 1)[1].split("def call", 1)[0]
    inputs = pair.example_inputs(batch=2, seed=0)
    assert count_transposes(pair.keras_model, inputs) <= 1  # the input's only (the head pools: no image leaves)


@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.sampled_from([1, 3]))
def test_both_paths_match_torch(pair, seed, batch):
    assert_same_outputs(pair, [random_input(seed, (batch, 3, 16, 16))], tolerance=1e-4)
