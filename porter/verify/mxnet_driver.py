"""Run one Gluon model in real mxnet 1.9.1 and write its outputs and gradients: the reference for Gluon ports.

Executed as a script by the mxnet venv's Python (`.venv-mxnet/bin/python mxnet_driver.py REQUEST.json`), never
imported by porter: it imports only mxnet, numpy and the standard library. porter/verify/mxnet_reference.py writes
the request and reads the results.

The request (JSON) names: `model_path` and `class_name` (a Block subclass or a function that returns a Block, such
as a model-zoo `get_resnet`), `init_kwargs`, `seed`, `inputs` (an .npz of `input_0`, `input_1`, ...), `training`,
`hybridize`, `perturb` (move normalisation statistics and affine parameters off their defaults), `load_parameters`
and `save_parameters` (paths or null) and `out_dir`. The driver writes into out_dir:

    outputs.npz           output_0, output_1, ...: the forward's outputs, nested tuples/lists flattened in order
    input_gradients.npz   input_<i>: d sum(float outputs) / d input i, for floating-point inputs
    parameters.npz        every parameter, keyed as save_parameters names it, as the forward used it
    parameter_gradients.npz   the gradients of the parameters that take one (grad_req != 'null')
    error.json            instead, when something fails: {"stage", "type", "message"} (the message's last line)

A batch request (the one `porter verify` and the generated test_equivalence.py send, so that one process serves
many cases) has `sample` (an .npz of inputs that completes deferred shapes) and `cases` instead of `inputs`, and
optionally `probe` (.npz names of inputs tried in inference mode: does the model accept them?), `determinism` (an
.npz of inputs run twice in training mode), `capture` (an .npz of inputs run in inference mode with every block's
first input and outputs recorded into capture.npz, for localisation) and `vanishing` (an .npz of inputs on which the
gradients that vanish in exact arithmetic are found in float64) and `float64_cases` (cases whose gradients are
computed with the model cast to float64); both cast the model, so they run after the cases.
Dropout blocks are set to rate 0 first. Each case is
{"name", "inputs", "seed", "training"} and optionally "parameters" (an .npz of values that replace the parameters
for this case): the loss is sum_i sum(w_i * output_i) over the floating-point outputs, w_i
standard normal from numpy's default_rng([seed, 1]) drawn in output order (porter's `output_weights`). It writes
<name>_outputs.npz, <name>_gradients.npz (input_<i> and the parameters' gradients) and <name>_state.npz (every
parameter after the step: a training step moves BatchNorm's running statistics), and the parameters are put back
before the next case. `info.json` says which probes ran, whether training is deterministic and which parameters
take gradients (and the capture's order and the vanishing gradients, when asked).
"""

import importlib.util
import itertools
import json
import os
import sys
import traceback
from pathlib import Path


class StageFailed(Exception):
    """A step of the run failed; `stage` says which, `__cause__` says why."""

    def __init__(self, stage):
        super().__init__(stage)
        self.stage = stage


def main(request_path):
    request = json.loads(Path(request_path).read_text())
    out_dir = Path(request["out_dir"])
    try:
        if "train" in request:
            run_training(request, out_dir)
        elif "cases" in request:
            run_batch(request, out_dir, request_path)
        else:
            run(request, out_dir, request_path)
    except StageFailed as failure:
        write_error(out_dir, failure.stage, failure.__cause__)
        return 1
    return 0


