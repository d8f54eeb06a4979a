"""Constructor parameters no construction hands (passes/unhanded_params.py): `norm_layer(dim) if norm_layer else
nn.Identity()` and `if norm_layer is not None:` decide for the default None where every construction of the class
is a call porter reads, so the attribute is the Identity and the image keeps its rank through it (a later
`x.mean([-2, -1])` reduces the channels-last axes instead of converting); a class some construction hands the
parameter, or one the file names other than by calling it (`partial(Embed, ...)`), decides nothing. The port
matches torch on hypothesis-drawn inputs either way."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.convert import ConvertOptions, convert
from porter.ir.printer import print_ir
from porter.verify.harness import count_transposes
from tests.rules.op_ports import assert_same_outputs, port, random_input

TEMPLATE = '''
import functools

import torch
import torch.nn as nn


class Embed(nn.Module):
    def __init__(self, cin, cout, norm_layer=None):
        super().__init__()
        self.proj = nn.Conv2d(cin, cout, 3, stride=2, padding=1)
        self.norm = norm_layer(cout) if norm_layer else nn.Identity()

    def forward(self, x):
        return self.norm(self.proj(x))


class Stem(nn.Module):
    def __init__(self, cin, cout, norm_layer=None):
        super().__init__()
        if norm_layer is not None:
            self.norm = norm_layer(cin)
        else:
            self.norm = nn.Identity()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1)

    def forward(self, x):
        return self.conv(self.norm(x))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = Stem(3, 8)
        self.stages = nn.ModuleList([{stage}, nn.Sequential(nn.Conv2d(12, 12, 1), nn.ReLU())])
        self.head = nn.Linear(12, 5)

    def forward(self, x):
        x = self.stem(x)
        for stage in self.stages:
            x = stage(x)
        return self.head(x.mean([-2, -1]))
'''

CASES = {  # the first stage's construction: (decided, Transposes the port may trace)
    "left_out": ("Embed(8, 12)", True, 1),
    "handed_none": ("Embed(8, 12, norm_layer=nn.BatchNorm2d)", False, None),
    "through_partial": ("functools.partial(Embed, norm_layer=nn.BatchNorm2d)(8, 12)", False, None),
}


def source_of(case):
    return textwrap.dedent(TEMPLATE).replace("{stage}", CASES[case][0])


def embed_norm(tmp_path, case):
    """The `norm` attribute line `porter ir` prints for class Embed."""
    path = tmp_path / f"{case}.py"
    path.write_text(source_of(case))
    conversion = convert(ConvertOptions(path, tmp_path / "out", class_name="Net", input_specs=["3,9,10"]),
                         read_only=True)
    dump = print_ir(conversion.translator.source, conversion.translator.ctx, "Net", "Embed")
    return next(line.strip() for line in dump.splitlines() if line.strip().startswith("norm:"))


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_parameter_no_construction_hands_decides_the_constructor_test(tmp_path, case):
    decided = CASES[case][1]
    assert (embed_norm(tmp_path, case) == "norm: Identity (any)") is decided


@pytest.fixture(scope="module", params=sorted(CASES))
def pair(request, tmp_path_factory):
    return request.param, port(tmp_path_factory.mktemp(request.param), source_of(request.param), ("3,9,10",))


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 2), height=st.sampled_from([5, 8, 9]),
       width=st.sampled_from([4, 7, 10]))
def test_port_matches_torch(pair, seed, batch, height, width):
    _, ported = pair
    assert_same_outputs(ported, [random_input(seed, (batch, 3, height, width))], tolerance=1e-5)


def test_the_identity_keeps_the_rank_the_mean_reads(pair):
    case, ported = pair
    bound = CASES[case][2]
    x = random_input(0, (2, 3, 9, 10))
    assert_same_outputs(ported, [x], tolerance=1e-5, jit=True)
    if bound is not None:
        assert count_transposes(ported.keras_model, [x]) <= bound
