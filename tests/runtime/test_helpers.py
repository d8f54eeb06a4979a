"""porter.runtime.helpers' parameter initialisers: torch.nn.init's distributions (compared with the real torch
initialisers on hypothesis-drawn shapes), and a table built without its rows (TableBuild: weight None) left alone."""

import keras
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.runtime import helpers as H

INITS = {
    "xavier_uniform": (H.init_xavier_uniform, torch.nn.init.xavier_uniform_),
    "xavier_normal": (H.init_xavier_normal, torch.nn.init.xavier_normal_),
    "kaiming_uniform": (H.init_kaiming_uniform, torch.nn.init.kaiming_uniform_),
    "kaiming_normal": (H.init_kaiming_normal, torch.nn.init.kaiming_normal_),
    "trunc_normal": (H.init_trunc_normal, torch.nn.init.trunc_normal_),
    "uniform": (H.init_uniform, torch.nn.init.uniform_),
    "normal": (H.init_normal, torch.nn.init.normal_),
}


@settings(max_examples=10, deadline=None)
@given(name=st.sampled_from(sorted(INITS)), rows=st.integers(64, 160), columns=st.integers(64, 160))
def test_initialisers_draw_torchs_distribution(name, rows, columns):
    """Same spread as torch's (standard deviation within 10%) and within torch's range."""
    ours, theirs = INITS[name]
    variable = keras.Variable(np.zeros((rows, columns), np.float32))
    assert ours(variable) is variable
    drawn = np.asarray(variable)
    expected = theirs(torch.empty(rows, columns)).numpy()
    assert abs(drawn.std() / expected.std() - 1) < 0.1, (drawn.std(), expected.std())
    if "normal" not in name or name == "trunc_normal":
        assert np.abs(drawn).max() <= np.abs(expected).max() * 1.05 + 1e-6


@pytest.mark.parametrize("init", [H.init_normal, H.init_uniform, H.init_zeros, H.init_ones, H.init_eye,
                                  H.init_xavier_uniform, H.init_kaiming_normal, H.init_orthogonal,
                                  lambda t: H.init_constant(t, 3.0), H.init_trunc_normal])
def test_a_table_built_without_its_rows_is_left_alone(init):
    assert init(None) is None


def test_clone_layer_copies_weights_into_variables_of_its_own():
    from porter.runtime.helpers import bool_as_int, clone_layer
    from porter.runtime.linear import Linear

    layer = Linear(3, 2)
    twin = clone_layer([layer, {"again": layer}])
    assert twin[0] is twin[1]["again"] and twin[0] is not layer  # (one layer handed twice: one clone)
    np.testing.assert_array_equal(twin[0].weight.numpy(), layer.weight.numpy())
    twin[0].weight.assign(twin[0].weight * 0)
    assert np.abs(layer.weight.numpy()).sum() > 0
    assert clone_layer((1, "a")) == (1, "a")
    assert bool_as_int(np.array([True, False])).numpy().tolist() == [1, 0]
    assert bool_as_int(np.array([2.5])).numpy().tolist() == [2.5]