def run(request, out_dir, request_path):
    with stage("import mxnet"):
        import mxnet  # noqa: F401 - a failure here is reported as this stage's
    with stage("import the model file"):
        module = import_by_path(Path(request["model_path"]))
    with stage("construct the model"):
        net = construct(module, request)
    if os.environ.get("MXNET_MKLDNN_ENABLED") == "0" and uses_fused_rnn(net):
        restart_with_mkldnn(request_path)
    with stage("load the inputs"):
        inputs = ndarrays(load_npz(out_dir / request["inputs"]))
    with stage("initialize the parameters"):
        parameters = initialize(net, inputs, request)
        save_npz(out_dir / "parameters.npz", {name: p.data().asnumpy() for name, p in parameters.items()})
    if request["save_parameters"]:
        with stage("save the parameters"):
            net.save_parameters(request["save_parameters"])
    with stage("run forward and backward"):
        outputs, input_gradients = forward_and_backward(net, inputs, request["training"])
        save_npz(out_dir / "outputs.npz", {f"output_{i}": out.asnumpy() for i, out in enumerate(outputs)})
        save_npz(out_dir / "input_gradients.npz", input_gradients)
        save_npz(out_dir / "parameter_gradients.npz",
                 {name: p.grad().asnumpy() for name, p in parameters.items() if p.grad_req != "null"})


def run_batch(request, out_dir, request_path):
    """The batch request: build, initialize on the sample, load/perturb/save, probe, then every case."""
    import numpy as np

    with stage("import mxnet"):
        import mxnet as mx
    with stage("import the model file"):
        module = import_by_path(Path(request["model_path"]))
    with stage("construct the model"):
        net = construct(module, request)
    if os.environ.get("MXNET_MKLDNN_ENABLED") == "0" and uses_fused_rnn(net):
        restart_with_mkldnn(request_path)
    with stage("load the inputs"):
        sample = ndarrays(load_npz(out_dir / request["sample"]))
    with stage("initialize the parameters"):
        parameters = initialize(net, sample, request)
        saved = {name: p.data().copy() for name, p in parameters.items()}
        save_npz(out_dir / "parameters.npz", {name: value.asnumpy() for name, value in saved.items()})
    if request.get("save_parameters"):
        with stage("save the parameters"):
            net.save_parameters(request["save_parameters"])
    rates = switch_off_dropout(net)
    info = {"dropout_blocks": rates, "trainable": sorted(n for n, p in parameters.items() if p.grad_req != "null"),
            "accepted": [], "deterministic": None, "training_error": None}
    for name in request.get("probe") or []:
        try:
            with mx.autograd.predict_mode():
                flatten_outputs(net(*ndarrays(load_npz(out_dir / name))))
            mx.nd.waitall()
            info["accepted"].append(True)
        except Exception:  # noqa: BLE001 - the model rejects these sizes, whatever it raises
            info["accepted"].append(False)
    if request.get("determinism"):
        inputs = load_npz(out_dir / request["determinism"])
        try:
            runs = []
            for _ in range(2):
                with mx.autograd.record(train_mode=True):
                    runs.append([out.asnumpy() for out in flatten_outputs(net(*ndarrays(inputs)))])
                restore(parameters, saved)
            info["deterministic"] = all(np.array_equal(a, b, equal_nan=True) for a, b in zip(*runs))
        except Exception as error:  # noqa: BLE001 - reported, and the training check is left out
            restore(parameters, saved)
            info["training_error"] = f"{type(error).__name__}: {last_line(error)}"
    if request.get("capture"):
        with stage("capture the blocks' outputs"):
            info["capture"] = capture_blocks(net, ndarrays(load_npz(out_dir / request["capture"])),
                                             out_dir / "capture.npz")
    for case in request["cases"]:
        with stage(f"run case {case['name']}"):
            inputs = ndarrays(load_npz(out_dir / case["inputs"]))
            if case.get("parameters"):  # other values for this case only (restored below)
                with np.load(out_dir / case["parameters"], allow_pickle=False) as archive:
                    for name in archive.files:
                        parameters[name].set_data(ndarrays([archive[name]])[0])
            outputs, gradients = weighted_backward(net, inputs, case["seed"], case["training"])
            save_npz(out_dir / f"{case['name']}_outputs.npz",
                     {f"output_{i}": out.asnumpy() for i, out in enumerate(outputs)})
            gradients.update({name: p.grad().asnumpy() for name, p in parameters.items() if p.grad_req != "null"})
            save_npz(out_dir / f"{case['name']}_gradients.npz", gradients)
            save_npz(out_dir / f"{case['name']}_state.npz", {name: p.data().asnumpy() for name, p in parameters.items()})
            restore(parameters, saved)
    if request.get("float64_cases"):  # after the float32 cases: the model is cast to float64 for them
        with stage("run the float64 cases"):
            net.cast("float64")
            for case in request["float64_cases"]:
                inputs = ndarrays([x.astype(np.float64) if np.issubdtype(x.dtype, np.floating) else x
                                   for x in load_npz(out_dir / case["inputs"])])
                _, gradients = weighted_backward(net, inputs, case["seed"], case["training"])
                gradients.update({name: p.grad().asnumpy() for name, p in parameters.items()
                                  if p.grad_req != "null"})
                save_npz(out_dir / f"{case['name']}_gradients.npz", gradients)
                for name, parameter in parameters.items():  # a training step moved the statistics
                    parameter.set_data(saved[name].astype("float64"))
    if request.get("vanishing"):  # last: the model is cast to float64 for it
        info["vanishing"] = vanishing_gradients(net, load_npz(out_dir / request["vanishing"]))
    (out_dir / "info.json").write_text(json.dumps(info))


