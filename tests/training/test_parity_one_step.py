"""One optimizer step through the generated train_tpu.py matches real torch, for every optimizer x loss.

From the same weights and batch with dropout off: the loss within 1e-4 relative, the change of the outputs on a
second batch within 1e-2 of its max, each parameter's update within 1e-3 of that tensor's max update (elements
whose torch gradient is below 1e-6 of the max are skipped).
"""

import pytest

from tests.training.helpers import compare_one_step

OPTIMIZERS = {
    "sgd": "torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-2, nesterov=True)",
    "adam": "torch.optim.Adam(model.parameters(), lr=1e-2, betas=(0.8, 0.99), eps=1e-6, weight_decay=1e-2)",
    "adamw": "torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1)",
    "adadelta": "torch.optim.Adadelta(model.parameters(), lr=1.0, rho=0.95, weight_decay=1e-3)",
    "adagrad": "torch.optim.Adagrad(model.parameters(), lr=0.05, lr_decay=0.01, weight_decay=1e-3)",
    "rmsprop": "torch.optim.RMSprop(model.parameters(), lr=1e-2, alpha=0.9, eps=1e-6, momentum=0.5, centered=True, "
               "weight_decay=1e-3)",
}
# name -> (model head, loss setup, loss expression)
WEIGHTS = "torch.tensor([1.0, 2.0, 0.5, 1.5])"
LOSSES = {
    "cross_entropy": ("logits", f"criterion = nn.CrossEntropyLoss(weight={WEIGHTS}, ignore_index=1, "
                                "label_smoothing=0.1)", "criterion(out, y)"),
    "f_cross_entropy": ("logits", "", "F.cross_entropy(out, y, label_smoothing=0.2)"),
    "nll_loss": ("log_softmax", f"criterion = nn.NLLLoss(weight={WEIGHTS}, ignore_index=1)", "criterion(out, y)"),
    "f_nll_loss": ("log_softmax", "", "F.nll_loss(out, y)"),
    "bce_with_logits": ("logits", "criterion = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([1.0, 2.0, 0.5, 3.0]))",
                        "criterion(out, y)"),
    "bce": ("sigmoid", "criterion = nn.BCELoss()", "criterion(out, y)"),
    "mse": ("logits", "criterion = nn.MSELoss()", "criterion(out, y)"),
    "l1": ("logits", "", "F.l1_loss(out, y)"),
    "smooth_l1": ("logits", "criterion = nn.SmoothL1Loss(beta=0.5)", "criterion(out, y)"),
    "huber": ("logits", "criterion = nn.HuberLoss(delta=0.7)", "criterion(out, y)"),
}


def check(errors):
    assert errors["loss"] <= 1e-4, errors
    assert errors["outputs"] <= 1e-2, errors
    assert errors["updates"] <= 1e-3, errors


@pytest.mark.parametrize("loss", sorted(LOSSES))
@pytest.mark.parametrize("optimizer", sorted(OPTIMIZERS))
def test_one_step_matches_torch(tiny_models, tmp_path, optimizer, loss):
    head, loss_setup, expression = LOSSES[loss]
    setup = f"optimizer = {OPTIMIZERS[optimizer]}\n{loss_setup}".strip()
    tiny = tiny_models[head]
    train, _ = tiny.training_script(tmp_path, setup, expression)
    check(compare_one_step(tiny, train, setup, expression))


CLIPS = {
    "norm": "torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.05)",
    "norm_inf": "torch.nn.utils.clip_grad_norm_(model.parameters(), 0.02, norm_type=float('inf'))",
    "value": "nn.utils.clip_grad_value_(model.parameters(), clip_value=0.01)",
}


@pytest.mark.parametrize("clip", sorted(CLIPS))
def test_gradient_clipping_matches_torch(tiny_models, tmp_path, clip):
    setup = f"optimizer = {OPTIMIZERS['sgd']}\ncriterion = nn.CrossEntropyLoss()"
    tiny = tiny_models["logits"]
    train, _ = tiny.training_script(tmp_path, setup, "criterion(out, y)", clip=CLIPS[clip])
    source = (tmp_path / "train_tpu.py").read_text()
    assert "support.clip_grad" in source
    check(compare_one_step(tiny, train, setup, "criterion(out, y)", clip=CLIPS[clip]))


GROUPS = {
    "loop": '''decay, no_decay = [], []
for name, param in model.named_parameters():
    if not param.requires_grad:
        continue
    if param.dim() < 2 or "norm" in name:
        no_decay.append(param)
    else:
        decay.append(param)
optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.5},
                               {"params": no_decay, "weight_decay": 0.0, "lr": 3e-3}], lr=1e-2)''',
    "comprehension": '''no_decay = ["bias", "norm.weight"]
groups = [
    {"params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)], "weight_decay": 0.1},
    {"params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)], "weight_decay": 0.0},
]
optimizer = torch.optim.SGD(groups, lr=0.1, momentum=0.9)''',
    "submodule": '''optimizer = torch.optim.Adam([{"params": model.fc2.parameters(), "lr": 1e-3, "betas": (0.5, 0.9)},
                              {"params": model.conv.parameters()},
                              {"params": model.fc1.parameters(), "eps": 1e-3},
                              {"params": model.norm.parameters(), "weight_decay": 0.1}], lr=1e-2)''',
}


@pytest.mark.parametrize("groups", sorted(GROUPS))
def test_parameter_groups_match_torch(tiny_models, tmp_path, groups):
    setup = GROUPS[groups] + "\ncriterion = nn.CrossEntropyLoss()"
    tiny = tiny_models["logits"]
    train, _ = tiny.training_script(tmp_path, setup, "criterion(out, y)")
    assert "group_of=parameter_group" in (tmp_path / "train_tpu.py").read_text()
    check(compare_one_step(tiny, train, setup, "criterion(out, y)"))
