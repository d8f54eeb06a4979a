"""Generated parameter lists are rebuilt from the source's parameters: comments, trailing commas and annotations
naming torch types never reach the port."""

import tempfile
import textwrap
from pathlib import Path

import pytest

from porter.codegen.signatures import parameter_list
from porter.frontend.source import parse_source


def signature(code, training=False):
    """The generated parameter list of the first class's __init__ in `code`."""
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "model.py"
        path.write_text(textwrap.dedent(code))
        source = parse_source(path, "model.py")
    definition = next(iter(source.classes.values())).methods["__init__"]
    return parameter_list(source, definition, training=training)


HEADER = """
from typing import Any, Callable, List, Optional
import torch
from torch import nn, Tensor

class Net(nn.Module):
"""


@pytest.mark.parametrize(("params", "expected"), [
    ("self,\n        num_classes: int = 1000,  # classes\n        **kwargs: Any,\n    ",
     "self, num_classes: int = 1000, **kwargs: Any"),
    ("self, block: Optional[Callable[..., nn.Module]] = None, layers: List[int] = (2, 2)",
     "self, block=None, layers: List[int] = (2, 2)"),
    ("self, x: Tensor, *, dropout: float = 0.5", "self, x, *, dropout: float = 0.5"),
    ("self, a, /, b, *rest: torch.Tensor, c=1", "self, a, /, b, *rest, c=1"),
    ("self, size=(\n        3,\n        4,\n    )", "self, size=( 3, 4, )"),
    ("self, ref: 'Net' = None", "self, ref=None"),
])
def test_parameter_list(params, expected):
    code = HEADER + f"    def __init__({params}):\n        super().__init__()\n"
    assert signature(code) == expected
    compile(f"def f({expected}):\n    pass\n", "<signature>", "exec")


@pytest.mark.parametrize(("params", "expected"), [
    ("self, x", "self, x, training=None"),
    ("self, x, **kwargs", "self, x, training=None, **kwargs"),
    ("self, *args: Tensor, **kwargs", "self, *args, training=None, **kwargs"),
])
def test_training_goes_before_star_kwargs(params, expected):
    code = HEADER + f"    def __init__({params}):\n        super().__init__()\n"
    assert signature(code, training=True) == expected