def vanishing_gradients(net, inputs):
    """{"eval": [...], "training": [...]}: the parameters whose gradient is zero in exact arithmetic (below 1e-10 of
    the largest, computed in float64), such as the bias of a layer that a training-mode BatchNorm follows: in float32
    their value is round-off, judged against the largest gradient. Empty lists when the model does not run in
    float64."""
    import numpy as np

    found = {"eval": [], "training": []}
    try:
        net.cast("float64")
        inputs = ndarrays([x.astype(np.float64) if np.issubdtype(x.dtype, np.floating) else x for x in inputs])
        parameters = net._collect_params_with_prefix()
        for mode, training in (("eval", False), ("training", True)):
            _, gradients = weighted_backward(net, inputs, 0, training)
            gradients.update({name: p.grad().asnumpy() for name, p in parameters.items() if p.grad_req != "null"})
            peak = max([float(np.abs(g).max(initial=0.0)) for g in gradients.values()] + [0.0])
            found[mode] = sorted(name for name, g in gradients.items()
                                 if not name.startswith("input_") and float(np.abs(g).max(initial=0.0)) <= 1e-10 * peak)
    except Exception:  # noqa: BLE001 - a model that does not run in float64: every gradient on its own max
        return {"eval": [], "training": []}
    return found


def named_blocks(net, prefix=""):
    """(dotted attribute path, block) for `net` and every block below it, paths as save_parameters names them."""
    found = [(prefix, net)]
    for name, child in net._children.items():
        child = child() if callable(child) and not hasattr(child, "_children") else child  # weakrefs in Gluon 2
        found.extend(named_blocks(child, f"{prefix}.{name}" if prefix else name))
    return found


def capture_blocks(net, inputs, path):
    """Run inference with hooks on every block: capture.npz holds `<index>.in` (the first input) and `<index>.out<k>`
    per call, in the order calls complete; returns [[path, call, class name, output count]] in that order."""
    import mxnet as mx

    order, arrays, pending, counts, handles = [], {}, {}, {}, []

    def pre_hook_for(name):
        def pre_hook(block, args):
            first = next((a for a in args if isinstance(a, mx.nd.NDArray)), None)
            pending.setdefault(name, []).append(None if first is None else first.asnumpy())
        return pre_hook

    def hook_for(name):
        def hook(block, args, output):
            index = len(order)
            first = (pending.get(name) or [None]).pop()
            if first is not None:
                arrays[f"{index}.in"] = first
            outputs = [o for o in flatten_outputs(output) if isinstance(o, mx.nd.NDArray)]
            for k, out in enumerate(outputs):
                arrays[f"{index}.out{k}"] = out.asnumpy()
            call = counts.get(name, 0)
            counts[name] = call + 1
            order.append([name, call, type(block).__name__, len(outputs)])
        return hook

    for name, block in named_blocks(net):
        handles.append(block.register_forward_pre_hook(pre_hook_for(name)))
        handles.append(block.register_forward_hook(hook_for(name)))
    try:
        with mx.autograd.predict_mode():
            net(*inputs)
        mx.nd.waitall()
    finally:
        for handle in handles:
            handle.detach()
    save_npz(path, arrays)
    return order


