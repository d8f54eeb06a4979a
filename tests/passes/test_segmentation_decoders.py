"""Constructs of segmentation_models_pytorch's decoders (and timm's Res2Net-style DLA blocks), written small: each
port matches torch eagerly and under XLA with BatchNorm statistics moved off their defaults, and keeps its images
channels-last (Transposes bounded).

- a list comprehension zipping a ModuleList with a list of images (`[seg(p) for seg, p in zip(self.seg_blocks,
  [p5, p4])]`) and `sum(x)` / `torch.cat(x, 1)` of the list (FPN's MergeBlock); on main each image went back to
  torch's layout and FPNDecoder said it returned channels-last while it returned torch's order (wrong values);
- `enumerate(zip(self.convs, self.bns))` unpacked by `for i, (conv, bn) in` (DLA's DlaBottle2neck); on main `conv` was
  a plain value called on torch's layout (InvalidArgumentError);
- an nn.Sequential subclass whose forward takes `*features` and calls `super().forward(features[-1])`
  (DeepLabV3Decoder), and a loop over a ModuleList of unlike modules, one of them a Sequential subclass with a
  forward of its own that iterates `for mod in self` (ASPP and ASPPPooling); on main `super().forward` was left as
  it is (AttributeError) and the loop took every module for the first one (a concat of mixed layouts);
- a decoder taking the encoder's feature list unpacked (`self.decoder(*features)`), skipping with `skips[i] if i <
  len(skips) else None` (UnetDecoder); on main `len(skips)` turned every image back to torch's layout (8
  Transposes)."""

import pytest

from porter.verify.harness import count_transposes
from tests.rules.op_ports import assert_same_outputs, port, random_input

FPN = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class SegmentationBlock(nn.Module):
    def __init__(self, channels, upsamples):
        super().__init__()
        self.block = nn.Sequential(nn.Conv2d(channels, channels, 3, padding=1, bias=False),
                                   nn.BatchNorm2d(channels), nn.ReLU())
        self.upsamples = upsamples

    def forward(self, x):
        x = self.block(x)
        if self.upsamples:
            x = F.interpolate(x, scale_factor=2 ** self.upsamples, mode="nearest")
        return x


class MergeBlock(nn.Module):
    def __init__(self, policy):
        super().__init__()
        self.policy = policy

    def forward(self, x):
        if self.policy == "add":
            return sum(x)
        return torch.cat(x, dim=1)


class Net(nn.Module):
    def __init__(self, channels=8, policy="add"):
        super().__init__()
        self.p4 = nn.Conv2d(3, channels, 1, stride=4)
        self.p3 = nn.Conv2d(3, channels, 1, stride=2)
        self.p2 = nn.Conv2d(3, channels, 1)
        self.seg_blocks = nn.ModuleList([SegmentationBlock(channels, n) for n in (2, 1, 0)])
        self.merge = MergeBlock(policy)

    def forward(self, x):
        p4, p3, p2 = self.p4(x), self.p3(x), self.p2(x)
        pyramid = [seg_block(p) for seg_block, p in zip(self.seg_blocks, [p4, p3, p2])]
        return self.merge(pyramid)
'''

RES2NET = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, width=4, scale=3):
        super().__init__()
        self.width = width
        self.conv1 = nn.Conv2d(3, width * scale, 1, bias=False)
        self.convs = nn.ModuleList([nn.Conv2d(width, width, 3, padding=1, bias=False) for _ in range(scale - 1)])
        self.bns = nn.ModuleList([nn.BatchNorm2d(width) for _ in range(scale - 1)])
        self.relu = nn.ReLU()

    def forward(self, x):
        out = self.conv1(x)
        spx = torch.split(out, self.width, 1)
        spo = []
        sp = spx[0]
        for i, (conv, bn) in enumerate(zip(self.convs, self.bns)):
            sp = spx[i] if i == 0 else sp + spx[i]
            sp = self.relu(bn(conv(sp)))
            spo.append(sp)
        spo.append(spx[-1])
        return torch.cat(spo, 1)
'''

DEEPLAB = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class ASPPConv(nn.Sequential):
    def __init__(self, cin, cout, dilation):
        super().__init__(nn.Conv2d(cin, cout, 3, padding=dilation, dilation=dilation, bias=False),
                         nn.BatchNorm2d(cout), nn.ReLU())


class ASPPPooling(nn.Sequential):
    def __init__(self, cin, cout):
        super().__init__(nn.AdaptiveAvgPool2d(1), nn.Conv2d(cin, cout, 1, bias=False), nn.BatchNorm2d(cout),
                         nn.ReLU())

    def forward(self, x):
        size = x.shape[-2:]
        for mod in self:
            x = mod(x)
        return F.interpolate(x, size=size, mode="bilinear", align_corners=False)


