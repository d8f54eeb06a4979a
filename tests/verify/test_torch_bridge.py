"""Tests of porter/verify/torch_bridge.py's perturbation: what a comparison runs on must not hide a wrong port."""

import torch

from porter.verify.torch_bridge import perturb_torch_module


def test_constant_matrices_are_moved_off_their_constant():
    """torchvision's ViT starts its head at zeros and many models start position embeddings or class tokens at
    zeros: left so, everything the head multiplies goes unchecked (a comparison reads the bias alone)."""
    model = torch.nn.Sequential(torch.nn.Linear(8, 3), torch.nn.Linear(3, 2))
    with torch.no_grad():
        model[0].weight.zero_()
        model[1].weight.fill_(0.5)
    untouched = model[0].bias.clone()
    perturb_torch_module(model, seed=3)
    for layer in model:
        assert layer.weight.unique().numel() == layer.weight.numel()
        assert layer.weight.abs().max() <= 1 / layer.weight.shape[1] ** 0.5
    assert not torch.equal(model[0].bias, untouched)  # 1-d weights and biases move as before


def test_drawn_matrices_are_left_as_drawn():
    model = torch.nn.Linear(5, 4)
    before = model.weight.clone()
    perturb_torch_module(model)
    assert torch.equal(model.weight, before)