def run_training(request, out_dir):
    """The training request: the source's gluon.Trainer and loss run `steps` steps. request["train"] holds
    `trainer` and `loss` (Python expressions, evaluated with mx, gluon, nn, autograd, nd, np, the model file's
    names and `net` in scope, after the statements of `setup`, if any), `inputs` and `labels` (.npz files of input_<i>: step i takes batch i modulo their
    count), `steps`, `step_size` (the argument of trainer.step; null: the batch size), `reduce` (null: backward
    on the per-sample losses; "mean" or "sum": on their mean or sum), `clip_global_norm` (null, or the max_norm of
    gluon.utils.clip_global_norm on the gradients before the step) and `train_mode` (autograd.record's; dropout is
    switched off either way). The model is initialized as in `run` (seed, `load_parameters`, `perturb`). Writes
    parameters.npz (the initial parameters), train_losses.npz (mean_<i> and sum_<i>: the mean and the sum of step
    i's per-sample losses, and lr_<i>: the trainer's learning rate after step i) and train_parameters.npz
    (step<i>/<name>: every parameter after step i)."""
    import numpy as np

    with stage("import mxnet"):
        import mxnet as mx
    with stage("import the model file"):
        module = import_by_path(Path(request["model_path"]))
    with stage("construct the model"):
        net = construct(module, request)
    spec = request["train"]
    with stage("load the inputs"):
        inputs = ndarrays(load_npz(out_dir / spec["inputs"]))
        labels = ndarrays(load_npz(out_dir / spec["labels"]))
    with stage("initialize the parameters"):
        settings = {**request, "hybridize": False, "perturb": bool(request.get("perturb"))}
        parameters = initialize(net, inputs[:1], settings)
        save_npz(out_dir / "parameters.npz", {name: p.data().asnumpy() for name, p in parameters.items()})
    switch_off_dropout(net)
    with stage("build the trainer and the loss"):
        namespace = {**vars(module), "mx": mx, "gluon": mx.gluon, "nn": mx.gluon.nn, "autograd": mx.autograd,
                     "nd": mx.nd, "np": np, "net": net}
        if spec.get("setup"):
            exec(spec["setup"], namespace)  # noqa: S102 - the test's statements before the Trainer (lr_mult, wd_mult)
        trainer = eval(spec["trainer"], namespace)  # the test's own training snippet
        loss_fn = eval(spec["loss"], namespace)
    losses, states = {}, {}
    train_mode = bool(spec.get("train_mode", False))
    with stage("train"):
        for step in range(int(spec["steps"])):
            x, y = inputs[step % len(inputs)], labels[step % len(labels)]
            with mx.autograd.record(train_mode=train_mode):
                loss = loss_fn(net(x), y)
                target = loss.mean() if spec.get("reduce") == "mean" else \
                    loss.sum() if spec.get("reduce") == "sum" else loss
            target.backward(train_mode=train_mode)
            if spec.get("clip_global_norm") is not None:
                mx.gluon.utils.clip_global_norm([p.grad() for p in net.collect_params().values()
                                                 if p.grad_req != "null"], spec["clip_global_norm"])
            trainer.step(spec["step_size"] if spec.get("step_size") is not None else x.shape[0])
            mx.nd.waitall()
            losses[f"mean_{step}"] = np.float64(loss.mean().asscalar())
            losses[f"sum_{step}"] = np.float64(loss.sum().asscalar())
            losses[f"lr_{step}"] = np.float64(trainer.learning_rate)
            for name, parameter in parameters.items():
                states[f"step{step}/{name}"] = parameter.data().asnumpy()
    save_npz(out_dir / "train_losses.npz", losses)
    save_npz(out_dir / "train_parameters.npz", states)


