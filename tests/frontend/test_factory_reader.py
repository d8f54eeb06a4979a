"""Tests of porter/frontend/factory_reader.py: the construction a factory makes, read with its names bound, and
`Unread` where it does something the reader does not follow (tests/frontend/test_model_entry.py covers the
factories porter builds from it)."""

import libcst as cst
import pytest

from porter.frontend.factory_reader import FactoryReader, bound_to_defaults
from porter.frontend.factory_values import Unread, free_names, node_code
from tests.frontend.test_model_entry import parsed


def read(source, name):
    function = source.functions[name]
    return FactoryReader(source).construction(function, bound_to_defaults(function), 0)


def test_names_are_bound_through_helpers_and_defaults(tmp_path):
    source = parsed(tmp_path, '''
        def _make(block, layers, width=6, **kwargs):
            model = Net(block, layers, width=width, **kwargs)
            return model


        def net(depth=2, **kwargs):
            return _make(Block, [depth] * 2, **kwargs)
    ''')
    class_name, call = read(source, "net")
    assert class_name == "Net"
    assert node_code(call) == "Net(Block, ([2] * 2), width=6, **kwargs)"  # a bound operation keeps its parentheses
    assert free_names([call]) == {"Net", "Block", "kwargs"}


def test_a_model_changed_after_its_construction_is_unread(tmp_path):
    source = parsed(tmp_path, '''
        def net(**kwargs):
            model = Net(Block, [1], **kwargs)
            model.head = None
            return model
    ''')
    with pytest.raises(Unread):
        read(source, "net")


def test_free_names_leave_out_attributes_keywords_and_comprehension_targets():
    expression = cst.parse_expression("f(a.b, key=[c * i for i in range(n)], other=lambda q: q + d)")
    assert free_names([expression]) == {"f", "a", "c", "range", "n", "d"}
