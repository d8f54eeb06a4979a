"""torch.nn.init._calculate_fan_in_and_fan_out: (fan_in, fan_out) of a weight in torch's order, as the runtime's
initialisers count them (helpers._fans)."""

from porter.runtime.helpers import _fans, torch_shape_of


def calculate_fan_in_and_fan_out(tensor):
    """(fan_in, fan_out): dims 1 and 0 times the receptive field (torch raises for fewer than 2 dims)."""
    if len(tensor.shape) < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    return _fans(torch_shape_of(tensor))  # a convolution's stored kernel counted in torch's order
