"""Idioms of typed library code (MONAI's style), in a model file: `from __future__ import annotations` with an
annotation naming a class the file binds further down (the port keeps the future import: without it the annotation
was evaluated at definition time, an undefined name); `typing.cast(torch.Tensor, value)` (the value; the port named
torch); `nn.init.constant_(torch.as_tensor(m.bias), v)` in a `self.modules()` loop (torch.as_tensor hands the
parameter itself, which the initialiser fills; the port filled a copy and failed to build: a tensor has no
`assign`)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.passes.snippet_ports import assert_matches_torch, snippet_ports

SOURCE = '''
from __future__ import annotations

from typing import cast

import torch
from torch import nn


def make_act(kind: ActKind | str = "relu") -> nn.Module:
    return nn.ReLU() if kind == "relu" else nn.GELU()


class Net(nn.Module):
    def __init__(self, channels: int = 6, kind: str = "gelu"):
        super().__init__()
        self.conv = nn.Conv2d(3, channels, 3, padding=1)
        self.norm = nn.BatchNorm2d(channels)
        self.act = make_act(kind)
        self.head = nn.Linear(channels, 4)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(torch.as_tensor(m.weight))
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(torch.as_tensor(m.weight), 0.5)
                nn.init.constant_(torch.as_tensor(m.bias), 0.25)
            elif isinstance(m, nn.Linear):
                nn.init.constant_(torch.as_tensor(m.bias), -0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = cast(torch.Tensor, self.act(self.norm(self.conv(x))))
        return self.head(y.mean(dim=(2, 3)))


class ActKind:
    RELU = "relu"
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return snippet_ports(tmp_path_factory, SOURCE, "3,8,8", "kind")


def test_the_port_keeps_the_deferred_annotations(ported):
    code = (ported("relu") / "op_model_keras.py").read_text()
    assert code.count("from __future__ import annotations") == 1
    assert "cast(" not in code.split('"""', 2)[2]  # (the value itself)


@settings(max_examples=4, deadline=None)
@given(batch=st.integers(1, 3), side=st.integers(3, 9), kind=st.sampled_from(["relu", "gelu"]),
       seed=st.integers(0, 2 ** 16))
def test_typing_idioms_match_torch(ported, batch, side, kind, seed):
    assert_matches_torch(ported(kind), seed, (batch, 3, side, side))


def test_as_tensor_initialisers_fill_the_parameters_themselves(ported):
    """The constructor's values (before any weights are loaded): the norm's 0.5 and 0.25, the head's -0.5 bias."""
    import numpy as np

    from porter.verify.harness import import_path

    module = import_path(ported("gelu") / "op_model_keras.py")
    net = module.Net()
    assert np.allclose(np.asarray(net.norm.weight), 0.5) and np.allclose(np.asarray(net.norm.bias), 0.25)
    assert np.allclose(np.asarray(net.head.bias), -0.5)
