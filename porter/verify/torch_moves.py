"""How often a torch model moves data between axes itself: the permutes and transposes its forward runs that change
the order of the elements in memory (a window partition's `x.permute(0, 1, 3, 2, 4, 5)`), not those that only move
size-1 axes or undo nothing.

A port converts layouts only at its boundary when its traced graph holds no more Transpose ops than this count plus
the two boundary conversions: models that move data in torch (Swin, MaxViT) are held to that, not to an absolute
bound.
"""

# torch functions, Tensor methods and Tensor properties that return the input with its axes reordered
AXIS_MOVES = frozenset({"permute", "transpose", "swapaxes", "swapdims", "t", "movedim", "moveaxis", "T", "mT", "H",
                        "mH", "adjoint"})


def op_name(func):
    """`permute` for torch.permute / Tensor.permute, `T` for the getter of the property Tensor.T."""
    name = getattr(func, "__name__", "")
    if name == "__get__":  # a property read (`x.mT`) reaches __torch_function__ as its getter
        name = getattr(getattr(func, "__self__", None), "__name__", "")
    return name


def moves_data(func, args, kwargs):
    """Whether `func(*args, **kwargs)` (an axis move of args[0]) changes the order of args[0]'s elements: the same
    call on a tensor of element indices comes out in another order."""
    import torch

    source = args[0]
    probe = torch.arange(source.numel()).reshape(source.shape)
    moved = func(probe, *args[1:], **kwargs)
    return not torch.equal(moved.reshape(-1), probe.reshape(-1))


def count_torch_data_moves(model, inputs):
    """Axis moves that change the element order in one inference call of torch module `model` on `inputs` (numpy
    arrays or tensors)."""
    import torch
    from torch.overrides import TorchFunctionMode

    class Counter(TorchFunctionMode):
        count = 0

        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if op_name(func) in AXIS_MOVES and args and isinstance(args[0], torch.Tensor) and \
                    moves_data(func, args, kwargs):
                Counter.count += 1
            return func(*args, **kwargs)

    tensors = [torch.as_tensor(i) for i in inputs]
    with torch.no_grad(), Counter():
        model(*tensors)
    return Counter.count