def ndarrays(arrays):
    """mxnet arrays of numpy `arrays`: NDArrays, or mxnet.np arrays when the model file switched NumPy mode on
    (`npx.set_np()`: its Blocks take those only)."""
    import mxnet as mx

    made = [mx.nd.array(array, dtype=array.dtype) for array in arrays]
    return [a.as_np_ndarray() for a in made] if mx.util.is_np_array() else made


def switch_off_dropout(net):
    """Dropout blocks to rate 0 (training must be deterministic to compare); their names, as a count. Fused RNN
    layers' dropout between layers too."""
    found = []

    def visit(block):
        if type(block).__name__ == "Dropout" and hasattr(block, "_rate"):
            block._rate = 0.0
            found.append(block.name)
        elif type(block).__name__ in ("LSTM", "GRU", "RNN") and getattr(block, "_dropout", 0):
            block._dropout = 0
            found.append(block.name)

    net.apply(visit)
    return len(found)


def restore(parameters, saved):
    """Every parameter back to the value it had after initialization (a training step moves statistics)."""
    for name, parameter in parameters.items():
        parameter.set_data(saved[name])
    for parameter in parameters.values():
        if parameter.grad_req != "null":
            for gradient in parameter.list_grad():  # (Parameter.zero_grad calls a legacy operator: NumPy mode
                gradient[:] = 0                      # arrays make it raise in mxnet 1.9.1)


def weighted_backward(net, inputs, seed, training):
    """The outputs and {input_<i>: gradient} of sum_i sum(w_i * output_i) over the floating-point outputs. Float
    inputs that feed an Embedding (Gluon's float32 token ids) take no gradient in mxnet: then none is given."""
    import mxnet as mx

    try:
        return _weighted_backward(net, inputs, seed, training, True)
    except mx.base.MXNetError as error:
        if "calculate data gradient" not in str(error):
            raise
    return _weighted_backward(net, [x.copy() for x in inputs], seed, training, False)


def _weighted_backward(net, inputs, seed, training, input_gradients):
    import mxnet as mx
    import numpy as np

    floating = {i: x for i, x in enumerate(inputs) if input_gradients and np.issubdtype(x.dtype, np.floating)}
    for x in floating.values():
        x.attach_grad()
    with mx.autograd.record(train_mode=training):
        outputs = flatten_outputs(net(*inputs))
        differentiable = [out for out in outputs if np.issubdtype(out.dtype, np.floating)]
        generator = np.random.default_rng([seed, 1])
        weights = [generator.standard_normal(tuple(out.shape)).astype(np.float32) for out in differentiable]
        terms = [(out * ndarrays([w.astype(out.dtype)])[0]).sum() for out, w in zip(differentiable, weights)]
        total = sum(terms[1:], terms[0]) if terms else None
    if total is not None:
        # backward in the forward's mode: NDArray.backward defaults to train_mode=True, where BatchNorm's backward
        # uses the batch statistics even after an inference-mode forward (wrong eval-mode gradients)
        total.backward(train_mode=training)
    mx.nd.waitall()
    return outputs, {f"input_{i}": x.grad.asnumpy() for i, x in floating.items()}


def last_line(error):
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else type(error).__name__


def construct(module, request):
    """`class_name(**init_kwargs)` after seeding mxnet's and numpy's generators."""
    import mxnet as mx
    import numpy as np

    mx.random.seed(request["seed"])
    np.random.seed(request["seed"])
    factory = getattr(module, request["class_name"], None)
    if factory is None:
        raise AttributeError(f"{request['model_path']} defines no {request['class_name']}")
    net = factory(**request["init_kwargs"])
    if not isinstance(net, mx.gluon.Block):
        raise TypeError(f"{request['class_name']}(...) returned a {type(net).__name__}, not a Gluon Block")
    return net


