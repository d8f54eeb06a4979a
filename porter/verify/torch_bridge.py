"""Move weights from a real torch module into a porter Keras layer/model, and perturb torch models off defaults."""

import numpy as np


def torch_state_numpy(module):
    """torch Module.state_dict() as numpy arrays (keys unchanged), copied: later in-place updates leave them alone."""
    return {key: value.detach().cpu().numpy().copy() for key, value in module.state_dict().items()}


def perturb_torch_module(module, seed=0):
    """Move every parameter and BatchNorm/running statistic off its default (1/0 hide swapped or dropped terms)."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, tensor in module.state_dict().items():
            if not tensor.is_floating_point():
                continue
            noise = torch.rand(tensor.shape, generator=generator)
            if name.endswith("running_var"):
                tensor.copy_(0.5 + noise)
            elif name.endswith("running_mean"):
                tensor.copy_(noise - 0.5)
            elif name.endswith(("weight", "bias")) and tensor.dim() == 1:
                tensor.add_(0.2 * (noise - 0.5))
            elif tensor.dim() > 1 and tensor.numel() > 1 and bool((tensor == tensor.flatten()[0]).all()):
                # a constant matrix (torchvision's ViT head starts at zeros): what it multiplies would go unchecked
                tensor.copy_((2 * noise - 1) / tensor[0].numel() ** 0.5)
    return module


def copy_torch_weights(torch_module, keras_layer, strict=True):
    """Load `torch_module`'s state_dict into `keras_layer` through the runtime load_state_dict."""
    from porter.runtime.base import load_state_dict

    load_state_dict(keras_layer, torch_state_numpy(torch_module), strict=strict)
    return keras_layer


def numpy_of(tensor):
    """A torch tensor, TF tensor or array as numpy."""
    if hasattr(tensor, "detach"):
        return tensor.detach().cpu().numpy()
    return np.asarray(tensor)
