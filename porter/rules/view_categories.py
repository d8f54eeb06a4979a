"""A view of an image held channels-last (or permuted) whose written sizes say which are channel groups and which are
spatial: the result keeps the channels stored last.

The count-based plans of rules/tensor_ops.py read a view by how many sizes it has; a view that splits the channels
and merges the spatial dims at once (`x.view(b, g, c // g, h * w)` of `b, c, h, w = x.size()`, a channel shuffle
of ShuffleNet ports) has as many sizes as the image has dims, and was made in torch's order. Here each size is read
by where it came from: the batch (first), a channel group (`c // g`, a size read from the channels, or a number
between the batch and the spatial sizes) or a spatial size (`h * w`, read from a dim after the channels). When the
sizes are the batch, then channel groups, then spatial sizes, the result is stored (N, *spatial, *groups): the
channels stay last, split where they lie. A view of a tensor whose channel groups are stored last back to an image
(`x.view(b, c, h, w)` after the groups were transposed) is stored channels-last the same way. The runtime's
`view_in_layout` checks at trace time that the sizes group so (else it transposes), so a wrong reading costs speed,
never correctness.
"""

from porter.ir.values import is_permuted, physical_order


def _category(position, size):
    if size.spatial_size:
        return "spatial"
    if size.channel_count or size.channel_part:
        return "channels"
    return "batch" if position == 0 else "number"


def categorised_orders(value, sizes):
    """(stored order of `value`'s torch dims, stored order of the result's) for `value.view(*sizes)` read by the
    sizes' categories, or None when they do not read as batch, channel groups, spatial sizes."""
    if not value.is_tensor or value.rank is None or value.rank < 3 or len(sizes) < 3 or not (
            value.channels_last or is_permuted(value)):
        return None
    categories = [_category(i, s) for i, s in enumerate(sizes)]
    if categories[0] != "batch":
        return None
    groups = 1
    while groups < len(sizes) and categories[groups] in ("channels", "number"):
        groups += 1
    spatial = categories[groups:]
    if groups == 1 or not spatial or any(c != "spatial" for c in spatial):
        return None
    if not value.channels_last and "channels" not in categories[1:groups]:
        return None  # (a permuted tensor's sizes must name the channels: numbers alone may be heads or tokens)
    out_order = [0] + list(range(groups, len(sizes))) + list(range(1, groups))
    return physical_order(value), out_order
