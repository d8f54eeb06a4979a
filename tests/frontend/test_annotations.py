"""porter.frontend.annotations: which declared types say "a list of tensors" (the kind a parameter no translated
code hands anything takes, and what a call returns where porter could not type it)."""

import libcst as cst
import pytest

from porter.frontend.annotations import annotated_tensor_list


def _function(source):
    return cst.parse_module(source).body[0]


@pytest.mark.parametrize("annotation", ["List[torch.Tensor]", "list[Tensor]", "Tuple[torch.Tensor, ...]",
                                        "typing.Sequence[torch.Tensor]", "tuple[Tensor]"])
def test_sequences_of_tensors_are_lists_of_tensors(annotation):
    function = _function(f"def forward(self, x: {annotation}) -> {annotation}:\n    return x\n")
    assert annotated_tensor_list(function.params.params[1])
    assert annotated_tensor_list(function)


@pytest.mark.parametrize("annotation", ["torch.Tensor", "List[int]", "Tuple[Tensor, Tensor]", "Dict[str, Tensor]",
                                        "Optional[List[Tensor]]", "'List[Tensor]'"])
def test_other_annotations_are_not(annotation):
    function = _function(f"def forward(self, x: {annotation}) -> {annotation}:\n    return x\n")
    assert not annotated_tensor_list(function.params.params[1])
    assert not annotated_tensor_list(function)


def test_no_annotation_is_not():
    function = _function("def forward(self, x):\n    return x\n")
    assert not annotated_tensor_list(function.params.params[1])
    assert not annotated_tensor_list(function)
