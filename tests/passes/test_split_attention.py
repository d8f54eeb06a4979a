"""ResNeSt's split attention: the conv output split into `radix` parts (a list of channels-last images), per-part
attention weights of shape (N, C, 1, 1) split alike, combined by `sum([att * split for (att, split) in zip(attens,
splited)])`. `zip` over two lists binds an item of each as its list holds it, so each weight meets its part where
the part lies (a (N, C, 1, 1) weight moves by a reshape) and the parts are not brought back to torch's order; a
conversion of a comprehension's own variable stays inside the comprehension (hoisted before the statement, it named
a variable not yet bound). A held-out ResNeSt traced 13 Transposes, now 4: the boundary and rSoftMax's own
`transpose(1, 2)` of the radix groups, one a block, which torch makes too. The port matches torch for
hypothesis-drawn radix, groups, sizes and batches."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import count_transposes
from tests.passes.snippet_ports import assert_built_matches_torch
from tests.rules.op_ports import port, random_input

SOURCE = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class rSoftMax(nn.Module):
    def __init__(self, radix, cardinality):
        super().__init__()
        self.radix, self.cardinality = radix, cardinality

    def forward(self, x):
        batch = x.size(0)
        if self.radix > 1:
            x = x.view(batch, self.cardinality, self.radix, -1).transpose(1, 2)
            x = F.softmax(x, dim=1)
            x = x.reshape(batch, -1)
        else:
            x = torch.sigmoid(x)
        return x


class SplitAttention(nn.Module):
    def __init__(self, channels=8, radix=2, groups=1):
        super().__init__()
        self.radix = radix
        self.conv = nn.Conv2d(channels, channels * radix, 3, padding=1, groups=groups * radix, bias=False)
        self.fc1 = nn.Conv2d(channels, 8, 1, groups=groups)
        self.fc2 = nn.Conv2d(8, channels * radix, 1, groups=groups)
        self.rsoftmax = rSoftMax(radix, groups)

    def forward(self, x):
        x = F.relu(self.conv(x))
        batch, rchannel = x.shape[:2]
        if self.radix > 1:
            splited = torch.split(x, rchannel // self.radix, dim=1)
            gap = sum(splited)
        else:
            gap = x
        gap = F.relu(self.fc1(F.adaptive_avg_pool2d(gap, 1)))
        atten = self.rsoftmax(self.fc2(gap)).view(batch, -1, 1, 1)
        if self.radix > 1:
            attens = torch.split(atten, rchannel // self.radix, dim=1)
            out = sum([att * split for (att, split) in zip(attens, splited)])
        else:
            out = atten * x
        return out.contiguous()


class Net(nn.Module):
    def __init__(self, radix=2, groups=1):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.attn = SplitAttention(8, radix, groups)
        self.head = nn.Conv2d(8, 4, 1)

    def forward(self, x):
        return self.head(self.attn(self.stem(x)))
'''


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    return port(tmp_path_factory.mktemp("split_attention"), SOURCE, input_specs=("3,6,6",))


@settings(max_examples=4, deadline=None)
@given(radix=st.sampled_from([1, 2, 4]), groups=st.sampled_from([1, 2]), batch=st.integers(1, 3),
       height=st.integers(2, 7), width=st.integers(2, 7), seed=st.integers(0, 2**16))
def test_split_attention_weights_meet_their_parts_where_they_lie(net, radix, groups, batch, height, width, seed):
    x = random_input(seed, (batch, 3, height, width))
    keras_model = assert_built_matches_torch(net, x, radix=radix, groups=groups)
    assert count_transposes(keras_model, [x]) <= (3 if radix > 1 and groups > 1 else 2)
    assert "to_channels_first(_each)" not in (net.out_dir / "op_model_keras.py").read_text()
