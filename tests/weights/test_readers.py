"""porter/weights/readers.py: torch state dicts, checkpoints, DataParallel prefixes, safetensors, refusals."""

import pickle

import numpy as np
import pytest

from porter.errors import WeightsError
from porter.weights.readers import read_state_dict, strip_wrapper_prefix, unwrap_state_dict

torch = pytest.importorskip("torch")
nn = torch.nn


class WholeModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)


class RunsCode:
    """Unpickling this would call `print`: stands for any object whose pickle runs code."""

    def __reduce__(self):
        return (print, ("this must never run",))


@pytest.fixture
def state():
    torch.manual_seed(0)
    return WholeModel().state_dict()


def assert_same(read, state):
    assert sorted(read) == sorted(state)
    for key, value in state.items():
        assert isinstance(read[key], np.ndarray)
        np.testing.assert_array_equal(read[key], value.numpy())


def test_plain_state_dict(tmp_path, state):
    torch.save(state, tmp_path / "m.pt")
    assert_same(read_state_dict(tmp_path / "m.pt"), state)


@pytest.mark.parametrize("key", ["state_dict", "model", "model_state_dict"])
def test_checkpoint_nesting(tmp_path, state, key):
    torch.save({"epoch": 7, "optimizer": {"lr": 0.1, "state": {}}, key: state}, tmp_path / "ckpt.pth")
    assert_same(read_state_dict(tmp_path / "ckpt.pth"), state)


def test_data_parallel_and_compile_prefixes(tmp_path, state):
    torch.save({"state_dict": {f"module._orig_mod.{k}": v for k, v in state.items()}}, tmp_path / "dp.pt")
    assert_same(read_state_dict(tmp_path / "dp.pt"), state)


def test_prefix_kept_unless_every_key_has_it():
    tensors = {"module.a": 1, "b": 2}
    assert strip_wrapper_prefix(tensors) == tensors


def test_safetensors(tmp_path, state):
    from safetensors.torch import save_file

    save_file(state, tmp_path / "m.safetensors")
    assert_same(read_state_dict(tmp_path / "m.safetensors"), state)
    (tmp_path / "m.safetensors").rename(tmp_path / "renamed.bin")  # recognised by content, not only the suffix
    assert_same(read_state_dict(tmp_path / "renamed.bin"), state)


def test_bfloat16_becomes_float32(tmp_path):
    torch.save({"w": torch.ones(2, 2, dtype=torch.bfloat16)}, tmp_path / "bf16.pt")
    assert read_state_dict(tmp_path / "bf16.pt")["w"].dtype == np.float32


def test_whole_pickled_module_is_refused(tmp_path):
    torch.save(WholeModel(), tmp_path / "full.pt")
    with pytest.raises(WeightsError) as error:
        read_state_dict(tmp_path / "full.pt")
    message = str(error.value)
    assert "WholeModel" in message and "weights_only=True" in message and "run any code" in message
    assert "state_dict()" in message  # the hint says what to save instead


def test_code_running_pickle_is_refused_without_running(tmp_path, capsys):
    torch.save({"x": RunsCode()}, tmp_path / "evil.pt")
    with open(tmp_path / "evil.pkl", "wb") as handle:
        pickle.dump(RunsCode(), handle)
    for name in ("evil.pt", "evil.pkl"):
        with pytest.raises(WeightsError, match="pickle"):
            read_state_dict(tmp_path / name)
    assert "must never run" not in capsys.readouterr().out


@pytest.mark.parametrize("content, message", [
    (b"", "empty"),
    (b"not a torch file at all", "not a torch weights file"),
    (b"\x08\x00\x00\x00\x00\x00\x00\x00{broken", "not a readable safetensors file"),
])
def test_corrupt_files(tmp_path, content, message):
    (tmp_path / "w.pt").write_bytes(content)
    with pytest.raises(WeightsError, match=message):
        read_state_dict(tmp_path / "w.pt")


def test_missing_and_directory(tmp_path):
    with pytest.raises(WeightsError, match="no such weights file"):
        read_state_dict(tmp_path / "absent.pt")
    with pytest.raises(WeightsError, match="directory"):
        read_state_dict(tmp_path)


def test_containers_without_a_state_dict(tmp_path):
    torch.save([torch.ones(1)], tmp_path / "list.pt")
    with pytest.raises(WeightsError, match="holds a list"):
        read_state_dict(tmp_path / "list.pt")
    with pytest.raises(WeightsError, match="top-level keys: epoch, lr"):
        unwrap_state_dict({"epoch": 1, "lr": 0.1}, "ckpt.pt")
