"""frontend/library_code.py: a library factory as the linker takes it. Registry and legacy-weights decorators go
(a legacy `pretrained=` stays accepted), other decorators stay (MONAI's layer-factory registrations), weight enums
leave statements, annotations and defaults, and weights parameters are None from the first statement on."""

import textwrap

import libcst as cst

from porter.frontend.library_code import as_linked_from_a_library

FACTORY = '''
@register_model()
@handle_legacy_interface(weights=("pretrained", ResNet18_Weights.IMAGENET1K_V1))
def resnet18(*, weights: Optional[ResNet18_Weights] = None, progress: bool = True, **kwargs):
    """ResNet-18."""
    weights = ResNet18_Weights.verify(weights)
    return _resnet(BasicBlock, [2, 2, 2, 2], weights, progress, **kwargs)
'''

BACKBONE = '''
def lraspp(num_classes=21, weights_backbone=MobileNet_V3_Large_Weights.IMAGENET1K_V1):
    return build(num_classes, weights_backbone)
'''

REGISTRATION = '''
@Norm.factory_function("instance")
def instance_factory(dim):
    return types[dim - 1]
'''


def linked(source):
    return cst.Module([as_linked_from_a_library(cst.parse_statement(textwrap.dedent(source).strip()))]).code


def test_a_factory_loses_its_registries_and_weights_but_keeps_the_legacy_name():
    code = linked(FACTORY)
    assert "@" not in code and "Weights" not in code.split('"""')[0] + code.split('"""')[2]
    assert "def resnet18(*, weights=None, progress: bool = True, pretrained=None, **kwargs):" in code
    lines = code.splitlines()
    assert lines[1].strip() == '"""ResNet-18."""'
    assert lines[2].strip().startswith("weights = None  # porter: no pretrained weights")
    assert lines[3].strip() == "return _resnet(BasicBlock, [2, 2, 2, 2], weights, progress, **kwargs)"


def test_a_weights_default_is_none():
    code = linked(BACKBONE)
    assert "def lraspp(num_classes=21, weights_backbone=None):" in code
    assert "weights_backbone = None  # porter" in code


def test_decorators_filling_tables_stay():
    assert linked(REGISTRATION).startswith('@Norm.factory_function("instance")')
