"""List methods on names porter might take for tensors: a list a never-called-here closure fills (`idc = []`,
`def grow(i): idc.extend(...)`, `idc = torch.cat(idc, 1)` after it, as torchaudio's `_compute_mask_indices`
does) and `torch.jit.annotate(List[Tensor], [])`: plain list calls, never `Tensor.extend` stubs. Compared with
torch on drawn batches, eagerly and under XLA."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, linear_model_cache, random_input

CASES = {
    "closure_filled_list": '''pieces = []

        def grow(i):
            pieces.extend([y[:, i:i + 1] * float(i + 1)])
            pieces.insert(0, y[:, :1])
            return i

        list(map(grow, range(3)))
        pieces.reverse()
        pieces = torch.cat(pieces, 1)
        return pieces * 2.0''',
    "annotated_list": '''ret = torch.jit.annotate(List[Tensor], [])
        ret.extend([y, y * 2.0])
        ret.append(y + 1.0)
        first = ret.pop(0)
        return torch.stack(ret, 0).sum(0) + first''',
}


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return linear_model_cache(tmp_path_factory, CASES)


@pytest.mark.parametrize("name", sorted(CASES))
@settings(max_examples=5, deadline=None)
@given(batch=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_list_methods_match_torch(ported, name, batch, seed):
    x = random_input(seed, (batch, 4))
    assert_same_outputs(ported(name), [x], what=name)
    assert_same_outputs(ported(name), [x], what=f"{name} XLA", jit=True)


@pytest.mark.parametrize("name", sorted(CASES))
def test_no_stub(ported, name):
    text = ported(name).keras_module.__loader__.get_source(ported(name).keras_module.__name__)
    assert "not_supported(" not in text.split("# --- ported from")[1], text
