"""A class whose call calls the class itself (DLA's aggregation tree, as GluonCV's dla.py and timm's dla.py write
it: `self.tree1` is a block one level down, or a Tree again; `residual=None`/`children=None` defaults the recursion
fills): translated once more with its recursion settled (porter/passes/recursion.py), so trees of any depth chain
channels-last, and the port matches torch (eager and XLA) for hypothesis-drawn depths, sizes and batches (even sizes: torch itself needs them, its strided conv and max pool must agree).
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import count_transposes
from tests.rules.op_ports import assert_same_outputs, port_cache, random_input

SOURCE = '''
import torch
import torch.nn as nn


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)

    def forward(self, x, residual=None):
        if residual is None:
            residual = x
        out = torch.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return torch.relu(out + residual)


class Root(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 1, bias=False)
        self.bn = nn.BatchNorm2d(cout)

    def forward(self, x1, x2):
        return torch.relu(self.bn(self.conv(torch.cat([x1, x2], 1))))


class Tree(nn.Module):
    def __init__(self, levels, cin, cout, stride=1):
        super().__init__()
        if levels == 1:
            self.tree1 = BasicBlock(cin, cout, stride)
            self.tree2 = BasicBlock(cout, cout, 1)
            self.root = Root(2 * cout, cout)
        else:
            self.tree1 = Tree(levels - 1, cin, cout, stride)
            self.tree2 = Tree(levels - 1, cout, cout, 1)
            self.root = None
        self.downsample = nn.MaxPool2d(stride, stride) if stride > 1 else nn.Identity()
        self.project = nn.Sequential(nn.Conv2d(cin, cout, 1, bias=False), nn.BatchNorm2d(cout))
        self.levels = levels

    def forward(self, x, residual=None):
        bottom = self.downsample(x)
        residual = self.project(bottom)
        x1 = self.tree1(x, residual)
        if self.levels == 1:
            x2 = self.tree2(x1)
            return self.root(x2, x1)
        return self.tree2(x1)


class Net(nn.Module):
    def __init__(self, levels=3):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU())
        self.tree = Tree(levels, 4, 6, stride=2)
        self.head = nn.Linear(6, 5)

    def forward(self, x):
        x = self.tree(self.stem(x))
        return self.head(x.mean((2, 3)))
'''

# timm's dla.py form: Root takes one list (`[x2, x1] + children`), the aggregation nodes a level roots are handed
# down the recursion in `children`
LIST_SOURCE = SOURCE.replace('''    def forward(self, x1, x2):
        return torch.relu(self.bn(self.conv(torch.cat([x1, x2], 1))))''', '''    def forward(self, xs: List[torch.Tensor]):
        return torch.relu(self.bn(self.conv(torch.cat(xs, 1))))''').replace(
    "self.root = Root(2 * cout, cout)", "self.root = Root((2 + len_children) * cout, cout)").replace(
    "def __init__(self, levels, cin, cout, stride=1):", "def __init__(self, levels, cin, cout, stride=1, len_children=0):"
).replace("self.tree1 = Tree(levels - 1, cin, cout, stride)", "self.tree1 = Tree(levels - 1, cin, cout, stride)").replace(
    "self.tree2 = Tree(levels - 1, cout, cout, 1)", "self.tree2 = Tree(levels - 1, cout, cout, 1, len_children + 1)"
).replace('''    def forward(self, x, residual=None):
        bottom = self.downsample(x)
        residual = self.project(bottom)
        x1 = self.tree1(x, residual)
        if self.levels == 1:
            x2 = self.tree2(x1)
            return self.root(x2, x1)
        return self.tree2(x1)''', '''    def forward(self, x, residual=None, children: Optional[List[torch.Tensor]] = None):
        if children is None:
            children = []
        bottom = self.downsample(x)
        residual = self.project(bottom)
        x1 = self.tree1(x, residual)
        if self.levels == 1:
            x2 = self.tree2(x1)
            return self.root([x2, x1] + children)
        children.append(x1)
        return self.tree2(x1, None, children)''').replace("import torch.nn as nn", "import torch.nn as nn\nfrom typing import List, Optional")

# GluonCV's dla.py form: Root gathers its inputs in `*x`, `children = [] if children is None else children`
STAR_SOURCE = LIST_SOURCE.replace('''    def forward(self, xs: List[torch.Tensor]):
        return torch.relu(self.bn(self.conv(torch.cat(xs, 1))))''', '''    def forward(self, *x):
        return torch.relu(self.bn(self.conv(torch.cat(x, 1))))''').replace('''        if children is None:
            children = []''', "        children = [] if children is None else children").replace(
    "return self.root([x2, x1] + children)", "return self.root(x2, x1, *children)")


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return port_cache(tmp_path_factory, {f"tree{levels}": SOURCE.replace("levels=3):", f"levels={levels}):")
                                         for levels in (1, 2, 3)} | {
        "list_tree": LIST_SOURCE, "star_tree": STAR_SOURCE})


@settings(max_examples=6, deadline=None)
@given(levels=st.sampled_from([1, 2, 3]), batch=st.integers(1, 3), size=st.sampled_from([4, 6, 10]),
       seed=st.integers(0, 2**16))
def test_recursive_tree_matches_torch(ported, levels, batch, size, seed):
    pair = ported(f"tree{levels}")
    x = random_input(seed, (batch, 3, size, size))
    assert_same_outputs(pair, [x], tolerance=1e-4)
    assert_same_outputs(pair, [x], tolerance=1e-4, jit=True)


@pytest.mark.parametrize("levels", [1, 2, 3])
def test_recursive_tree_converts_only_at_the_boundary(ported, levels):
    pair = ported(f"tree{levels}")
    x = random_input(0, (2, 3, 8, 8))
    assert count_transposes(pair.keras_model, [x]) <= 2


@settings(max_examples=4, deadline=None)
@given(name=st.sampled_from(["list_tree", "star_tree"]), batch=st.integers(1, 3), size=st.sampled_from([4, 6, 10]),
       seed=st.integers(0, 2**16))
def test_recursive_tree_handing_lists_down_matches_torch(ported, name, batch, size, seed):
    pair = ported(name)  # (`[x2, x1] + children` / `root(x2, x1, *children)`: a list the recursion fills)
    x = random_input(seed, (batch, 3, size, size))
    assert_same_outputs(pair, [x], tolerance=1e-4)
    assert_same_outputs(pair, [x], tolerance=1e-4, jit=True)


@pytest.mark.parametrize("name", ["list_tree", "star_tree"])
def test_recursive_tree_handing_lists_down_converts_only_at_the_boundary(ported, name):
    assert count_transposes(ported(name).keras_model, [random_input(0, (2, 3, 8, 8))]) <= 2
