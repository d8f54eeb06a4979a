"""porter/runtime/module.py: the torch module API on generated classes (named_parameters, parameters, apply)."""

import numpy as np

from tests.rules.op_ports import port

SOURCE = '''
import math
import torch
import torch.nn as nn


class Tied(nn.Module):
    def __init__(self, vocab=11, width=6):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.norm = nn.BatchNorm1d(width)
        self.blocks = nn.ModuleList([nn.Linear(width, width) for _ in range(2)])
        self.head = nn.Linear(width, vocab, bias=False)
        self.embed.weight = self.head.weight
        self.register_buffer("scale", torch.ones(1))
        self.apply(self._init_weights)
        for name, p in self.named_parameters():
            if name.endswith("1.weight"):
                torch.nn.init.zeros_(p)

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx):
        x = self.embed(idx)
        for block in self.blocks:
            x = block(x)
        return self.head(x) * self.scale
'''


def test_named_parameters_follow_torch(tmp_path):
    """Same names in the same order as torch (buffers and BatchNorm statistics excluded, a tied weight once), and
    code that walks them (`apply`, `named_parameters` in __init__) runs on the port."""
    pair = port(tmp_path, SOURCE, input_specs=("5:int64:0:11",))
    torch_model = pair.torch_module.Tied()
    keras_model = pair.keras_module.Tied()
    torch_names = [name for name, _ in torch_model.named_parameters()]
    keras_names = [name for name, _ in keras_model.named_parameters()]
    assert keras_names == torch_names
    assert len(list(keras_model.parameters())) == len(list(torch_model.parameters()))
    zeroed = dict(keras_model.named_parameters())["blocks.1.weight"]
    assert not np.asarray(zeroed).any()  # the __init__ loop over named_parameters ran on the port


MASK_SOURCE = '''
import torch
import torch.nn as nn


class Attention(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.qkv = nn.Linear(dim, dim * 3)

    def forward(self, x, mask=None):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        dots = q @ k.transpose(-1, -2)
        if mask is not None:
            dots = dots.masked_fill(~mask[:, None, :], -1e9)
        return dots.softmax(dim=-1) @ v


class Net(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.attn = Attention(dim)

    def forward(self, x, mask):
        return self.attn(x, mask=mask) + x
'''


def test_a_mask_argument_is_the_modules_own(tmp_path):
    """A forward taking `mask` (an attention mask, vit-pytorch style) called with `mask=tensor`: Keras 3 takes it for
    a Keras mask and warned the layer "does not support masking"; porter's layers compute no Keras mask, so no
    warning, and the mask reaches forward as torch passes it."""
    import warnings

    import torch

    pair = port(tmp_path, MASK_SOURCE, input_specs=("5,8", "5:bool:0:2"))
    torch_model = pair.torch_module.Net().eval()
    keras_model = pair.keras_module.Net()
    pair.keras_module.load_state_dict(keras_model, {k: v.numpy() for k, v in torch_model.state_dict().items()})
    rng = np.random.default_rng(0)
    x, mask = rng.standard_normal((2, 5, 8)).astype("float32"), rng.random((2, 5)) > 0.3
    mask[:, 0] = True
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = np.asarray(keras_model(x, mask, training=False))
    assert not [w for w in caught if "mask" in str(w.message)]
    with torch.no_grad():
        expected = torch_model(torch.from_numpy(x), torch.from_numpy(mask)).numpy()
    assert np.abs(got - expected).max() <= 1e-5 * np.abs(expected).max()


def _traced_transposes(fn, x):
    import tensorflow as tf

    graph = tf.function(fn).get_concrete_function(tf.TensorSpec(x.shape, tf.float32)).graph
    return sum(1 for op in graph.get_operations() if op.type == "Transpose")


