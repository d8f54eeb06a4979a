"""torchaudio's model files, converted as they sit in the installed package (held-out audio code nobody here wrote):
ConvTasNet, Wav2Letter, DeepSpeech, WaveRNN, the Conformer, the Emformer and Hybrid Demucs from torchaudio 2.11.1.

Only the files are read: torchaudio's compiled extension is built for another torch, so the package is never
imported; each file imports torch alone and is loaded by path. Each model is built with a small config, its
parameters moved off their defaults (porter/verify/torch_bridge.py); the port must convert with exit 0, import,
load torch's state_dict and match torch eagerly at batch 1 and under XLA at batch 2 within 1e-5 of the output's
scale, tracing no more Transposes than the bound each case states.

What each case held back before: the Emformer added int64 lengths to an int32 `.int()` (TensorFlow refused, torch
promotes); Hybrid Demucs built (stft/istft, `Tensor.as_strided`, `p.data /= s`) and then failed at run time: its
time-branch encoders are one class called at two ranks, whose case for `empty=False` (met at the frequency
branch's constructions) returned torch's order while the time branch's instances, built with `empty=last_freq`,
were called as the generic call returns (channels-last); and its `if z.shape[-1] != length: raise` became a
tf.cond tracing the raise under XLA.
"""

import importlib.util
from pathlib import Path

import pytest

from porter.convert import ConvertOptions
from porter.output import write_tree
from porter.verify.harness import PortedPair
from tests.in_process import convert
from tests.rules.op_ports import assert_matches_at_two_batches


def _models_folder():
    spec = importlib.util.find_spec("torchaudio")  # (found, not imported: its extension needs another torch)
    return Path(spec.submodule_search_locations[0]) / "models" if spec is not None else None


MODELS = _models_folder()
pytestmark = pytest.mark.skipif(MODELS is None or not MODELS.is_dir(), reason="torchaudio is not installed "
                                "(scripts/setup.sh installs torchaudio==2.11.1 --no-deps)")

# case -> (file under torchaudio/models, class, constructor arguments, input specs, Transposes it may trace)
CASES = {
    "conv_tasnet": ("conv_tasnet.py", "ConvTasNet", {"enc_num_feats": 16, "msk_num_feats": 8,
                                                      "msk_num_hidden_feats": 16, "msk_num_layers": 2,
                                                      "msk_num_stacks": 2}, ["1,64"], 2),
    "wav2letter": ("wav2letter.py", "Wav2Letter", {"num_classes": 12}, ["1,400"], 1),
    "deepspeech": ("deepspeech.py", "DeepSpeech", {"n_feature": 12, "n_hidden": 16}, ["1,10,12"], 0),
    # (the upsampler's Stretch2d and its conv over a (freq, time) map: the data moves torch makes too)
    "wavernn": ("wavernn.py", "WaveRNN", {"upsample_scales": [2, 2], "n_classes": 16, "hop_length": 4,
                                          "n_res_block": 1, "n_rnn": 16, "n_fc": 16, "kernel_size": 5, "n_freq": 8,
                                          "n_hidden": 8, "n_output": 8}, ["1,20", "1,8,9"], 5),
    # (lengths equal to the sequence: the padding mask's width is the longest length)
    "conformer": ("conformer.py", "Conformer", {"input_dim": 8, "num_heads": 2, "ffn_dim": 16, "num_layers": 2,
                                                "depthwise_conv_kernel_size": 3}, ["10,8", "():int64:10:11"], 0),
    # (time-major inside: the entry and exit, the right-context slices and the memory pool)
    "emformer": ("emformer.py", "Emformer", {"input_dim": 16, "num_heads": 2, "ffn_dim": 32, "num_layers": 2,
                                             "segment_length": 4, "right_context_length": 1, "max_memory_size": 2},
                 ["13,16", "():int64:12:13"], 7),
    # (a spectrogram branch folding frequencies into the batch and back at every layer, beside a time branch)
    "hdemucs": ("_hdemucs.py", "HDemucs", {"sources": ["a", "b"], "channels": 4, "nfft": 64, "depth": 3},
                ["2,1024"], 64),
}


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    """case -> PortedPair, converted once per test module."""
    cache = {}

    def get(case):
        if case not in cache:
            stem, class_name, init_args, specs, _ = CASES[case]
            out = tmp_path_factory.mktemp(case) / "out"
            conversion = convert(ConvertOptions(MODELS / stem, out, class_name=class_name, input_specs=specs,
                                                init_args=init_args))
            assert conversion.exit_code == 0, conversion.manifest
            write_tree(out, conversion.files)
            cache[case] = PortedPair(out, class_name=class_name, init_args=init_args, seed=3)
        return cache[case]

    return get


@pytest.mark.parametrize("case", sorted(CASES))
def test_torchaudio_model_matches_torch(case, ported):
    assert_matches_at_two_batches(ported(case), CASES[case][4], seeds=(3, 4))
