"""porter.frontend.annotations: which declared types say "a list (or a tuple) of tensors" (the kind a parameter no
translated code hands anything takes, and what a call returns where porter could not type it)."""

import libcst as cst
import pytest

from porter.frontend.annotations import declared_tensors


def _function(source):
    return cst.parse_module(source).body[0]


@pytest.mark.parametrize("annotation", ["List[torch.Tensor]", "list[Tensor]", "Tuple[torch.Tensor, ...]",
                                        "typing.Sequence[torch.Tensor]", "tuple[Tensor]"])
def test_sequences_of_tensors_are_lists_of_tensors(annotation):
    function = _function(f"def forward(self, x: {annotation}) -> {annotation}:\n    return x\n")
    assert declared_tensors(function.params.params[1]) == "list"
    assert declared_tensors(function) == "list"


@pytest.mark.parametrize(("annotation", "count"), [("Tuple[torch.Tensor, torch.Tensor]", 2),
                                                   ("tuple[Tensor, Tensor, Tensor]", 3)])
def test_tuples_of_tensors_give_their_count(annotation, count):
    function = _function(f"def forward(self, x: {annotation}) -> {annotation}:\n    return x\n")
    assert declared_tensors(function.params.params[1]) == count
    assert declared_tensors(function) == count


@pytest.mark.parametrize("annotation", ["torch.Tensor", "List[int]", "Tuple[Tensor, int]", "Dict[str, Tensor]",
                                        "Optional[List[Tensor]]", "'List[Tensor]'"])
def test_other_annotations_are_not(annotation):
    function = _function(f"def forward(self, x: {annotation}) -> {annotation}:\n    return x\n")
    assert declared_tensors(function.params.params[1]) is None
    assert declared_tensors(function) is None


def test_no_annotation_is_not():
    function = _function("def forward(self, x):\n    return x\n")
    assert declared_tensors(function.params.params[1]) is None
    assert declared_tensors(function) is None
