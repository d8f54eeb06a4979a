"""porter/frontend/arguments.py: the parameter each argument of a call binds, and the argument a parameter is bound
to, as Python binds them."""

import libcst as cst
import pytest

from porter.frontend.arguments import bound_argument, bound_arguments, parameter_of

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


@pytest.mark.parametrize(("text", "position", "expected"), [
    ("nn.ReLU(True)", 0, "True"),  # by position
    ("nn.ReLU(inplace=True)", 0, "True"),  # by keyword
    ("F.relu(x, inplace=True)", 1, "True"),
    ("nn.ReLU()", 0, None),  # not passed
    ("nn.LeakyReLU(0.1)", 1, None),  # (a position past the arguments)
    ("nn.ReLU(*flags)", 0, None),  # a starred argument may stand for it
    ("F.relu(*args, True)", 1, None),  # ... or for any number before it: True's position is unknown
    ("F.relu(x, *args)", 1, None),
    ("F.relu(*args, inplace=True)", 1, "True"),  # a keyword names it wherever it stands
    ("F.relu(x, **options)", 1, None),
])
def test_bound_argument_by_keyword_or_position(text, position, expected):
    argument = bound_argument(call(text), position, "inplace")
    assert (cst.Module([]).code_for_node(argument) if argument is not None else None) == expected
