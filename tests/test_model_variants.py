"""Models written in other styles than the fixtures (ConvNeXt permutes, DenseNet feature lists, Kim CNN,
seq2seq attention, EfficientNet SE blocks, milesial U-Net, nanoGPT with SDPA, a data-dependent branch, modules
whose forward depends on literal constructor values, a module class used in two layouts, block classes from spec
objects and Sequential subclasses): each converts, matches torch eager and under jit_compile=True, and keeps layout transposes at the boundary.
"""

from pathlib import Path

import pytest

from porter.convert import ConvertOptions
from porter.output import write_tree
from porter.verify.compare import assert_equivalent
from porter.verify.harness import PortedPair, count_transposes
from tests.in_process import convert  # porter convert's collector settings (tests/in_process.py)

MODELS = Path(__file__).resolve().parent / "models"
TRANSPOSE_LIMITS = {"convnext": 2, "textcnn": 0, "densenet": 2, "seq2seq": 0, "effnet": 2, "unet2": 2,
                    "gpt_sdpa": 0, "branchy": 0, "vit_mha": 2, "lstm_clf": 0, "audio2": 2, "reserved": 0, "kuangliu": 2,
                    "shuffle_stages": 2, "static_args": 2, "two_layouts": 2,
                    "config_blocks": 2}


@pytest.mark.parametrize("name", sorted(TRANSPOSE_LIMITS))
def test_variant_matches_torch(name, tmp_path):
    out = tmp_path / "out"
    conversion = convert(ConvertOptions(MODELS / f"{name}.py", out))
    write_tree(out, conversion.files)
    assert conversion.exit_code == 0
    pair = PortedPair(out)
    inputs = pair.example_inputs(batch=2, seed=3)
    expected = pair.run_torch(inputs)
    for jit in (False, True):
        for want, got in zip(expected, pair.run_keras(inputs, jit=jit), strict=True):
            assert_equivalent(want, got, tolerance=1e-4, what=f"{name} jit={jit}")
    assert count_transposes(pair.keras_model, inputs) <= TRANSPOSE_LIMITS[name]