def initialize(net, inputs, request):
    """Initialize (one inference-mode call completes deferred shapes), then load, then perturb; the parameters by
    the names save_parameters writes."""
    import mxnet as mx
    import numpy as np

    net.initialize()
    if request["hybridize"]:
        net.hybridize()
    with mx.autograd.predict_mode():
        net(*inputs)  # completes deferred initialization (in_units=0); inference mode changes no statistics
    # the engine is asynchronous and, with MKLDNN on (models with fused RNN layers), (de)convolutions reorder their
    # weights in place while declaring them only read: without this wait a parameter can be read half reordered
    mx.nd.waitall()
    if request["load_parameters"]:
        net.load_parameters(request["load_parameters"])
    if request["perturb"]:
        perturb_parameters(net, np.random.RandomState(request["seed"]))
    return net._collect_params_with_prefix()


def forward_and_backward(net, inputs, training):
    """The outputs, flattened, and {input_<i>: gradient} of sum(float outputs) for the floating-point inputs; the
    parameters' gradients are left in their .grad(). Float inputs that feed an Embedding (Gluon's float32 token ids)
    take no gradient in mxnet: then none is given."""
    import mxnet as mx

    try:
        return _forward_and_backward(net, inputs, training, True)
    except mx.base.MXNetError as error:
        if "calculate data gradient" not in str(error):
            raise
    return _forward_and_backward(net, [x.copy() for x in inputs], training, False)


def _forward_and_backward(net, inputs, training, input_gradients):
    import mxnet as mx
    import numpy as np

    floating = {i: x for i, x in enumerate(inputs) if input_gradients and np.issubdtype(x.dtype, np.floating)}
    for x in floating.values():
        x.attach_grad()
    with mx.autograd.record(train_mode=training):
        outputs = flatten_outputs(net(*inputs))
        differentiable = [out for out in outputs if np.issubdtype(out.dtype, np.floating)]
        total = sum(out.astype("float64").sum() for out in differentiable)
    if differentiable:  # integer outputs only (class ids): there is nothing to differentiate
        total.backward(train_mode=training)  # the default, train_mode=True, gives BatchNorm batch-stat gradients
    mx.nd.waitall()  # an operator's failure surfaces here, not later
    return outputs, {f"input_{i}": x.grad.asnumpy() for i, x in floating.items()}


class stage:  # used as `with stage("..."):`, so it reads as a phrase
    """Turns any exception inside the block into StageFailed(name), keeping the exception as its cause."""

    def __init__(self, name):
        self.name = name

    def __enter__(self):
        return self

    def __exit__(self, kind, error, trace):
        if error is not None and not isinstance(error, StageFailed):
            raise StageFailed(self.name) from error
        return False


