"""Static reading of training code (porter.training): what is read, what becomes a default with a note."""

import textwrap

import pytest

from porter.frontend.source import parse_source
from porter.training.reader import read_training
from tests.training.helpers import FIXTURES, convert_source


def plan_of(tmp_path, text, main="Net"):
    path = tmp_path / "model.py"
    path.write_text(textwrap.dedent(text))
    return read_training(parse_source(path), main)


HEADER = '''
import argparse
import math
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc(x)
'''


def settings(construct):
    return {s.name: s.value.code for s in construct.settings}


def test_mnist_fixture():
    source = parse_source(FIXTURES / "train_mnist.py")
    plan = read_training(source, "Net")
    assert plan.optimizer.cls == "Adadelta" and plan.optimizer.lr.code == "lr" and plan.optimizer.lr.value == 1.0
    assert plan.schedule.cls == "StepLR" and plan.schedule.per_epoch
    assert settings(plan.schedule) == {"step_size": "1", "gamma": "gamma"}
    assert plan.loss.cls == "NLLLoss" and plan.loss.class_axis == 1
    assert (plan.epochs.value, plan.batch_size.value, plan.seed.value, plan.log_interval.value) == (3, 64, 1, 10)
    assert plan.source_examples.value == 1024
    assert {"lr", "gamma", "test_batch_size", "dry_run", "save_model"} <= set(plan.flags)


def test_lm_fixture():
    source = parse_source(FIXTURES / "train_lm.py")
    plan = read_training(source, "TransformerLM")
    optimizer = plan.optimizer
    assert optimizer.cls == "AdamW" and optimizer.lr.code == "LR"
    assert settings(optimizer)["beta_1"] == "BETAS[0]" and settings(optimizer)["epsilon"] == "1e-8"
    assert [{k: v.code for k, v in g.items()} for g in optimizer.groups] == [{"weight_decay": "WEIGHT_DECAY"},
                                                                              {"weight_decay": "0.0"}]
    namespace = {}
    exec(optimizer.group_function, namespace)
    group = namespace["parameter_group"]
    assert group("layers.0.linear1.weight", (256, 64)) == 0
    assert group("layers.0.linear1.bias", (256,)) == 1
    assert group("token_emb.weight", (256, 64)) == 1 and group("norm.weight", (64,)) == 1
    assert plan.schedule.cls == "CosineAnnealingLR" and not plan.schedule.per_epoch
    assert settings(plan.schedule) == {"T_max": "epochs * steps_per_epoch", "eta_min": "LR * 0.1"}
    assert plan.loss.cls == "CrossEntropyLoss" and plan.loss.class_axis == -1
    assert settings(plan.loss) == {"label_smoothing": "LABEL_SMOOTHING"}
    assert plan.clip.cls == "clip_grad_norm" and settings(plan.clip) == {"max_norm": "GRAD_CLIP"}
    assert (plan.epochs.value, plan.batch_size.value, plan.log_interval.value) == (2, 16, 8)


def test_fixed_batch_loop_counts_steps(tmp_path):
    plan = plan_of(tmp_path, HEADER + '''
if __name__ == "__main__":
    model = Net()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.1)
    x = torch.randn(16, 8)
    y = torch.randint(0, 3, (16,))
    for epoch in range(7):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        scheduler.step()
''')
    assert plan.steps.value == 7 and plan.batch_size.value == 16 and plan.epochs is None
    assert not plan.schedule.per_epoch  # one optimizer step per loop iteration


def test_step_function_and_argparse_epochs(tmp_path):
    plan = plan_of(tmp_path, HEADER + '''
def train_step(model, batch, optimizer, scheduler):
    x, y = batch
    optimizer.zero_grad()
    loss = nn.MSELoss()(model(x), y)
    loss.backward()
    nn.utils.clip_grad_value_(model.parameters(), args.clip)
    optimizer.step()
    scheduler.step()


def main(args):
    model = Net()
    loader = DataLoader(TensorDataset(torch.randn(64, 8), torch.randn(64, 3)), batch_size=16, drop_last=True)
    optimizer = torch.optim.RMSprop(model.parameters(), lr=args.lr, alpha=0.95, centered=True)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=args.lr * 10, epochs=args.num_epochs,
                                                    steps_per_epoch=len(loader))
    for epoch in range(args.num_epochs):
        for batch in loader:
            train_step(model, batch, optimizer, scheduler)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--num-epochs", type=int, default=4)
    parser.add_argument("--clip", type=float, default=0.5)
    main(parser.parse_args())
''')
    assert plan.optimizer.cls == "RMSprop" and plan.optimizer.lr.code == "lr"
    assert plan.schedule.cls == "OneCycleLR" and not plan.schedule.per_epoch
    assert settings(plan.schedule)["total_steps"] == "epochs * steps_per_epoch"
    assert settings(plan.schedule)["max_lr"] == "lr * 10"
    assert plan.flag_symbols == {"num_epochs": "epochs"} and plan.epochs.value == 4
    assert plan.loss.cls == "MSELoss" and plan.loss.target == "regression"
    assert plan.clip.cls == "clip_grad_value"
    assert plan.batch_size.value == 16 and plan.source_examples.value == 64


