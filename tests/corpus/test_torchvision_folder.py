"""The whole installed `torchvision/models/` folder converts in one `porter convert DIR` call.

Every subpackage is included (classification, detection, segmentation, optical flow, quantization, video): the
files porter cannot convert yet (detection heads whose generated code fails porter's own check, quantized
MobileNetV3) are left out and listed, never a crash, so the exit code is 0 or 1, never 3. Every module the manifest
lists imports by file path, and models built from the mirrored modules match torchvision's.

One conversion (about 60 files, 44 with model classes) serves every test here: 1.5-4 minutes on two busy CPU cores,
most of it reading and translating the detection files.
"""

import json
import subprocess
import sys
import time

import numpy as np
import pytest

from tests.corpus.torchvision_support import import_torchvision, model_file

torchvision = import_torchvision()
pytestmark = pytest.mark.skipif(torchvision is None, reason="torchvision 0.28.0 is not installed (scripts/setup.sh "
                                                            "installs it with --no-deps)")

MATCHED = ["resnet", "mobilenetv3", "densenet"]  # rows of tests/corpus/test_torchvision.py's CASES
PROBE = """
import importlib.util, sys, traceback
failed = []
for path in sys.argv[1:]:
    spec = importlib.util.spec_from_file_location("probe_" + str(abs(hash(path))), path)
    try:
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
    except BaseException:
        failed.append(path + ": " + traceback.format_exc().strip().splitlines()[-1])
print("\\n".join(failed))
sys.exit(1 if failed else 0)
"""


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    """(exit code, stderr, OUT, manifest, seconds) of converting torchvision/models in one call, ResNet (in
    resnet.py; quantization/resnet.py derives from it) the main class."""
    models = model_file(torchvision, "resnet").parent
    out = tmp_path_factory.mktemp("torchvision_folder") / "out"
    start = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "porter.cli", "convert", str(models), "-o", str(out), "--class",
                             "resnet.py:ResNet"],
                            capture_output=True, text=True, check=False)
    seconds = time.monotonic() - start
    manifest = json.loads((out / "porter-manifest.json").read_text()) if out.is_dir() else None
    return result.returncode, result.stderr, out, manifest, seconds


