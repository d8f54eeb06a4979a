"""Small models written in the styles of other authors (held out from the fixtures when the layout fixes were made),
each mixing constructs that cost Transposes or wrong results before: ShuffleNet v1 (staticmethods bound to an
attribute, a view/transpose/view channel shuffle, stages from `_make_stage`), an SE-ResNet whose stages are
`nn.ModuleDict` subclasses (`self[name](x)`, `x.mean((2, 3), keepdim=True)`, `layer_scale.view(1, -1, 1, 1)`), a
WaveNet (dilated Conv1d, `chunk(2, dim=1)` gate, `torch.stack` of the skips) and RepVGG (branches summed, an SE
block's `view(-1, C, 1, 1)`, blocks reached by `for stage in (self.stage1, ...)`), SegFormer (NVlabs' MiT:
tokens folded into images by a DWConv class and a spatial-reduction attention, `x.transpose(1, 2).view(B, C, H, W)`,
stages ending `reshape(B, H, W, -1).permute(0, 3, 1, 2)`, the all-MLP decoder's `permute(0, 2, 1).reshape(n, -1,
h, w)`: 10 Transposes before, 2 now), CvT (microsoft/CvT: convolutional q/k/v projections reached through a
method, `rearrange(x, 'b (h w) c -> b c h w')` in and an einops layer out, stages run through `getattr`: 9 before, 1
now), a YOLOv8 backbone and neck (ultralytics' C2f `y.extend(m(y[-1]) for m in self.m)`, SPPF, a Concat module
taking a list) and an mmcv-style net (ConvModule's `@property norm`, `order` loop, layers built from config dicts,
`getattr(self, layer_name)`). Each port matches torch eagerly and under XLA and traces only the boundary's
Transposes (one in, one per image out).
"""

from pathlib import Path

import numpy as np
import pytest

from porter.convert import ConvertOptions, convert
from porter.output import write_tree
from porter.verify.harness import PortedPair, count_transposes
from tests.rules.op_ports import assert_same_outputs

MODELS = Path(__file__).resolve().parent / "held_out_models"
CASES = {  # file stem: (main class, input shape without the batch)
    "shufflenet1": ("ShuffleNetV1", "3,32,32"),
    "se_resnet": ("SEResNetMini", "3,16,16"),
    "wavenet": ("WaveNetLite", "1,64"),
    "repvgg": ("RepVGGMini", "3,16,16"),
    "segformer": ("SegFormer", "3,32,32"),
    "cvt": ("ConvolutionalVisionTransformer", "3,32,32"),
    "yolo": ("YOLOv8Mini", "3,32,32"),
    "mmcv_convmodule": ("MMNet", "3,16,16"),
}


@pytest.mark.parametrize("stem", sorted(CASES))
def test_held_out_model_matches_torch_with_boundary_transposes_only(tmp_path, stem):
    class_name, shape = CASES[stem]
    conversion = convert(ConvertOptions(MODELS / f"{stem}.py", tmp_path / "out", class_name=class_name,
                                        input_specs=[shape]))
    assert conversion.exit_code == 0, conversion.manifest
    write_tree(tmp_path / "out", conversion.files)
    pair = PortedPair(tmp_path / "out", seed=5)
    inputs = pair.example_inputs(batch=2, seed=5)
    assert_same_outputs(pair, inputs, tolerance=1e-5)
    assert_same_outputs(pair, inputs, tolerance=1e-5, jit=True)
    images_out = sum(np.ndim(out) > 2 for out in pair.run_torch(inputs))  # (each converted back at the boundary)
    assert count_transposes(pair.keras_model, inputs) <= 1 + max(images_out, 1)
