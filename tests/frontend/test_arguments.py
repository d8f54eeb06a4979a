"""porter/frontend/arguments.py: the parameter each argument of a call binds, as Python binds it."""

import libcst as cst
import pytest

from porter.frontend.arguments import bound_arguments, parameter_of

NAMES = ("in_channels", "out_channels", "kernel_size", "stride")


def call(text):
    return cst.parse_expression(text)


@pytest.mark.parametrize(("text", "expected"), [
    ("Conv(3, 8, kernel_size=1)", ["in_channels", "out_channels", "kernel_size"]),
    ("Conv(3, 8, 3, 1, 1)", ["in_channels", "out_channels", "kernel_size", "stride", None]),  # (past the names)
    ("Conv(*sizes, stride=2)", [None, "stride"]),
    ("Conv(3, **options)", ["in_channels", None]),
])
def test_parameter_of_each_argument(text, expected):
    node = call(text)
    assert [parameter_of(arg, position, NAMES) for position, arg in enumerate(node.args)] == expected


def test_bound_arguments_maps_parameters_to_argument_nodes():
    bound = bound_arguments(call("Conv(3, 8, stride=2)"), NAMES)
    assert {name: cst.Module([]).code_for_node(node) for name, node in bound.items()} == {
        "in_channels": "3", "out_channels": "8", "stride": "2"}


@pytest.mark.parametrize("text", ["Conv(*sizes)", "Conv(3, 8, 3, 1, 1)"])
def test_bound_arguments_gives_up_on_what_it_cannot_name(text):
    assert bound_arguments(call(text), NAMES) is None
