"""Channel shuffles and channel regroupings of a channels-last image, with hypothesis-drawn sizes: the einops
rearrange the port runs as a reshape and a gather (porter/rules/einops.py, runtime `_einops_gathered`), and the
permute + flatten it runs in place (`_flatten_in_layout`, runtime `flatten_in_layout`). One port per way of writing
the shuffle; the groups, the channels per group, the batch (1 included) and odd image sizes are drawn and both
models built with them, compared eagerly and under XLA, and the port traces only the boundary's Transposes."""

import numpy as np
import pytest
import tensorflow as tf
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import PortedPair, count_transposes
from tests.passes.snippet_ports import snippet_ports
from tests.rules.op_ports import random_input

pytest.importorskip("einops")

SOURCE = '''
import torch
import torch.nn as nn
from einops import rearrange


def shuffle(x, groups, how):
    b, c, h, w = x.shape
    if how == "einops":
        return rearrange(x, "b (g c) h w -> b (c g) h w", g=groups)
    if how == "einops_by_size":
        return rearrange(x, "b (g c) h w -> b (c g) h w", c=c // groups)
    if how == "permute_flatten":
        return x.reshape(b, groups, c // groups, h, w).permute(0, 2, 1, 3, 4).flatten(1, 2)
    if how == "transpose_flatten":
        return torch.flatten(x.view(b, groups, -1, h, w).transpose(1, 2), start_dim=1, end_dim=2)
    if how == "negative_flatten":
        return x.reshape(b, groups, c // groups, h, w).permute(0, 2, 1, 3, 4).flatten(-4, -3)
    return x.view(b, groups, c // groups, h, w).transpose(1, 2).contiguous().view(b, -1, h, w)


class Net(nn.Module):
    def __init__(self, how="einops", groups=2, per_group=3):
        super().__init__()
        self.how = how
        self.groups = groups
        channels = groups * per_group
        self.conv = nn.Conv2d(3, channels, 1)
        self.conv2 = nn.Conv2d(channels, 4, 3, padding=1)

    def forward(self, x):
        x = self.conv(x)
        x = shuffle(x, self.groups, self.how)
        return self.conv2(x)
'''

WAYS = ["einops", "einops_by_size", "permute_flatten", "transpose_flatten", "negative_flatten", "view_transpose_view"]


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    """how -> the port of Net(how=how) (groups 2, 3 channels each)."""
    ports = snippet_ports(tmp_path_factory, SOURCE, "3,5,7", "how")
    return lambda how: PortedPair(ports(how), seed=1)


def built(pair, **init_args):
    """(torch model, Keras model) of Net(**init_args), torch's weights moved off their defaults and loaded."""
    torch.manual_seed(0)
    torch_model = pair.torch_module.Net(**init_args).eval()
    with torch.no_grad():
        for parameter in torch_model.parameters():
            parameter.add_(torch.randn_like(parameter) * 0.1)
    keras_model = pair.keras_module.Net(**init_args)
    return torch_model, keras_model


@pytest.mark.parametrize("how", WAYS)
@settings(max_examples=6, deadline=None)
@given(groups=st.sampled_from([1, 2, 3]), per_group=st.sampled_from([1, 2, 3]), batch=st.integers(1, 2),
       height=st.sampled_from([1, 3, 4]), width=st.sampled_from([2, 5]), seed=st.integers(0, 2**16))
def test_shuffles_match_torch_on_drawn_sizes(ported, how, groups, per_group, batch, height, width, seed):
    torch_model, keras_model = built(ported(how), how=how, groups=groups, per_group=per_group)
    x = random_input(seed, (batch, 3, height, width))
    keras_model(x)
    ported(how).keras_module.load_state_dict(keras_model, {k: v.numpy() for k, v in torch_model.state_dict().items()})
    with torch.no_grad():
        expected = torch_model(torch.from_numpy(x)).numpy()
    scale = max(1.0, float(np.abs(expected).max()))
    eager = np.asarray(keras_model(x, training=False))
    compiled = np.asarray(tf.function(lambda t: keras_model(t, training=False), jit_compile=True)(x))
    what = f"{how} groups={groups} per_group={per_group} x{x.shape}"
    assert np.abs(eager - expected).max() <= 1e-5 * scale, what
    assert np.abs(compiled - expected).max() <= 1e-5 * scale, what
    assert count_transposes(keras_model, [x]) <= 2, what