def test_unsupported_constructs_become_notes(tmp_path):
    plan = plan_of(tmp_path, HEADER + '''
def warmup(step):
    for boundary in (10, 20):
        if step < boundary:
            return step / boundary
    return 1.0


if __name__ == "__main__":
    model = Net()
    optimizer = torch.optim.LBFGS(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, warmup)
    other = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer)
    x, y = torch.randn(4, 8), torch.randn(4, 3)
    for i in range(3):
        loss = my_loss(model(x), y) + 0.1 * F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        scheduler.step()
''')
    notes = " | ".join(text for _, text in plan.notes)
    assert "torch.optim.LBFGS has no torch-rule counterpart" in notes and plan.optimizer.cls == "Adam"
    assert "LambdaLR" in notes and plan.schedule.cls == "LambdaLR" and plan.schedule.lambda_value is None
    assert "my_loss" in notes


def test_warmup_cosine_function_translated_to_tensorflow(tmp_path):
    plan = plan_of(tmp_path, HEADER + '''
WARMUP = 10
if __name__ == "__main__":
    model = Net()
    loader = DataLoader(TensorDataset(torch.randn(64, 8), torch.randint(0, 3, (64,))), batch_size=8)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    total = 3 * len(loader)

    def lr_lambda(step):
        """Linear warm-up, then cosine decay."""
        if step < WARMUP:
            return float(step) / float(max(1, WARMUP))
        progress = float(step - WARMUP) / float(max(1, total - WARMUP))
        return max(0.0, 0.5 * (1.0 + math.cos(math.pi * progress)))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda)
    for epoch in range(3):
        for x, y in loader:
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            scheduler.step()
''')
    value = plan.schedule.lambda_value
    assert value is not None and not plan.schedule.per_epoch, plan.notes
    assert value.code.startswith("tf.where((t < WARMUP)") and "tf.cos" in value.code and "tf.maximum(0.0" in value.code
    assert "(3 * steps_per_epoch) - WARMUP" in value.code and value.refs == {"steps_per_epoch"}


def test_lambda_schedule_translated_to_tensorflow(tmp_path):
    plan = plan_of(tmp_path, HEADER + '''
WARMUP = 10
if __name__ == "__main__":
    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min(1.0, (step + 1) / WARMUP) * 0.5 * (1 + math.cos(math.pi * step / 100)))
    x, y = torch.randn(4, 8), torch.randint(0, 3, (4,))
    for i in range(3):
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        scheduler.step()
''')
    code = plan.schedule.lambda_value.code
    assert "tf.minimum" in code and "tf.cos" in code and "WARMUP" in code


def test_no_training_code_uses_defaults_from_the_output(tmp_path):
    plan = plan_of(tmp_path, HEADER.replace("return self.fc(x)", "return F.log_softmax(self.fc(x), dim=1)"))
    assert not plan.has_training_code and plan.loss.cls == "NLLLoss" and plan.optimizer.cls == "Adam"
    assert any("no training code" in text for _, text in plan.notes)
    plan = plan_of(tmp_path, HEADER)
    assert plan.loss.cls == "CrossEntropyLoss"


def test_train_script_option(tmp_path):
    model = tmp_path / "model.py"
    model.write_text(HEADER)
    train = tmp_path / "train.py"
    train.write_text(textwrap.dedent('''
        import torch
        from model import Net

        model = Net()
        optimizer = torch.optim.Adagrad(model.parameters(), lr=0.05, initial_accumulator_value=0.1)
        criterion = torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor([1.0, 2.0, 3.0]))
        x, y = torch.randn(32, 8), torch.rand(32, 3).round()
        for step in range(10):
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
    '''))
    out = tmp_path / "out"
    convert_source(model, out, "--train-script", str(train), "--input-shape", "8")
    text = (out / "train_tpu.py").read_text()
    assert "support.Adagrad(learning_rate=0.05, initial_accumulator_value=0.1)" in text
    assert "support.BCEWithLogitsLoss(pos_weight=[1.0, 2.0, 3.0])" in text
    assert "DEFAULT_BATCH_SIZE = 32" in text and "DEFAULT_STEPS = 10" in text


