"""Layout pass helpers: emit the code that moves a value between torch's layout and channels-last.

Conversions go through runtime helpers (`to_channels_last`, `to_channels_first`, `broadcast_channels_last`)
that use a reshape instead of a Transpose whenever only size-1 axes move.
"""

from porter.ir.values import Value, tensor


def to_layout(ctx, value, wanted, rank=None):
    """`value` converted to `wanted` ("channels_last" | "source" | "any")."""
    if not value.is_tensor or wanted == "any":
        return value
    if wanted == "source":
        if not value.channels_last:
            return value
        ctx.use("to_channels_first")
        return tensor(f"to_channels_first({value.code})", value.rank, "source")
    if value.channels_last:
        return value
    rank = value.rank if value.rank is not None else rank
    if rank is not None and rank <= 2:
        return value.but(rank=rank)
    ctx.use("to_channels_last")
    return tensor(f"to_channels_last({value.code})", rank, "channels_last").but(layout="channels_last")


def unify(ctx, values):
    """Bring tensor operands of an elementwise op to one layout; returns (converted values, layout, rank)."""
    tensors = [v for v in values if v.is_tensor]
    leader = next((v for v in tensors if v.channels_last), None)
    if leader is None:
        ranks = [v.rank for v in tensors]
        rank = max(ranks) if ranks and None not in ranks else None
        return list(values), "source", rank
    if leader.rank is None:  # unknown rank: fall back to torch's layout for everyone
        return [to_layout(ctx, v, "source") for v in values], "source", None
    converted = []
    for value in values:
        if not value.is_tensor or value.channels_last:
            converted.append(value)
        elif value.rank == leader.rank:
            converted.append(to_layout(ctx, value, "channels_last"))
        else:  # lower rank or unknown: broadcast against the leader, then move channels last
            ctx.use("broadcast_channels_last")
            converted.append(tensor(f"broadcast_channels_last({value.code}, {leader.rank})", leader.rank,
                                    "channels_last"))
    return converted, "channels_last", leader.rank


def merge_layouts(first, second):
    """The layout two control-flow paths can agree on for one variable (None: no conversion needed)."""
    if not (isinstance(first, Value) and isinstance(second, Value)):
        return None
    if not (first.is_tensor and second.is_tensor):
        return None
    if first.channels_last == second.channels_last:
        return None
    return "source"
