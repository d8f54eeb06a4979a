"""More of lucidrains' packages beyond vit-pytorch, converted as they sit in the installed packages (held-out
einops code nobody here wrote): mlp-mixer-pytorch 0.3.1, g-mlp-pytorch 0.1.5, perceiver-pytorch 0.11.0 and
conformer 0.3.2 match torch.

Each file's main model (a class, or a factory function returning an `nn.Sequential` such as `MLPMixer`) is built
with a tiny config, its parameters and BatchNorm statistics moved off their defaults; the port must convert with
exit 0, import, load torch's state_dict, and match torch eagerly and under XLA within 1e-4 of the output's scale.
The traced port holds no more Transpose ops than torch's own forward moves data (porter/verify/torch_moves.py):
these models take tokens or images that their first einops pattern reads in torch's order, so no boundary
conversion is owed (+0). Files that still fail are strict xfails naming the cause. Run time: each case converts
once (in process), tiny configs.
"""

import importlib
import importlib.util

import numpy as np
import pytest

from tests.corpus.test_torchvision import assert_port_matches, perturbed, xla_transposes

for _package, _pin in (("mlp_mixer_pytorch", "mlp-mixer-pytorch==0.3.1"), ("g_mlp_pytorch", "g-mlp-pytorch==0.1.5"),
                       ("perceiver_pytorch", "perceiver-pytorch==0.11.0"), ("conformer", "conformer==0.3.2")):
    pytest.importorskip(_package, reason=f"{_package} is not installed (scripts/setup.sh installs {_pin} --no-deps)")

IMAGE = (2, 3, 32, 32)
MIXER = dict(image_size=32, channels=3, patch_size=8, dim=32, depth=2, num_classes=10)
PERCEIVER = dict(num_freq_bands=4, depth=2, max_freq=10., input_channels=3, input_axis=2, num_latents=16,
                 latent_dim=32, cross_heads=2, latent_heads=2, cross_dim_head=16, latent_dim_head=16, num_classes=10)
# case -> (module, main class or factory, constructor arguments, input: shape or (shape, token count), Transpose
# bound: torch's own data moves in this config)
CASES = {
    "mlp_mixer": ("mlp_mixer_pytorch.mlp_mixer_pytorch", "MLPMixer", MIXER, IMAGE, 2),
    "mlp_mixer_3d": ("mlp_mixer_pytorch.mlp_mixer_3d_pytorch", "MLPMixer3D",
                     dict(image_size=16, time_size=4, channels=3, patch_size=8, time_patch_size=2, dim=32, depth=2,
                          num_classes=10), (2, 3, 4, 16, 16), 2),
    "permutator": ("mlp_mixer_pytorch.permutator", "Permutator",
                   dict(image_size=32, patch_size=8, dim=32, depth=2, num_classes=10, segments=4), IMAGE, 10),
    "gmlp_vision": ("g_mlp_pytorch.g_mlp_pytorch", "gMLPVision",
                    dict(image_size=32, patch_size=8, num_classes=10, dim=32, depth=2, heads=2, attn_dim=16),
                    IMAGE, 6),
    "gmlp": ("g_mlp_pytorch.g_mlp_pytorch", "gMLP",
             dict(num_tokens=50, dim=32, depth=2, seq_len=16, circulant_matrix=True, shift_tokens=1),
             ((2, 16), 50), 0),
    "perceiver": ("perceiver_pytorch.perceiver_pytorch", "Perceiver", PERCEIVER, (2, 8, 8, 3), 17),
    "perceiver_attn_residual": ("perceiver_pytorch.perceiver_pytorch", "Perceiver",
                                dict(PERCEIVER, self_per_cross_attn=2, attn_residual=True, attn_residual_rank=8),
                                (2, 8, 8, 3), 27),
    "perceiver_lm": ("perceiver_pytorch.perceiver_io", "PerceiverLM",
                     dict(dim=32, num_tokens=50, max_seq_len=16, depth=1, num_latents=8, latent_dim=32,
                          cross_heads=1, latent_heads=2, cross_dim_head=16, latent_dim_head=16),
                     ((2, 16), 50), 4),
    "conformer": ("conformer.conformer", "Conformer",
                  dict(dim=32, depth=1, dim_head=16, heads=2, conv_kernel_size=7), (2, 16, 32), 6),
}

# case -> why it still fails (strict xfail: fixing it turns the test red until the entry is removed)
FAILING = {}
# case -> why its port still moves data more often than torch
MOVES_MORE = {}


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    """case -> (torch model, Keras model, example input), converted once per test module."""
    from pathlib import Path

    from porter.convert import ConvertOptions
    from porter.output import write_tree
    from tests.in_process import convert  # porter convert's collector settings (tests/in_process.py)

    cache = {}

    def get(case):
        if case not in cache:
            module_name, main, kwargs, example, _ = CASES[case]
            module = importlib.import_module(module_name)
            source = Path(module.__file__)
            out = tmp_path_factory.mktemp(case) / "out"
            # a factory function is no class to pick: the port carries it beside the classes it builds
            class_name = main if isinstance(getattr(module, main), type) else None
            conversion = convert(ConvertOptions(source, out, class_name=class_name))
            assert conversion.exit_code == 0, conversion.exit_code
            write_tree(out, conversion.files)
            spec = importlib.util.spec_from_file_location(f"lucidrains_port_{case}", out / f"{source.stem}_keras.py")
            port = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(port)
            torch_model = perturbed(getattr(module, main)(**kwargs))
            keras_model = getattr(port, main)(**kwargs)
            generator = np.random.default_rng(0)
            if isinstance(example[0], tuple):  # token ids
                x = generator.integers(0, example[1], example[0])
            else:
                x = generator.standard_normal(example).astype("float32")
            keras_model(x)
            port.load_state_dict(keras_model, {k: v.numpy() for k, v in torch_model.state_dict().items()})
            cache[case] = (torch_model, keras_model, x)
        return cache[case]

    return get


def _cases():
    return [pytest.param(case, marks=pytest.mark.xfail(reason=FAILING[case], strict=True)) if case in FAILING
            else case for case in sorted(CASES)]


@pytest.mark.parametrize("case", _cases())
def test_lucidrains_file_matches_torch(case, ported):
    assert_port_matches(*ported(case))


@pytest.mark.parametrize("case", [pytest.param(case, marks=pytest.mark.xfail(reason=MOVES_MORE[case], strict=True))
                                  if case in MOVES_MORE else case for case in sorted(CASES)])
def test_lucidrains_port_moves_data_no_more_than_torch(case, ported):
    """Patch rearranges and heads merged into the batch are torch's own data moves; the port adds none."""
    from porter.verify.torch_moves import count_torch_data_moves

    torch_model, keras_model, x = ported(case)
    moves = count_torch_data_moves(torch_model, [x])
    assert moves == CASES[case][4]  # the bound this test states is torch's count in this config
    assert xla_transposes(keras_model, x) <= moves
