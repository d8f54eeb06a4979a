"""Shared pieces of the training tests: tiny torch sources, porter conversions of them, and torch-vs-Keras steps.

A tiny model is written as torch source, converted by porter (`porter convert`), and trained one step in real torch
and through the generated train_tpu.py from the same weights and batch. The training snippet (optimizer, loss,
clipping) is one text: porter reads it statically, and the torch reference executes it.
"""

import importlib.util
import json
import math
import shutil
import sys
import zlib
from pathlib import Path

import numpy as np

from porter.verify.compare import relative_error

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures"

MODEL_SOURCE = '''"""A tiny model for porter's training tests."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Tiny(nn.Module):
    def __init__(self, classes=4):
        super().__init__()
        self.conv = nn.Conv2d(2, 3, 3, padding=1)
        self.fc1 = nn.Linear(3 * 4 * 4, 12)
        self.norm = nn.LayerNorm(12)
        self.fc2 = nn.Linear(12, classes)

    def forward(self, x):
        x = F.relu(self.conv(x))
        x = torch.flatten(x, 1)
        x = torch.tanh(self.norm(self.fc1(x)))
        return {head}
'''
HEADS = {"logits": "self.fc2(x)", "log_softmax": "F.log_softmax(self.fc2(x), dim=1)",
         "sigmoid": "torch.sigmoid(self.fc2(x))"}

TRAIN_SOURCE = '''"""Training code for the tiny model."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from {module} import Tiny


def main():
    torch.manual_seed(0)
    model = Tiny()
    x = torch.randn(8, 2, 4, 4)
    y = torch.randint(0, 4, (8,))
{setup}
    for step in range(5):
        optimizer.zero_grad()
        out = model(x)
        loss = {loss}
        loss.backward()
{clip}
        optimizer.step()
{schedule_step}


if __name__ == "__main__":
    main()
'''


def indent(text, prefix="    "):
    return "\n".join(prefix + line if line.strip() else line for line in text.splitlines())


def load_module(path, name=None):
    path = Path(path)
    name = name or f"{path.stem}_{zlib.crc32(str(path).encode()):08x}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def convert_source(source, out, *extra):
    """`porter convert SOURCE -o OUT` through the CLI's main (in process); returns the manifest."""
    from porter.cli import main

    code = main(["convert", str(source), "-o", str(out), *extra])
    assert code in (0, 1), f"porter convert exited {code}"
    return json.loads((Path(out) / "porter-manifest.json").read_text())


class TinyModel:
    """A converted tiny model with a given head: the source file, the output directory, the torch module."""

    def __init__(self, root, head):
        self.root = Path(root)
        self.head = head
        self.module_name = f"tiny_{head}"
        self.source = self.root / f"{self.module_name}.py"
        self.source.write_text(MODEL_SOURCE.format(head=HEADS[head]))
        self.out = self.root / f"{self.module_name}_out"
        self.manifest = convert_source(self.source, self.out, "--input-shape", "2,4,4")
        self.torch_module = load_module(self.source)

    def training_script(self, directory, setup, loss, clip="", schedule_step=""):
        """Write the training snippet, produce train_tpu.py for it (as `porter convert --train-script` does),
        and return (train_tpu module, train snippet path)."""
        from porter.frontend.source import parse_source
        from porter.outputs.training import produce

        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        train = directory / "train.py"
        train.write_text(TRAIN_SOURCE.format(module=self.module_name, setup=indent(setup), loss=loss,
                                             clip=indent(clip, "        "), schedule_step=indent(schedule_step,
                                                                                                 "        ")))
        options = type("Options", (), {"train_script": train})()
        files = produce(parse_source(self.source), None, self.manifest, options)
        for name, text in files.items():
            (directory / name).write_text(text)
        module_file = self.manifest["sources"][0]["module"]
        for name in (module_file, module_file.removesuffix(".py") + "_runtime.py"):  # the model and its runtime
            shutil.copy(self.out / name, directory / name)
        return load_module(directory / "train_tpu.py"), train


def torch_namespace(model):
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    return {"torch": torch, "nn": nn, "F": F, "math": math, "model": model}


def state_entries(train, kmodel):
    """torch name -> (Keras variable, torch->Keras array transform)."""
    return {e.key: (e.variable, e.to_keras or (lambda a: a)) for e in train.model_lib.collect_state(kmodel)}


