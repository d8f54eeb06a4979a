"""Classes whose call calls the class itself (GluonCV DLA's `Tree`: `self.tree1` is a block one level down, or a
Tree again).

While a class is translated, what its own call returns is not known, so its first translation converts around
the call it makes of itself. When that translation shows the class calling itself and returning one image, the
class is translated once more with its recursion settled: its own call taken to return an image of that rank in
the layout the call's first image arrives in (a block hands on the layout it takes; the return converts to it
if it must), and parameters a caller leaves at their default (`residual=None`) taken as the images its own calls
hand them. Callers then chain the recursion without conversions.
"""

from porter.ir.lists import images_held
from porter.ir.values import Value, tensor


def settled_rank(template, arg_values):
    """The rank of the image a class calling itself returns, from its first translation's return `template`, or
    None when the recursion cannot be settled this way (no image in, a tuple or plain value out)."""
    first = next((v for v in arg_values if v.is_tensor), None)
    if template is None or not template.is_tensor or first is None or (first.rank or 0) <= 2:
        return None
    return template.rank or first.rank


def settled_output(rank, arg_values):
    """The Value template the call returns under a settled recursion: an image of `rank` in the layout its first
    image argument arrives in."""
    first = next((v for v in arg_values if v.is_tensor), None)
    if first is None:
        return None
    layout = "channels_last" if first.channels_last else "source"
    return tensor("", rank, layout)


def widened_arguments(params, env, own_calls):
    """`env` (forward parameter -> Value) with each parameter the first caller left at its default (a plain value)
    taken as the image (or the list of channels-last images) the class's own calls hand it, when they all hand one
    alike; and the positional argument Values in order. `own_calls`: the (args, kwargs) the class handed itself."""
    env = dict(env)
    for position, param in enumerate(params):
        name = param.name.value
        if param.star in ("*", "**") or env[name].kind != "python":
            continue
        handed = []
        for args, kwargs in own_calls:
            if position < len(args) and args[position].kind != "starred":
                handed.append(args[position])
            elif name in kwargs:
                handed.append(kwargs[name])
        handed = [v for v in handed if not (v.kind == "python" and v.code == "None")]  # (the default, again)
        lists = [images_held(v) for v in handed]
        if handed and all(t is not None for t in lists) and len({(t.layout, t.rank) for t in lists}) == 1:
            # a list of channels-last images handed down (`self.tree2(x1, None, children)`)
            env[name] = Value(name, "tuple", items=None, static=("each", lists[0]))
            continue
        images = [v for v in handed if v.is_tensor]
        if not images or len(images) != len(handed) or \
                len({(v.channels_last, v.rank) for v in images}) != 1 or images[0].layout.startswith("permuted:"):
            continue
        env[name] = images[0].but(channels=None).with_code(name)
    arg_values = [env[p.name.value] for p in params if p.star not in ("*", "**")]
    return env, arg_values
