"""Every file of the installed torchvision/models (classification, detection, segmentation, video, optical flow,
quantization), converted as it is by `porter convert FILE`: a port reported as written (exit 0/1) must import;
anything else is one line on stderr, never a traceback. A file of its own: `--dist loadfile` (.ci/run) deals these
sixty conversions to a worker apart from test_torchvision.py's built models.

A file that derives its model from a sibling's converts that sibling too (`porter convert FILE` brings in the files
it imports from): three files whose conversion repeats the same siblings through an import style another default
file already uses are variants, run with PORTER_FULL_CORPUS=1 (tests/full_corpus.py); all three still convert and
import by default in tests/corpus/test_torchvision_folder.py's one conversion of the folder."""

import pytest

from tests.corpus.test_torchvision import import_by_path
from tests.corpus.torchvision_support import import_torchvision, model_file
from tests.full_corpus import full_corpus_only

torchvision = import_torchvision()
pytestmark = pytest.mark.skipif(torchvision is None, reason="torchvision 0.28.0 is not installed (scripts/setup.sh "
                                                            "installs it with --no-deps)")

MODELS = model_file(torchvision, "resnet").parent if torchvision is not None else None
# file -> the default file that converts the same siblings the same way (seconds: 2 busy cores)
VARIANTS = {
    # FasterRCNN subclassed from faster_rcnn.py (which converts roi_heads, rpn, transform ... again): mask_rcnn.py
    # does the same and imports more of faster_rcnn.py's names (23 s)
    "detection/keypoint_rcnn.py": "detection/mask_rcnn.py",
    # a float model's classes imported by an absolute from-import: quantization/resnet.py (7 s)
    "quantization/mobilenetv2.py": "quantization/resnet.py",
    # by a relative from-import: quantization/mobilenetv3.py and quantization/shufflenetv2.py (2.5 s)
    "quantization/googlenet.py": "quantization/mobilenetv3.py",
}


def model_files():
    if MODELS is None:
        return []
    return [pytest.param(path, marks=full_corpus_only(VARIANTS[path])) if path in VARIANTS else path
            for path in sorted(p.relative_to(MODELS).as_posix() for p in MODELS.rglob("*.py"))]


@pytest.mark.parametrize("path", model_files())
def test_every_model_file_is_reported_honestly(path, tmp_path, capfd):
    """Whatever porter makes of a torchvision model file (classification, detection, segmentation, video, optical
    flow, quantization): exit 0/1 means the port imports; anything else is one line, never a traceback."""
    from porter.cli import main

    out = tmp_path / "out"
    # `porter convert` through the CLI's main, in this process (stderr read at the file descriptor, the forked
    # checks' included): a Python per file spent about 1.2 s of CPU importing porter's dependencies, 60 times;
    # tests/test_cli.py runs the command as a program
    code = main(["convert", str(MODELS / path), "-o", str(out)])
    stderr = capfd.readouterr().err
    assert "Traceback" not in stderr
    if code not in (0, 1):
        assert len(stderr.strip().splitlines()) == 1, stderr
        return
    module = out / f"{path.rsplit('/', 1)[-1][:-3]}_keras.py"
    # imported here, not in a fresh interpreter: a second Python importing TensorFlow costs seconds per file
    import_by_path(module, "torchvision_honest_" + path[:-3].replace("/", "_"))