def keras_from_torch(train, tmodel):
    """The generated model with the torch model's weights."""
    import tensorflow as tf

    kmodel = train.build_model()
    spec = train.EXAMPLE_INPUTS[0]
    kmodel(tf.zeros((1, *spec["shape"]), spec["dtype"]), training=False)
    state = {k: v.detach().numpy() for k, v in tmodel.state_dict().items()}
    train.model_lib.load_state_dict(kmodel, state)
    return kmodel


def change_error(tmodel, start, entries):
    """Worst relative error of the Keras parameters' change since `start` (torch names -> arrays) against the torch
    model's; inf, never NaN, where the NaN/Inf patterns differ."""
    errors = [0.0]
    for name, param in tmodel.named_parameters():
        variable, to_keras = entries[name]
        change = to_keras(param.detach().numpy() - start[name])
        keras_change = variable.numpy() - to_keras(start[name])
        errors.append(relative_error(change, keras_change, floor=1e-12))
    return max(errors)


def targets_for(kind, rng, classes=4, n=8):
    if kind == "class":
        y = rng.integers(0, classes, size=(n,)).astype(np.int64)
        y[:2] = [1, 1]  # always exercise ignore_index=1 where it is set
        return y
    if kind in ("binary_logits", "binary_probs"):
        return (rng.random((n, classes)) > 0.5).astype(np.float32)
    return rng.standard_normal((n, classes)).astype(np.float32)


def compare_one_step(tiny, train, setup, loss, clip="", seed=0):
    """One optimizer step in torch (executing the snippet) and through train_tpu.train_step; returns the errors."""
    import tensorflow as tf
    import torch

    torch.manual_seed(seed)
    tmodel = tiny.torch_module.Tiny()
    with torch.no_grad():  # move LayerNorm's affine parameters off their defaults
        tmodel.norm.weight.uniform_(0.5, 1.5)
        tmodel.norm.bias.uniform_(-0.5, 0.5)
    tmodel.eval()  # dropout off (training=False on the Keras side)
    kmodel = keras_from_torch(train, tmodel)
    namespace = torch_namespace(tmodel)
    exec(setup, namespace)
    torch_optimizer = namespace["optimizer"]
    torch_loss = eval("lambda out, y: " + loss, namespace)

    rng = np.random.default_rng(seed)
    x = rng.standard_normal((8, 2, 4, 4)).astype(np.float32)
    x2 = rng.standard_normal((8, 2, 4, 4)).astype(np.float32)
    y = targets_for(train.TARGET_KIND, rng)

    before = {n: p.detach().numpy().copy() for n, p in tmodel.named_parameters()}
    with torch.no_grad():
        out2_before = tmodel(torch.from_numpy(x2)).numpy()
    torch_optimizer.zero_grad()
    torch_value = torch_loss(tmodel(torch.from_numpy(x)), torch.from_numpy(y))
    torch_value.backward()
    if clip:
        exec(clip, namespace)
    grads = {n: p.grad.detach().numpy().copy() for n, p in tmodel.named_parameters()}
    torch_optimizer.step()
    with torch.no_grad():
        out2_after = tmodel(torch.from_numpy(x2)).numpy()

    optimizer = train.build_optimizer(kmodel)
    optimizer.build(kmodel.trainable_variables)
    loss_fn = train.build_loss()
    entries = state_entries(train, kmodel)
    keras_before = {n: np.array(v.numpy()) for n, (v, _) in entries.items()}
    k_out2_before = kmodel(tf.constant(x2), training=False).numpy()
    keras_value = float(train.train_step(kmodel, optimizer, loss_fn, tf.constant(x), tf.constant(y), training=False))
    k_out2_after = kmodel(tf.constant(x2), training=False).numpy()

    torch_value = float(torch_value.detach())
    errors = {"loss": relative_error(torch_value, keras_value, floor=1e-12),
              "outputs": relative_error(out2_after - out2_before, k_out2_after - k_out2_before, floor=1e-12)}
    updates = []
    for name, value in before.items():
        variable, to_keras = entries[name]
        torch_update = to_keras(tmodel.state_dict()[name].detach().numpy() - value)
        keras_update = variable.numpy() - keras_before[name]
        grad = np.abs(to_keras(grads[name]))
        if np.any(torch_update):  # judged where the gradient is not negligible, against the whole update's scale
            mask = grad >= 1e-6 * max(grad.max(), 1e-30)
            updates.append(relative_error(torch_update, keras_update, floor=0.0, where=mask))
        else:  # torch left it in place: Keras may move it by round-off only
            updates.append(relative_error(torch_update, keras_update, floor=1e-6))
    errors["updates"] = max(updates, default=0.0)  # relative_error is inf, never NaN, where NaN/Inf differ
    return errors
