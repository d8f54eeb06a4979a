"""porter/frontend/handed_functions.py: module-level functions a file hands to its own classes and functions as
values, told apart from parameters and locals that share their names."""

import textwrap

from porter.frontend.handed_functions import handed_functions
from porter.frontend.source import parse_source

SOURCE = '''
import torch
import torch.nn as nn


def shuffle(x, groups):
    b, c, h, w = x.shape
    return x.view(b, groups, c // groups, h, w).transpose(1, 2).reshape(b, c, h, w)


def num_groups(group_size, channels):
    return channels // group_size if group_size else 1


def _groups_of(channels, num_groups, group_size):
    return channels // group_size if group_size else num_groups


class Unit(nn.Module):
    def __init__(self, channels, mix, num_groups=2, group_size=None):
        super().__init__()
        self.mix = mix
        self.conv = nn.Conv2d(channels, channels, 1, groups=_groups_of(channels, num_groups, group_size))
        self.norm = nn.GroupNorm(num_groups(group_size, channels) if group_size else 1, channels)

    def forward(self, x):
        return self.mix(self.norm(self.conv(x)), 2)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.unit = Unit(4, shuffle)

    def forward(self, x):
        return self.unit(x)
'''


def test_a_function_handed_to_a_block_is_found_and_a_parameter_of_its_name_is_not(tmp_path):
    """`Unit(4, shuffle)` hands the function; `_groups_of(channels, num_groups, group_size)` hands `Unit.__init__`'s
    parameter `num_groups`, not the module-level function of that name (timm's norm_act.py beside
    _efficientnet_blocks.py's `num_groups`: its translation for a channels-last image left a stub in the report)."""
    path = tmp_path / "model.py"
    path.write_text(textwrap.dedent(SOURCE))
    assert handed_functions(parse_source(path, "model.py")) == {"shuffle"}


def test_a_function_that_is_a_parameters_default_is_handed(tmp_path):
    """MaxViT's `def __init__(self, ..., partition_function=window_partition)`: the block calls `self.fn(x, 2)`
    through call_module, in torch's layout, while a direct call elsewhere would fix the function to channels-last
    (a silent mismatch: tests/passes/test_handed_function_defaults.py)."""
    path = tmp_path / "model.py"
    path.write_text(textwrap.dedent(SOURCE).replace("def __init__(self, channels, mix,",
                                                    "def __init__(self, channels, mix=shuffle,"))
    path.write_text(path.read_text().replace("self.unit = Unit(4, shuffle)", "self.unit = Unit(4)"))
    assert handed_functions(parse_source(path, "model.py")) == {"shuffle"}
