"""porter/training/index.py: the index of a file's training code is built once per parsed source (the training
reader, the rendered script's helpers and the TPU lint each ask for it) and records what the readers query."""

from porter.frontend.source import parse_source
from porter.training.index import SourceIndex

SOURCE = '''
import torch
from torch import nn, optim


class Net(nn.Module):
    def forward(self, x):
        lr = 5.0  # inside a model class: not training code
        return x


def train(model, loader, epochs=3):
    lr = 0.1
    opt = optim.SGD(model.parameters(), lr=lr)
    for epoch in range(epochs):
        for x, y in loader:
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()


if __name__ == "__main__":
    batch_size, width = 32, 8
    train(Net(), [])
'''


def test_the_index_is_built_once_per_source(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(SOURCE)
    source = parse_source(path)
    index = SourceIndex.build(source)
    assert SourceIndex.build(source) is index
    assert SourceIndex.build(parse_source(path)) is not index  # another parse: its own index


def test_the_index_records_training_code_and_leaves_model_classes_out(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(SOURCE)
    index = SourceIndex.build(parse_source(path))
    train = index.functions["train"]
    assert [a.target for a in index.assignments_of("lr", train)] == ["lr"]
    assert index.assignments_of("lr", None) == []  # the model class's `lr` is not training code
    assert [a.target for a in index.assignments if a.function is None] == ["batch_size", "width"]
    step = index.method_calls("step")
    assert [(receiver, call.function is train) for receiver, call in step] == [("opt", True)]
    (sgd,) = index.calls_to("optim.SGD")
    assert index.function_of(sgd.node) is train
    (backward,) = [call for _, call in index.method_calls("backward")]
    assert len(index.loops_around(backward.node)) == 2
    assert index.line(sgd.node) == 14
    assert [name for name, _, _ in index.for_targets] == ["epoch"]
