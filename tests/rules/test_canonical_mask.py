"""`F._canonical_mask` and `F._none_or_dtype` (torch's MultiheadAttention and code copied from it) against torch: a
bool mask becomes a float mask of the target dtype, -inf where True (kept exact: compared through nan_to_num and
exp); a float mask comes back unchanged; None stays None. Drawn sizes and thresholds, eagerly and under XLA."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, linear_model_cache, random_input

CASES = {
    "bool_keywords": '''attn_mask = y[:, :, 1:3].sum(-1)
        mask = F._canonical_mask(mask=y[:, :, 0] > 0.3, mask_name="key_padding_mask",
                                 other_type=F._none_or_dtype(attn_mask), other_name="attn_mask",
                                 target_type=y.dtype)
        return torch.nan_to_num(mask, neginf=-7.0) + torch.exp(mask) * attn_mask''',
    "bool_positional_2d": '''mask = F._canonical_mask(y[0, :, :1] < y[0, :, 1:2].transpose(0, 1), "attn_mask", None, "",
                                 torch.float32, False)
        return torch.nan_to_num(mask, neginf=-3.0) + y[0, :, 2:3]''',
    "float_unchanged": '''mask = F._canonical_mask(y[:, :, :2] * 3.0, "attn_mask", F._none_or_dtype(None), "", y.dtype)
        return mask + 1.0''',
    "none_stays_none": '''mask = F._canonical_mask(None, "key_padding_mask", None, "attn_mask", y.dtype)
        return y * 2.0 if mask is None else y''',
}


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return linear_model_cache(tmp_path_factory, CASES, input_specs=("5,4",))


@pytest.mark.parametrize("name", sorted(CASES))
@settings(max_examples=6, deadline=None)
@given(batch=st.integers(1, 3), length=st.sampled_from([1, 2, 5]), scale=st.sampled_from([0.1, 1.0, 10.0]),
       seed=st.integers(0, 2**16))
def test_canonical_mask_matches_torch(ported, name, batch, length, scale, seed):
    x = random_input(seed, (batch, length, 4), scale)
    assert_same_outputs(ported(name), [x], what=name)
    assert_same_outputs(ported(name), [x], what=f"{name} XLA", jit=True)