def test_sequential_hands_flexible_layers_the_layout_it_holds():
    """A Sequential lets an einops layer write the layout the next layer wants and a 1x1 conv run in the layout it
    is handed: a Conformer conv module (`b n c -> b c n`, convs, `b c n -> b n c`) and an MLP-Mixer token-mixing
    block called from a module that holds torch's order (call_module) trace no Transpose, and match torch."""
    import einops.layers.torch as einops_torch
    import torch
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from porter.runtime.activation import GELU
    from porter.runtime.conv import Conv1d
    from porter.runtime.einops import Rearrange
    from porter.runtime.module import Sequential, call_module
    from porter.verify.compare import assert_equivalent
    from porter.verify.torch_bridge import copy_torch_weights, perturb_torch_module

    @settings(max_examples=10, deadline=None)
    @given(tokens=st.integers(2, 6), width=st.integers(1, 5), batch=st.integers(1, 2), seed=st.integers(0, 2**16))
    def check(tokens, width, batch, seed):
        torch.manual_seed(seed)
        conformer = perturb_torch_module(torch.nn.Sequential(
            einops_torch.Rearrange("b n c -> b c n"), torch.nn.Conv1d(width, 2 * width, 1),
            torch.nn.Conv1d(2 * width, width, 3, padding=1), torch.nn.GELU(), torch.nn.Conv1d(width, width, 1),
            einops_torch.Rearrange("b c n -> b n c")), seed).eval()
        conformer_port = copy_torch_weights(conformer, Sequential(
            Rearrange("b n c -> b c n"), Conv1d(width, 2 * width, 1), Conv1d(2 * width, width, 3, padding=1), GELU(),
            Conv1d(width, width, 1), Rearrange("b c n -> b n c")))
        mixer = perturb_torch_module(torch.nn.Sequential(
            torch.nn.Conv1d(tokens, 3, 1), torch.nn.GELU(), torch.nn.Conv1d(3, tokens, 1)), seed).eval()
        mixer_port = copy_torch_weights(mixer, Sequential(Conv1d(tokens, 3, 1), GELU(), Conv1d(3, tokens, 1)))
        x = np.random.default_rng(seed).standard_normal((batch, tokens, width)).astype(np.float32)
        for reference, ported, run in ((conformer, conformer_port, conformer_port),
                                       (mixer, mixer_port, lambda t: call_module(mixer_port, t, training=False))):
            with torch.no_grad():
                expected = reference(torch.from_numpy(x)).numpy()
            assert_equivalent(expected, np.asarray(run(x)))
            assert _traced_transposes(run, x) == 0

    check()


