"""Lists of modules the module resolver follows through a method's body (passes/modules.py): a list grown in a loop,
then rebound to a comprehension over itself and stored in a dict (timm's VisionTransformer.forward_intermediates),
was an internal error (a rebound list is one module reference, not a list of them)."""

from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])
        self.head = nn.Linear(4, 4)
        self.parts = self.collect()

    def collect(self):
        outs = []
        for blk in self.blocks:
            outs.append(blk)
        outs = [o for o in outs]
        table = {}
        table["all"] = outs
        return table

    def forward(self, x):
        return self.head(self.parts["all"][-1](x))
'''


def test_list_rebound_after_a_loop_converts_and_matches_torch(tmp_path):
    pair = port(tmp_path, SOURCE, input_specs=("4",))
    assert_same_outputs(pair, [random_input(0, (3, 4))], tolerance=1e-5, what="rebound module list")