def test_the_folder_converts_in_one_call(converted):
    code, stderr, out, manifest, seconds = converted
    assert code in (0, 1), stderr[-3000:]
    assert "Traceback" not in stderr
    modules = [entry["module"] for entry in manifest["sources"]]
    assert len(modules) >= 30 and len(set(modules)) == len(modules)
    for expected in ("resnet_keras.py", "segmentation/deeplabv3_keras.py", "video/resnet_keras.py",
                     "optical_flow/raft_keras.py", "quantization/resnet_keras.py"):
        assert expected in modules
    assert all((out / module).is_file() for module in modules)
    assert set(manifest["files"]) == {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    for skipped in manifest["skipped"]:  # each file left out is said, with its reason, on stderr too
        assert skipped["path"] in stderr and skipped["error"]
    assert (code == 1) == bool(manifest["skipped"] or any(c["unsupported"] for s in manifest["sources"]
                                                          for c in s["classes"]))
    assert manifest["main_class"] == "ResNet" and modules[0] == "resnet_keras.py"  # the main class's file first
    for name in ("train_tpu.py", "test_equivalence.py", "PORTING.md", "report.html"):
        assert (out / name).is_file()
    assert not any(entry["path"].startswith("/") for entry in manifest["sources"])  # no absolute path
    assert str(model_file(torchvision, "resnet").parent) not in json.dumps(manifest["skipped"])
    print(f"torchvision/models: {len(modules)} modules, {len(manifest['skipped'])} files left out, exit {code}, "
          f"{seconds:.0f} s")


def test_modules_import_what_their_siblings_ports_hold(converted):
    """A linked definition translated the same way in its own file's port is imported from it, by path; the files
    whose classes derive through a module attribute (`inception_module.InceptionA`) are converted too."""
    _, _, out, manifest, _ = converted
    entries = {entry["module"]: entry for entry in manifest["sources"]}
    assert {"quantization/inception_keras.py", "quantization/shufflenetv2_keras.py"} <= set(entries)
    imports = {(entry["module"], item["module"], name) for entry in entries.values()
               for item in entry["imports"] for name in item["names"]}
    assert ("quantization/googlenet_keras.py", "googlenet_keras.py", "Inception") in imports  # (segmentation's
    # `_SimpleSegmentationModel` is its file's main class in _utils.py's port, returning its dict of features
    # through `self.io_output`, and FCN's base in fcn.py's: two translations, each port holding its own)
    assert ("quantization/resnet_keras.py", "resnet_keras.py", "conv3x3") in imports
    # what only other files use lives in its own file's port (`_make_divisible` in _utils.py's), a stub in a linked
    # definition names its own file's line, and a name linked under another (a clash) is imported under its own
    assert ("efficientnet_keras.py", "_utils_keras.py", "_make_divisible") in imports
    assert ("detection/faster_rcnn_keras.py", "detection/roi_heads_keras.py", "fastrcnn_loss") in imports
    assert ("detection/fcos_keras.py", "detection/transform_keras.py", "_fake_cast_onnx_transform") in imports
    copies = sum(len(entry["copied"]) for entry in entries.values())
    assert copies <= 74  # 156 when every definition translated otherwise in its own port was copied; 51 since
    # a definition naming a copy is a copy too (FasterRCNN builds the AnchorGenerator keypoint_rcnn keeps a copy of);
    # 56 since swin_transformer.py's own port computes `attn @ v` as an einsum (its shift mask's `masked_fill`s keep
    # the mask's rank):
    # video/swin_transformer.py, whose calls hand `shifted_window_attention` a bias of unknown rank, keeps its own
    # translation of it and of the two classes calling it; 71 since an int64 cast marks an integer tensor (masked mean
    # pooling's `mask.long()` meeting float features): the detection models hand roi_heads.py's `paste_masks_in_image`
    # boxes cast `.to(dtype=torch.int64)`, meeting `torch.ones(1, dtype=torch.int64)` (of a dtype porter does not
    # record) in `_onnx_paste_mask_in_image`, which their ports promote and roi_heads.py's own (boxes of unknown
    # dtype) does not: those helpers and GeneralizedRCNNTransform, calling them, are kept as copies in 6 files; 74
    # since a head's per-level lists stay channels-last (RPNHead's `logits, bbox_reg`): the R-CNNs' ports run
    # rpn.py's `permute_and_flatten` on the levels as held, rpn.py's own port on torch's order (a copy in 3 files)
    for module, sibling, _ in imports:
        assert sibling in entries and sibling != module
    text = (out / "quantization/googlenet_keras.py").read_text()
    assert '= load_port_module(__file__, "../googlenet_keras.py")' in text and "class Inception(" not in text
    print(f"{len(imports)} definitions imported from siblings' ports, "
          f"{sum(len(entry['copied']) for entry in entries.values())} kept as copies")


def test_every_mirrored_module_imports(converted):
    _, _, out, manifest, _ = converted
    paths = [str(out / entry["module"]) for entry in manifest["sources"]]
    result = subprocess.run([sys.executable, "-c", PROBE, *paths], capture_output=True, text=True, cwd=out.parent,
                            check=False)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]


@pytest.mark.parametrize("stem", MATCHED)
def test_models_built_from_the_mirrored_modules_match_torchvision(stem, converted):
    import tensorflow as tf
    import torch

    from porter.verify.harness import import_path
    from tests.corpus.test_torchvision import CASES, perturbed

    _, _, out, _, _ = converted
    _, build_torch, build_keras, shape = CASES[stem]
    port = import_path(out / f"{stem}_keras.py")
    torch_model = perturbed(build_torch(torchvision))
    keras_model = build_keras(port)
    x = np.random.default_rng(0).standard_normal(shape).astype("float32")
    keras_model(x)
    port.load_state_dict(keras_model, {k: v.numpy() for k, v in torch_model.state_dict().items()})
    with torch.no_grad():
        expected = torch_model(torch.from_numpy(x)).numpy()
    got = np.asarray(keras_model(x, training=False))
    compiled = np.asarray(tf.function(lambda t: keras_model(t, training=False), jit_compile=True)(tf.constant(x)))
    scale = float(np.abs(expected).max())
    for result in (got, compiled):
        assert result.shape == expected.shape
        assert float(np.abs(result - expected).max()) <= 1e-4 * scale
