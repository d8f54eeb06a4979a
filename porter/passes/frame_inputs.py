"""Frames a loop takes one by one from a tensor it never rebinds: `for t in range(T): h = self.cell(video[:, t], h)`,
`feats.append(self.cnn(x[:, t]))` (ConvLSTM and CNN-LSTM video models).

Each frame is an image that the layer or block it is handed takes channels-last; taken from the (B, T, C, H, W)
input in torch's layout, each was converted on its own (one Transpose per frame in the traced graph). A tensor read
in the loop only as such frames is moved once before the loop to (B, T, H, W, C), held as a permuted layout, so that
each `video[:, t]` is an image as it lies (statements.py `_for_lines`).
"""

import libcst as cst

from porter.frontend.names import names_bound_in
from porter.frontend.walk import descendants


def frame_sources(body, names):
    """The names of `names` that `body` never binds and reads only as frames `name[:, i]` handed to a call (or
    bound to a name first: `frame = video[:, t]`)."""
    bound = names_bound_in(body, loop_targets=True)
    reads, framed = {}, {}
    for node in descendants(body):
        if isinstance(node, cst.Name) and node.value in names and node.value not in bound:
            reads[node.value] = reads.get(node.value, 0) + 1
        elif isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and node.value.value in names \
                and _frame_index(node):
            framed.setdefault(node.value.value, []).append(node)
    handed = {id(arg.value) for node in descendants(body) if isinstance(node, cst.Call) for arg in node.args} | {
        id(node.value) for node in descendants(body) if isinstance(node, cst.Assign) and len(node.targets) == 1 and
        isinstance(node.targets[0].target, cst.Name)}
    return [name for name, count in reads.items() if count == len(framed.get(name, ())) and
            all(id(frame) in handed for frame in framed[name])]


def _frame_index(node):
    """`x[:, t]`: a full slice over the batch, one index (not a slice) over the frames."""
    if len(node.slice) != 2:
        return False
    batch, frame = (element.slice for element in node.slice)
    return isinstance(batch, cst.Slice) and batch.lower is None and batch.upper is None and batch.step is None and \
        isinstance(frame, cst.Index) and frame.star is None and not isinstance(frame.value, cst.Ellipsis)


def frames_order(rank):
    """The physical order of torch's dims of a (B, T, C, *spatial) tensor held so that each frame is channels-last:
    (B, T, *spatial, C)."""
    return [0, 1, *range(3, rank), 2]
