"""Which parameter each argument of a call binds, and which argument binds a given parameter, as Python binds
them: a keyword names its own, a positional argument takes the parameter at its position; a starred argument binds
none porter can name."""

from itertools import takewhile


def parameter_of(arg, position, names):
    """The parameter `arg` (a libcst Arg, at `position` among the call's arguments) binds: its keyword, else
    `names[position]` (the callee's parameters in order); None for a starred argument or one past `names`."""
    if arg.star:
        return None
    if arg.keyword is not None:
        return arg.keyword.value
    return names[position] if position < len(names) else None


def bound_arguments(call, names):
    """{parameter: argument node} of `call` for a callee whose parameters are `names` (in order); None where an
    argument is starred or binds no parameter of `names` by position."""
    bound = {}
    for position, arg in enumerate(call.args):
        name = parameter_of(arg, position, names)
        if name is None:
            return None
        bound[name] = arg.value
    return bound


def bound_argument(call, position, keyword):
    """The argument node `call` binds to the parameter `keyword`, which is at `position` among the callee's
    parameters: passed by that keyword, else the positional argument there; None when not passed, or when a starred
    argument comes before it (it stands for any number of arguments: none after it has a known position)."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg.value
    placed = list(takewhile(lambda arg: arg.keyword is None and not arg.star, call.args))
    return placed[position].value if position < len(placed) else None