def test_call_module_hands_a_list_of_images_item_by_item():
    """A list handed to `call_module` (a Sequential subclass's loop passing HRNet's branches on) holds its images in
    the layout the caller says (`held`: torch's by default, or channels-last): a module taking another layout gets
    each item converted, a list or tuple it returns comes back in the caller's layout, of the type it returned, and
    its other items as they are; a module of the caller's layout costs no Transpose; matches torch."""
    import keras
    import torch
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from porter.runtime.base import to_channels_first, to_channels_last
    from porter.runtime.conv import Conv2d
    from porter.runtime.module import call_module

    class Pair(keras.layers.Layer):  # a channels-last block returning [conv(first), second, a count]
        porter_layout = "channels_last"
        layout_out = "channels_last"

        def __init__(self, conv, returns):
            super().__init__()
            self.conv, self.returns = conv, returns

        def call(self, xs):
            return self.returns([self.conv(xs[0], layout="channels_last"), xs[1], 3])

    @settings(max_examples=8, deadline=None)
    @given(size=st.integers(1, 6), channels=st.integers(1, 4), batch=st.integers(1, 2), stride=st.sampled_from([1, 2]),
           returns=st.sampled_from([list, tuple]), seed=st.integers(0, 2**16))
    def check(size, channels, batch, stride, returns, seed):
        torch.manual_seed(seed)
        conv = torch.nn.Conv2d(channels, 2, 3, stride, padding=1).eval()
        port = Conv2d(channels, 2, 3, stride, padding=1)
        port(np.zeros((1, size, size, channels), np.float32), layout="channels_last")
        port.set_weights([conv.weight.detach().numpy().transpose(2, 3, 1, 0), conv.bias.detach().numpy()])
        rng = np.random.default_rng(seed)
        first = rng.standard_normal((batch, channels, size, size)).astype(np.float32)
        second = rng.standard_normal((batch, 5, size + 1, size)).astype(np.float32)
        with torch.no_grad():
            expected = conv(torch.from_numpy(first)).numpy()
        for handed in (list, tuple):
            result = call_module(Pair(port, returns), handed([first, second]))
            assert type(result) is returns and result[2] == 3
            np.testing.assert_allclose(np.asarray(result[0]), expected, rtol=1e-5, atol=1e-5)
            np.testing.assert_array_equal(np.asarray(result[1]), second)
        # the caller holds its images channels-last (HRNet's stages passing branches on): none converted
        held = [first.transpose(0, 2, 3, 1), second.transpose(0, 2, 3, 1)]

        def run(a, b):
            return call_module(Pair(port, returns), [a, b], held="channels_last")

        result = run(*held)
        assert type(result) is returns and result[2] == 3
        np.testing.assert_allclose(np.asarray(result[0]), expected.transpose(0, 2, 3, 1), rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(np.asarray(result[1]), held[1])
        assert _traced_transposes(lambda a: run(a, held[1])[0], held[0]) == 0
        # a list handed channels-last to a block of torch's layout: converted in, its pair converted back
        source = Pair(port, returns)
        source.porter_layout, source.layout_out = "source", "source"
        source.call = lambda xs: returns([to_channels_first(port(to_channels_last(xs[0]), layout="channels_last")),
                                          xs[1], 3])
        result = call_module(source, [held[0], held[1]], held="channels_last")
        np.testing.assert_allclose(np.asarray(to_channels_first(result[0])), expected, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(np.asarray(result[1]), held[1], rtol=1e-6)
        # an image handed channels-last to a block of torch's layout returning a pair (a block's `(x, x_prev)`):
        # the pair's images come back channels-last too, as the caller holds its images
        source.call = lambda x: returns([to_channels_first(port(to_channels_last(x), layout="channels_last")), x])
        result = call_module(source, held[0], held="channels_last")
        np.testing.assert_allclose(np.asarray(to_channels_first(result[0])), expected, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(np.asarray(result[1]), held[0], rtol=1e-6)

    check()


def test_containers_list_their_children_as_torch_does():
    """`children()` of a Sequential, ModuleList and ModuleDict (an nn.Sequential subclass's forward iterating
    `self.children()`, as pycls' AnyNet stages do) lists what torch's lists, in its order; a leaf layer has none."""
    import torch

    from porter.runtime.linear import Linear
    from porter.runtime.module import ModuleDict, ModuleList, Sequential

    layers = [(2, 3), (3, 4), (4, 1)]
    for torch_container, port_container in (
            (torch.nn.Sequential(*[torch.nn.Linear(*s) for s in layers]), Sequential(*[Linear(*s) for s in layers])),
            (torch.nn.ModuleList([torch.nn.Linear(*s) for s in layers]), ModuleList([Linear(*s) for s in layers])),
            (torch.nn.ModuleDict({f"l{i}": torch.nn.Linear(*s) for i, s in enumerate(layers)}),
             ModuleDict({f"l{i}": Linear(*s) for i, s in enumerate(layers)}))):
        expected = [(m.in_features, m.out_features) for m in torch_container.children()]
        assert [(m.in_features, m.out_features) for m in port_container.children()] == expected
    assert list(Linear(2, 3).children()) == list(torch.nn.Linear(2, 3).children()) == []


def test_item_assignment_replaces_a_containers_child_as_torch_does():
    """`model.classifier[3] = nn.Linear(...)` (a torchvision model's head replaced): the Sequential and ModuleList
    replace the child under its key, the old child's weights leave the layer's weights and its state, as in torch
    (the runtime's containers had no `__setitem__`: TypeError)."""
    import torch

    from porter.runtime.base import collect_state
    from porter.runtime.linear import Linear
    from porter.runtime.module import ModuleList, Sequential

    for torch_kind, port_kind in ((torch.nn.Sequential, Sequential), (torch.nn.ModuleList, ModuleList)):
        reference = torch_kind([torch.nn.Linear(2, 3), torch.nn.Linear(3, 4)]) if torch_kind is torch.nn.ModuleList \
            else torch_kind(torch.nn.Linear(2, 3), torch.nn.Linear(3, 4))
        ported = port_kind([Linear(2, 3), Linear(3, 4)]) if port_kind is ModuleList \
            else port_kind(Linear(2, 3), Linear(3, 4))
        reference[-1] = torch.nn.Linear(3, 5)
        ported[-1] = Linear(3, 5)
        expected = {key: value.numel() for key, value in reference.state_dict().items()}
        assert {e.key: int(np.prod(e.variable.shape)) for e in collect_state(ported)} == expected
        assert sorted(int(np.prod(w.shape)) for w in ported.weights) == sorted(
            p.numel() for p in reference.parameters())


def test_parameters_made_from_tensors_take_the_policys_variable_dtype():
    """`nn.Parameter(torch.empty(...))` in a module (timm's PosEmbedRel) was float32 under Keras's float64 policy too,
    so the float64 port `porter verify` builds as an arbiter failed on a matmul of float64 queries by a float32
    parameter. Parameters and float buffers take the policy's variable dtype, as torch's `model.double()` does;
    integer buffers keep theirs."""
    import keras

    from porter.runtime.module import TorchModule

    class Holder(TorchModule):
        def __init__(self):
            super().__init__()
            self.table = self.parameter(np.zeros((3, 2), np.float32))
            self.register_buffer("scale", np.ones(2, np.float32))
            self.register_buffer("index", np.arange(3))

    previous = keras.config.dtype_policy()
    try:
        for policy, float_dtype in (("float32", "float32"), ("float64", "float64"), ("mixed_bfloat16", "float32")):
            keras.config.set_dtype_policy(policy)
            holder = Holder()
            assert (holder.table.dtype, holder.scale.dtype, holder.index.dtype) == (float_dtype, float_dtype, "int64")
    finally:
        keras.config.set_dtype_policy(previous)
