"""A class or function bound again at top level before anything reads it: x-transformers defines
`class LayerNorm(Module)` (a gamma parameter and a beta buffer) and then, under a torch-version check, rebinds
`LayerNorm = partial(nn.LayerNorm, bias=False)`. Python keeps the last binding; the port kept the class and dropped
the rebinding (the state dict did not fit: `weight` against `gamma`/`beta`). The later binding is now the one ported,
the earlier definition listed as not carried over, and the port matches torch. A class that code above reads
(`class Kept(Scale)`) and that is then bound again is refused at the rebinding's line: the port holds one binding
per name."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
from functools import partial

import torch
import torch.nn.functional as F
from packaging import version
from torch import nn


class LayerNorm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.gamma = nn.Parameter(torch.ones(dim))
        self.register_buffer("beta", torch.zeros(dim))

    def forward(self, x):
        return F.layer_norm(x, x.shape[-1:], self.gamma, self.beta)


if version.parse(torch.__version__) >= version.parse("2.1.0"):
    LayerNorm = partial(nn.LayerNorm, bias=False)


def gelu(x):
    return x * torch.sigmoid(x)


def gelu(x):  # redefined: the second one runs
    return F.gelu(x)


class OpModel(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.norm = LayerNorm(dim)
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        return gelu(self.fc(self.norm(x)))
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("shadowed"), textwrap.dedent(SOURCE), input_specs=("5,8",))


def test_the_later_binding_is_ported_and_the_earlier_one_listed(pair):
    code = (pair.out_dir / "op_model_keras.py").read_text()
    assert "class LayerNorm" not in code and "LayerNorm = partial(" in code
    assert code.count("def gelu") == 1
    report = (pair.out_dir / "PORTING.md").read_text()
    assert "`class LayerNorm:  (bound again below before any use: the later binding is kept)`" in report
    assert "`def gelu:  (bound again below" in report


def test_a_class_bound_again_after_use_is_refused_with_its_line(tmp_path, capsys):
    from porter.cli import main

    source = tmp_path / "rebound.py"
    source.write_text(textwrap.dedent('''
        import torch.nn as nn


        class Scale(nn.Module):
            def forward(self, x):
                return x * 2


        class Kept(Scale):  # reads `Scale` before it is bound again
            pass


        Scale = nn.Identity
    '''))
    assert main(["convert", str(source), "-o", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err.splitlines()[0] == (
        f"porter: error: {source}:14: module class Scale (line 5) is bound again after code above uses it "
        "(hint: porter ports one binding per name: rename the class or the later binding)")
    assert not (tmp_path / "out").exists()


def test_state_dict_keys_are_torchs(pair):
    assert set(pair.torch_module.OpModel().state_dict()) == {"norm.weight", "fc.weight", "fc.bias"}


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 3), length=st.sampled_from([1, 5, 7]))
def test_port_matches_torch(pair, seed, batch, length):
    assert_same_outputs(pair, [random_input(seed, (batch, length, 8))])


def test_a_rebinding_that_wraps_the_class_keeps_it(tmp_path):
    """`Block = register(Block)` reads the class it rebinds (a registry decorator written out): the class is ported
    and the rebinding left out, as before."""
    from porter.convert import ConvertOptions
    from tests.in_process import convert

    source = tmp_path / "wrapped.py"
    source.write_text(textwrap.dedent('''
        import torch.nn as nn


        def register(cls):
            return cls


        class Block(nn.Module):
            def forward(self, x):
                return x * 2


        Block = register(Block)


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.b = Block()

            def forward(self, x):
                return self.b(x)
    '''))
    conversion = convert(ConvertOptions(source, tmp_path / "out"))
    assert conversion.exit_code == 0 and "class Block(" in conversion.files["wrapped_keras.py"]
