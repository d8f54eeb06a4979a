"""timm's helpers that model code leans on, with timm's semantics: `DropPath` / `drop_path` (stochastic depth:
each sample's residual branch dropped with probability drop_prob, the kept ones scaled by 1 / keep), `to_2tuple`
and friends. `timm.layers.trunc_normal_` is torch's `nn.init.trunc_normal_` (the import table maps it there).
"""

import keras
import tensorflow as tf

from porter.runtime.base import TorchLayer, named_children


def drop_path(x, drop_prob=0.0, training=False, scale_by_keep=True, seed=None):
    """timm.layers.drop_path: identity unless training with drop_prob > 0; then a per-sample keep mask (batch axis
    0, so any layout) scaled by 1 / keep_prob when scale_by_keep."""
    if drop_prob == 0.0 or not training:
        return x
    keep_prob = 1.0 - drop_prob
    shape = [tf.shape(x)[0]] + [1] * (len(x.shape) - 1)
    uniform = keras.random.uniform(shape, seed=seed) if seed is not None else tf.random.uniform(shape)
    mask = tf.cast(uniform < keep_prob, x.dtype)
    if keep_prob > 0.0 and scale_by_keep:
        mask = mask / tf.cast(keep_prob, x.dtype)
    return x * mask


class DropPath(TorchLayer):
    """timm.layers.DropPath(drop_prob, scale_by_keep): drop_path as a layer (no weights); any layout."""

    porter_layout = "any"

    def __init__(self, drop_prob=0.0, scale_by_keep=True, **kwargs):
        super().__init__(**kwargs)
        self.drop_prob, self.scale_by_keep = drop_prob, scale_by_keep
        self.seed_generator = keras.random.SeedGenerator() if drop_prob else None
        self.finish_init()

    def call(self, x, training=None):
        return drop_path(x, self.drop_prob, bool(training), self.scale_by_keep, self.seed_generator)

    def get_config(self):
        return {**super().get_config(), "drop_prob": self.drop_prob, "scale_by_keep": self.scale_by_keep}


def to_ntuple(n):
    """timm.layers.to_ntuple(n): a function making an n-tuple of a scalar; an iterable (not a string) is kept."""

    def parse(x):
        if hasattr(x, "__iter__") and not isinstance(x, str):  # collections.abc.Iterable, as timm
            return tuple(x)
        return tuple([x] * n)

    return parse


to_1tuple = to_ntuple(1)
to_2tuple = to_ntuple(2)
to_3tuple = to_ntuple(3)
to_4tuple = to_ntuple(4)


def checkpoint_seq(functions, x, every=1, flatten=False, skip_last=False, use_reentrant=None):
    """timm.models.checkpoint_seq: the functions (a Sequential, or a list of modules) run in turn on x. Activation
    checkpointing only trades memory for recomputation in torch; the values are those of the plain sequence."""
    if not isinstance(functions, (list, tuple)):
        return functions(x)
    for function in functions:
        if flatten and isinstance(function, (list, tuple)):
            for inner in function:
                x = inner(x)
        else:
            x = function(x)
    return x


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    """timm.models.checkpoint (torch.utils.checkpoint.checkpoint): the function's result, computed once."""
    return function(*args, **kwargs)


def feature_take_indices(num_features, indices=None, as_set=False):
    """timm.models.feature_take_indices: (absolute feature indices, the largest) for the last-n int or the list of
    (possibly negative) indices `indices` (all features when None)."""
    if indices is None:
        indices = num_features
    if isinstance(indices, int):
        if not 0 < indices <= num_features:
            raise AssertionError(f"last-n ({indices}) is out of range (1 to {num_features})")
        take_indices = [num_features - indices + i for i in range(indices)]
    else:
        take_indices = []
        for i in indices:
            index = num_features + i if i < 0 else i
            if not 0 <= index < num_features:
                raise AssertionError(f"feature index {index} is out of range (0 to {num_features - 1})")
            take_indices.append(index)
    return (set(take_indices) if as_set else take_indices), max(take_indices)


def named_apply(fn, module, name="", depth_first=True, include_root=False):
    """timm.models.named_apply: fn(module=m, name=its dotted torch name) over the submodules, children before their
    parent when depth_first (the root too when include_root), as timm walks them."""
    if not depth_first and include_root:
        fn(module=module, name=name)
    for child_name, child in named_children(module):
        child_name = f"{name}.{child_name}" if name else child_name
        named_apply(fn, child, child_name, depth_first, include_root=True)
    if depth_first and include_root:
        fn(module=module, name=name)
    return module


def build_model_with_cfg(model_cls, variant, pretrained=False, pretrained_cfg=None, pretrained_cfg_overlay=None,
                         model_cfg=None, feature_cfg=None, pretrained_strict=True, pretrained_filter_fn=None,
                         cache_dir=None, kwargs_filter=None, pretrained_model_args=None, features_only=False,
                         **kwargs):
    """timm.models.build_model_with_cfg as a port builds: the model class with the keyword arguments (less those
    `kwargs_filter` names; `cfg=model_cfg` where one is given). Pretrained weights are not downloaded (load the
    torch model's state_dict into the port); a feature extractor (features_only) is not ported."""
    if features_only:
        raise NotImplementedError(f"porter: timm's feature extractor of {variant!r} (features_only=True) is not "
                                  f"ported; build the model and take its stages' outputs in forward")
    for key in kwargs_filter or ():
        kwargs.pop(key, None)
    return model_cls(cfg=model_cfg, **kwargs) if model_cfg is not None else model_cls(**kwargs)


def get_device_dtype(module, device=None, dtype=None):
    """timm.layers.get_device_dtype as the port needs it: the device and dtype handed, or None (the layers' own
    defaults: the port's variables have no torch device, and their dtype follows the Keras policy)."""
    return {"device": device, "dtype": dtype}

