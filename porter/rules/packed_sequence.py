"""Rules: torch.nn.utils.rnn's packed sequences (pack_padded_sequence, pad_packed_sequence, pack_sequence,
pad_sequence) around RNN / LSTM / GRU.

Layout "source": sequences are in torch's axis order (an RNN's input is). A packed sequence is an opaque Python value
to the translator (porter/runtime/packed_sequence.py's PackedSequence: the padded tensor and the lengths), handed to
the RNN layers as torch hands its PackedSequence; `pad_packed_sequence` gives (padded tensor, lengths as int64).
Dtype: the padded tensor keeps the input's; lengths are integers.
"""

from porter.ir.values import Value, python, tensor
from porter.rules.registry import Signature, function_rule

RNN_UTILS = "torch.nn.utils.rnn."
PACK_PADDED = Signature.parse("(input, lengths, batch_first=False, enforce_sorted=True)")
PAD_PACKED = Signature.parse("(sequence, batch_first=False, padding_value=0.0, total_length=None)")
PACK = Signature.parse("(sequences, enforce_sorted=True)")
PAD = Signature.parse("(sequences, batch_first=False, padding_value=0.0, padding_side='right')")


def _runtime_call(ctx, call, signature, runtime):
    """`runtime(...)` with the call's arguments in torch's order, tensors in torch's layout."""
    bound = call.bind(signature)
    positional = [ctx.plain(bound[name]) for name in signature.params[:len(call.all_args())]]
    keywords = {name: ctx.plain(value) for name, value in call.kwargs.items()}
    return f"{ctx.runtime(runtime)}({ctx.join_args(positional, keywords)})"


def translate_pack_padded_sequence(ctx, call):
    return python(_runtime_call(ctx, call, PACK_PADDED, "pack_padded_sequence"))


def translate_pack_sequence(ctx, call):
    return python(_runtime_call(ctx, call, PACK, "pack_sequence"))


def translate_pad_packed_sequence(ctx, call):
    code = _runtime_call(ctx, call, PAD_PACKED, "pad_packed_sequence")
    items = (tensor(f"{code}[0]"), tensor(f"{code}[1]", 1).but(dtype="int"))
    return Value(code, "tuple", items=items)


def translate_pad_sequence(ctx, call):
    sequences = call.bind(PAD).get("sequences")
    code = _runtime_call(ctx, call, PAD, "pad_sequence")
    items = sequences.items if sequences is not None and sequences.kind == "tuple" else None
    ranks = {item.rank for item in items or ()}
    rank = ranks.pop() + 1 if len(ranks) == 1 and None not in ranks else None
    return tensor(code, rank)


function_rule(RNN_UTILS + "pack_padded_sequence", runtime="pack_padded_sequence",
              translate=translate_pack_padded_sequence, layout="source")
function_rule(RNN_UTILS + "pad_packed_sequence", runtime="pad_packed_sequence",
              translate=translate_pad_packed_sequence, layout="source", outputs="tuple")
function_rule(RNN_UTILS + "pack_sequence", runtime="pack_sequence", translate=translate_pack_sequence, layout="source")
function_rule(RNN_UTILS + "pad_sequence", runtime="pad_sequence", translate=translate_pad_sequence, layout="source")