@pytest.mark.parametrize("fixture", sorted(p.stem for p in FIXTURES.glob("*.py")))
def test_every_fixture_gets_a_valid_script(tmp_path, fixture):
    out = tmp_path / "out"
    convert_source(FIXTURES / f"{fixture}.py", out)
    for name in ("train_tpu.py", "train_support.py"):
        compile((out / name).read_text(), name, "exec")
    assert "def build_optimizer(" in (out / "train_tpu.py").read_text()


def test_strided_batch_loop_gives_epochs_batch_size_and_examples(tmp_path):
    """`for i in range(0, 512, 32)` slices batches from 512 examples: 5 epochs of 16 steps, not the defaults."""
    source = tmp_path / "speech.py"
    source.write_text(HEADER + textwrap.dedent('''
        def train():
            model = Net()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
            data = torch.randn(512, 8)
            labels = torch.randint(0, 3, (512,))
            for epoch in range(5):
                for i in range(0, 512, 32):
                    loss = F.cross_entropy(model(data[i:i + 32]), labels[i:i + 32])
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
        '''))
    plan = read_training(parse_source(source), "Net")
    assert (plan.epochs.value, plan.batch_size.value, plan.source_examples.value) == (5, 32, 512)
    assert {"epochs 5", "batch size 32", "training examples 512"} <= set(plan.summary)
    assert not any("not read from the source" in text for _, text in plan.notes)
    out = tmp_path / "out"
    convert_source(source, out)
    text = (out / "train_tpu.py").read_text()
    assert "DEFAULT_EPOCHS = 5\n" in text and "DEFAULT_BATCH_SIZE = 32\n" in text
    assert "SOURCE_EXAMPLES = 512 " in text


UNREADABLE_LOOP = HEADER + '''
CONFIG = {"epochs": 3}


def batches():
    while True:
        yield torch.randn(16, 8), torch.randint(0, 3, (16,))


def train(model, stream):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(CONFIG["epochs"]):
        x, y = next(stream)
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


train(Net(), batches())
'''


def test_settings_porter_cannot_read_are_listed(tmp_path, capsys):
    """Defaults that replace the source's loop settings are said in train_tpu.py, PORTING.md and on stderr."""
    plan = plan_of(tmp_path, UNREADABLE_LOOP)
    listed = "epochs (1), batch size (32), steps per epoch"
    assert any(f"train_tpu.py uses its defaults: {listed}" in text for _, text in plan.notes), plan.notes
    source = tmp_path / "model.py"
    out = tmp_path / "out"
    convert_source(source, out, "--input-shape", "8")
    assert listed in (out / "train_tpu.py").read_text().split('"""')[1]
    warnings = (out / "PORTING.md").read_text().split("## Warnings", 1)[1].split("\n## ", 1)[0]
    assert f"train_tpu.py's defaults: {listed}" in warnings
    assert "porter: warning: model.py: training settings porter could not read" in capsys.readouterr().err


def test_no_list_of_defaults_without_training_code(tmp_path):
    assert not any("not read from the source" in text for _, text in plan_of(tmp_path, HEADER).notes)


def test_example_inputs_from_a_function_that_builds_a_batch(tmp_path):
    source = tmp_path / "model.py"
    source.write_text(HEADER.replace("nn.Linear(8, 3)", "nn.Conv1d(40, 3, 3)") + textwrap.dedent('''
        def example_batch():
            return torch.randn(8, 40, 101)


        def run(model, batch):
            return model(batch)


        run(Net(), example_batch())
        '''))
    manifest = convert_source(source, tmp_path / "out")
    entry = next(c for c in manifest["sources"][0]["classes"] if c["name"] == "Net")
    assert entry["example_inputs"] == [{"shape": [40, 101], "dtype": "float32", "low": None, "high": None,
                                        "channels_last_io": True}]


def test_example_inputs_of_a_first_embedding_are_token_ids(tmp_path, capsys):
    source = tmp_path / "model.py"
    source.write_text(textwrap.dedent('''
        import torch.nn as nn


        class TextNet(nn.Module):
            def __init__(self, vocab=1000, dim=32):
                super().__init__()
                self.embed = nn.Embedding(vocab, dim)
                self.fc = nn.Linear(dim, 2)

            def forward(self, tokens):
                return self.fc(self.embed(tokens).mean(1))
        '''))
    manifest = convert_source(source, tmp_path / "out", "--init-args", '{"vocab": 700}')
    entry = manifest["sources"][0]["classes"][0]
    assert entry["example_inputs"] == [{"shape": [16], "dtype": "int64", "low": 0, "high": 700}]
    assert "taken from its first layer Embedding(700, ...): --input-shape 16:int64:0:700" in capsys.readouterr().err