class ASPP(nn.Module):
    def __init__(self, cin, cout, rates=(1, 2)):
        super().__init__()
        modules = [nn.Sequential(nn.Conv2d(cin, cout, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())]
        for rate in rates:
            modules.append(ASPPConv(cin, cout, rate))
        modules.append(ASPPPooling(cin, cout))
        self.convs = nn.ModuleList(modules)
        self.project = nn.Sequential(nn.Conv2d(cout * (len(rates) + 2), cout, 1, bias=False), nn.BatchNorm2d(cout),
                                     nn.ReLU())

    def forward(self, x):
        res = []
        for conv in self.convs:
            res.append(conv(x))
        return self.project(torch.cat(res, dim=1))


class Decoder(nn.Sequential):
    def __init__(self, cin, cout=8):
        super().__init__(ASPP(cin, cout), nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout),
                         nn.ReLU())
        self.out_channels = cout

    def forward(self, *features):
        return super().forward(features[-1])


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stage1 = nn.Conv2d(3, 4, 3, stride=2, padding=1)
        self.stage2 = nn.Conv2d(4, 6, 3, stride=2, padding=1)
        self.decoder = Decoder(6)

    def forward(self, x):
        f1 = self.stage1(x)
        f2 = self.stage2(f1)
        return self.decoder(x, f1, f2)
'''

UNET = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class Encoder(nn.Module):
    def __init__(self, widths=(4, 8, 8)):
        super().__init__()
        self.stages = nn.ModuleList()
        cin = 3
        for w in widths:
            self.stages.append(nn.Sequential(nn.Conv2d(cin, w, 3, stride=2, padding=1), nn.BatchNorm2d(w), nn.ReLU()))
            cin = w

    def forward(self, x):
        features = [x]
        for stage in self.stages:
            x = stage(x)
            features.append(x)
        return features


class DecoderBlock(nn.Module):
    def __init__(self, cin, skip, cout):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(cin + skip, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout),
                                  nn.ReLU())

    def forward(self, x, skip=None):
        x = F.interpolate(x, scale_factor=2, mode="nearest")
        if skip is not None:
            x = torch.cat([x, skip], dim=1)
        return self.conv(x)


class UnetDecoder(nn.Module):
    def __init__(self, encoder_channels=(3, 4, 8, 8), decoder_channels=(8, 4, 4)):
        super().__init__()
        encoder_channels = encoder_channels[1:][::-1]
        in_channels = [encoder_channels[0]] + list(decoder_channels[:-1])
        skip_channels = list(encoder_channels[1:]) + [0]
        self.blocks = nn.ModuleList([DecoderBlock(i, s, o)
                                     for i, s, o in zip(in_channels, skip_channels, decoder_channels)])

    def forward(self, *features):
        features = features[1:]
        features = features[::-1]
        x = features[0]
        skips = features[1:]
        for i, decoder_block in enumerate(self.blocks):
            skip = skips[i] if i < len(skips) else None
            x = decoder_block(x, skip)
        return x


class Net(nn.Module):
    def __init__(self, classes=2):
        super().__init__()
        self.encoder = Encoder()
        self.decoder = UnetDecoder()
        self.head = nn.Conv2d(4, classes, 3, padding=1)

    def forward(self, x):
        features = self.encoder(x)
        return self.head(self.decoder(*features))
'''

CASES = {"fpn": (FPN, None), "fpn_cat": (FPN, {"policy": "cat"}), "res2net": (RES2NET, None),
         "deeplab": (DEEPLAB, None), "unet": (UNET, None)}


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    cache = {}

    def get(name):
        if name not in cache:
            source, init_args = CASES[name]
            cache[name] = port(tmp_path_factory.mktemp(name), source, ("3,16,16",), init_args=init_args)
        return cache[name]

    return get


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("seed", [0, 1])
def test_segmentation_decoder_constructs_match_torch(ported, name, seed):
    pair = ported(name)
    x = random_input(seed, (2, 3, 16, 16))
    assert_same_outputs(pair, [x], tolerance=1e-4)
    assert_same_outputs(pair, [x], tolerance=1e-4, jit=True)


@pytest.mark.parametrize("name", sorted(CASES))
def test_segmentation_decoder_constructs_keep_images_channels_last(ported, name):
    pair = ported(name)
    x = random_input(0, (2, 3, 16, 16))
    assert count_transposes(pair.keras_model, [x]) <= 2  # the boundary pair (main: FPN 10, Unet 8)