def import_by_path(path):
    """The model file as a module. A file inside an importable package (mxnet's own model zoo, with its relative
    imports) is imported by its dotted name; any other file by path, its directory put on sys.path for siblings.

    A package whose `__init__.py` fails to import (GluonCV's imports its whole library: data loaders that need
    tqdm, PIL and matplotlib, which a model file never uses) is entered without it: the packages above the file are
    registered as namespace packages over their real folders, so the file and its relative imports (`from ..nn
    import ReLU6`, `from .resnet import BasicBlockV1`) still load the real files."""
    dotted = package_module_name(path)
    if dotted is not None:
        try:
            return importlib.import_module(dotted)
        except Exception:  # noqa: BLE001 - retried below without the package initialisers; a real error recurs
            forget_modules(dotted.split(".")[0])
        stub_packages(Path(path).resolve().parent, dotted.rsplit(".", 1)[0])
        return importlib.import_module(dotted)
    sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location(f"gluon_model_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def forget_modules(top):
    """Drop `top` and its submodules from sys.modules (a package half imported before its `__init__` failed)."""
    for name in [name for name in sys.modules if name == top or name.startswith(top + ".")]:
        del sys.modules[name]


def stub_packages(folder, dotted):
    """Register package `dotted` (held by `folder`) and each package above it as a namespace module over its
    folder, without running its `__init__.py`."""
    import types

    parts = dotted.split(".")
    modules = []
    for depth in range(len(parts), 0, -1):
        module = types.ModuleType(".".join(parts[:depth]))
        module.__path__ = [str(folder)]
        module.__package__ = module.__name__
        sys.modules[module.__name__] = module
        modules.insert(0, module)
        folder = folder.parent
    for parent, child in itertools.pairwise(modules):
        setattr(parent, child.__name__.rsplit(".", 1)[1], child)


def package_module_name(path):
    """`mxnet.gluon.model_zoo.vision.resnet` for .../site-packages/mxnet/gluon/model_zoo/vision/resnet.py when the
    folder above the outermost package is on sys.path; None for a file outside any package."""
    path = path.resolve()
    parts, folder = [path.stem], path.parent
    while (folder / "__init__.py").exists():
        parts.insert(0, folder.name)
        folder = folder.parent
    on_path = {Path(entry).resolve() for entry in sys.path if entry}
    return ".".join(parts) if len(parts) > 1 and folder in on_path else None


def uses_fused_rnn(net):
    """Whether the model holds a fused rnn.LSTM/GRU/RNN layer: mxnet 1.9.1 runs those on the CPU only through
    MKLDNN (with MKLDNN disabled its RNN operator fails its own output-count check)."""
    from mxnet.gluon.rnn.rnn_layer import _RNNLayer

    found = []
    net.apply(lambda block: found.append(isinstance(block, _RNNLayer)))
    return any(found)


def restart_with_mkldnn(request_path):
    """Run this request again in a fresh process with MKLDNN on; mxnet reads the switch once, when it starts."""
    os.environ["MXNET_MKLDNN_ENABLED"] = "1"
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, [sys.executable, "-I", str(Path(__file__).resolve()), str(request_path)])


def flatten_outputs(result):
    """The NDArrays in a forward's result, nested tuples and lists flattened depth-first."""
    if isinstance(result, (list, tuple)):
        return [leaf for item in result for leaf in flatten_outputs(item)]
    return [result]


def perturb_parameters(net, generator):
    """Move normalisation statistics and 1-D affine parameters off their defaults (1/0 hide swapped or dropped terms),
    as porter's torch reference does."""
    import numpy as np

    for name, parameter in net._collect_params_with_prefix().items():
        value = parameter.data()
        if np.dtype(value.dtype).kind != "f":  # NDArray.dtype is a numpy type (np.float32), not a dtype name
            continue
        noise = generator.uniform(0.0, 1.0, size=value.shape).astype(value.dtype)
        if name.endswith("running_var"):
            parameter.set_data(0.5 + noise)
        elif name.endswith("running_mean"):
            parameter.set_data(noise - 0.5)
        elif name.endswith(("gamma", "beta", "bias", "weight")) and len(value.shape) == 1:
            parameter.set_data(value.asnumpy() + 0.2 * (noise - 0.5))


def load_npz(path):
    import numpy as np

    with np.load(path, allow_pickle=False) as archive:
        return [archive[f"input_{i}"] for i in range(len(archive.files))]


def save_npz(path, arrays):
    import numpy as np

    np.savez(path, **arrays)


def write_error(out_dir, stage_name, error):
    """error.json with the failing stage, the exception type and the last line of its message."""
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    message = lines[-1] if lines else type(error).__name__
    detail = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    (out_dir / "error.json").write_text(json.dumps({"stage": stage_name, "type": type(error).__name__,
                                                    "message": message[:500], "traceback": detail[-4000:]}))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
