"""Literal constructor arguments carried through factory functions (porter/passes/call_literals.py).

pytorchcv's PreConvBlock returns `(x, x_pre_activ)` or `x` by a flag `return_preact` that reaches it through
factories' `**kwargs` (`pre_conv3x3_block(..., return_preact=True)` -> `PreConvBlock(kernel_size=3, ...,
**kwargs)`), one factory calling another here. Each instance's flag is known where it is built, so each has its own
specialised `call` returning channels-last images, and the unit whose body is one of two blocks (an if/else in
`__init__`, test_disagreeing_returns' units) calls it as a plain call: the port matches torch (eager and XLA) and traces only the boundary's
Transposes (it traced 4 per unit when every return was in torch's layout).
"""

import libcst as cst
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.passes.call_literals import FORWARDED, argument_literals, call_literals
from porter.verify.harness import PortedPair
from tests.passes.snippet_ports import snippet_ports
from tests.passes.test_disagreeing_returns import SOURCE as UNITS_SOURCE
from tests.rules.op_ports import assert_matches_converting_at_the_boundary, random_input

# test_disagreeing_returns' snippet, its PreConv built through two factories, each handing on its `**kwargs`
FACTORIES = '''
def pre_conv(cin, cout, stride=1, **kwargs):
    return PreConv(cin=cin, cout=cout, stride=stride, **kwargs)


def pre_conv3x3(cin, cout, **kwargs):
    return pre_conv(cin, cout, **kwargs)


'''
SOURCE = UNITS_SOURCE[:UNITS_SOURCE.index("def pre_conv3x3")] + FACTORIES + \
    UNITS_SOURCE[UNITS_SOURCE.index("class Block"):]


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    """bottleneck flag -> output folder of the port built with it."""
    return snippet_ports(tmp_path_factory, SOURCE, "3,8,8", "bottleneck")


@settings(max_examples=3, deadline=None)
@given(bottleneck=st.booleans(), batch=st.integers(1, 2), size=st.sampled_from([4, 5, 8]),
       seed=st.integers(0, 2**16))
def test_factory_built_blocks_match_torch_converting_only_at_the_boundary(ported, bottleneck, batch, size, seed):
    pair = PortedPair(ported(bottleneck), seed=seed)
    assert_matches_converting_at_the_boundary(pair, random_input(seed, (batch, 3, size, size)))


def test_each_instance_gets_the_case_of_its_flag(ported):
    code = (ported(False) / "op_model_keras.py").read_text()
    block = code.split("class PreConv")[1].split("\nclass ")[0]
    assert "if self.return_preact == True:" in block and "if self.return_preact == False:" in block


def _call(text):
    return cst.parse_expression(text)


def _function(text):
    return cst.parse_module(text).body[0]


def test_call_literals_binds_defaults_keywords_and_forwarded_keywords():
    factory = _function("def f(stride=1, padding=1, **kwargs):\n    return B(**kwargs)\n")
    bound = call_literals(factory, _call("f(cin=c, stride=2, flag=True)"), lambda n: cst.Module([]).code_for_node(n),
                          {})
    assert bound == {"stride": "2", "padding": "1", FORWARDED + "kwargs": {"cin": None, "flag": "True"}}


def test_argument_literals_reads_the_callers_parameters_and_kwargs():
    code_of = cst.Module([]).code_for_node
    literals = {"stride": "2", "padding": None, FORWARDED + "kwargs": {"flag": "True"}}
    handed, known = argument_literals(_call("B(3, stride=stride, padding=padding, **kwargs)"), ["k"], code_of,
                                      literals)
    assert known and handed == {"k": "3", "stride": "2", "padding": None, "flag": "True"}
    assert not argument_literals(_call("B(**other)"), [], code_of, literals)[1]


def test_a_parameter_the_factory_assigns_again_is_not_carried():
    factory = _function("def f(stride=1, **kwargs):\n    stride = 2 * stride\n    kwargs['x'] = 1\n"
                        "    return B(stride=stride, **kwargs)\n")
    assert call_literals(factory, _call("f(flag=True)"), cst.Module([]).code_for_node, {}) == {}
