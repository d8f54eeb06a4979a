"""Property tests of `torch.sort` / `torch.argsort` / `torch.topk` / `torch.index_select` (porter/rules/tensor_ops.py)
against real torch, on the channels-last output of a Conv2d (each runs there along the remapped axis: topk over the
channels was a NotImplementedError at run time before; index_select's index also a legacy `torch.LongTensor`; the
`.values` / `.indices` of a max over the height read as held), and on plain integer tensors with ties (the packing
idiom `lengths.sort(0, descending=True)` then `x.index_select(0, order)`)."""

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from porter.runtime.tensor_ops import argsort, index_select, legacy_tensor, sort
from tests.rules.op_ports import assert_same_outputs, conv_model, port_cache, random_input

OPS = {
    "index_select_channels": "y = torch.index_select(y, 1, torch.tensor([5, 0, 0, 2]))",
    "index_select_width_method": "y = y.index_select(-1, torch.tensor([1, 0])) * 2.0",
    # torch's legacy constructors: `torch.LongTensor(2)` two entries (CondenseNet's index buffer), or the data given
    "index_select_channels_legacy_index": "y = torch.index_select(y, 1, torch.LongTensor([2, 0])) * "
                                          "torch.LongTensor(2).numel()",
    "sort_channels_descending": "y = y.sort(1, descending=True)[0] + torch.sort(y, dim=-1).values",
    "argsort_height": "y = torch.argsort(y, dim=2, descending=True).float()",
    "topk_channels": "y = torch.topk(y, 2, dim=1).values * y.topk(3, 1, largest=False)[1].float().sum(1, True)",
    "topk_height_default_sorted": "y = y.topk(1, dim=2).values + torch.topk(y, 2).indices.float().mean(-1, True)",
    "max_height_values_indices": "y = y.max(2).values.mean(1, True).unsqueeze(2) + "
                                 "y.min(dim=3).indices.float().mean(1)[:, None, :, None]",
}


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return port_cache(tmp_path_factory, {name: conv_model(op) for name, op in OPS.items()})


@pytest.mark.parametrize("name", sorted(OPS))
@given(batch=st.integers(1, 3), height=st.sampled_from([1, 3, 4]), width=st.sampled_from([2, 5]),
       seed=st.integers(0, 2**16))
def test_sort_ops_match_torch(ported, name, batch, height, width, seed):
    x = random_input(seed, (batch, 3, height, width))
    assert_same_outputs(ported(name), [x], tolerance=1e-6, what=f"{name} x{x.shape}")


@given(values=st.lists(st.integers(1, 4), min_size=1, max_size=8), descending=st.booleans())
def test_sort_of_lengths_with_ties_matches_torch_stable_sort(values, descending):
    lengths = np.array(values, np.int64)
    want_values, want_indices = torch.sort(torch.from_numpy(lengths), dim=0, descending=descending,
                                           stable=True)
    got_values, got_indices = sort(lengths, 0, descending=descending)
    np.testing.assert_array_equal(want_values.numpy(), got_values.numpy())
    np.testing.assert_array_equal(want_indices.numpy(), got_indices.numpy())
    np.testing.assert_array_equal(want_indices.numpy(), argsort(lengths, 0, descending).numpy())
    rows = np.arange(len(values) * 2, dtype=np.float32).reshape(len(values), 2)
    np.testing.assert_array_equal(torch.from_numpy(rows).index_select(0, want_indices).numpy(),
                                  index_select(rows, 0, got_indices).numpy())


def test_legacy_constructors_take_sizes_or_data_as_torch():
    assert legacy_tensor(3, 2).shape == tuple(torch.Tensor(3, 2).shape)
    assert legacy_tensor(4, dtype="int64").shape == tuple(torch.LongTensor(4).shape)
    np.testing.assert_array_equal(legacy_tensor([2, 0], dtype="int64").numpy(), torch.LongTensor([2, 0]).numpy())
