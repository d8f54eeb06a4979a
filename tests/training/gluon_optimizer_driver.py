"""Runs in .venv-mxnet (mxnet 1.9.1), never in porter's environment: gluon.Trainer steps on bare parameters.

`python gluon_optimizer_driver.py REQUEST.json ARRAYS.npz OUT.npz`. The request holds {"cases": [{"name",
"optimizer", "params" (the Trainer's optimizer_params), "shapes", "steps", "noise_seed"}]}; the arrays hold
`<name>/p<k>/w0` (parameter k's initial value) and `<name>/p<k>/g<step>` (its gradient at each step). Each case
builds parameters p0, p1, ... (in that order, which is also their name order), makes the gradients exact through
autograd (the backward of sum(p * g) is g) and calls `trainer.step(1)`, so rescale_grad stays the given one.
OUT gets `<name>/p<k>/w<step + 1>` after every step. With a noise_seed (SGLD), mxnet's generator is seeded before
each step and, after the step, seeded again and asked for the same draws the optimizer made
(`normal(0, sqrt(lr), shape)` per parameter, in update order): `<name>/p<k>/noise<step>`, so the port can replay
mxnet's noise and the rest of the update is compared exactly. Many cases run in one call (mxnet's import is slow).
"""

import json
import math
import sys

import mxnet as mx
import numpy as np
from mxnet import autograd, gluon, nd


def run_case(case, arrays, out):
    name = case["name"]
    parameters = gluon.ParameterDict()
    created = [parameters.get(f"p{k}", shape=tuple(shape)) for k, shape in enumerate(case["shapes"])]
    parameters.initialize(mx.init.Zero())
    for k, parameter in enumerate(created):
        parameter.set_data(nd.array(arrays[f"{name}/p{k}/w0"]))
    trainer = gluon.Trainer(parameters, case["optimizer"], dict(case["params"]))
    seed = case.get("noise_seed")
    for step in range(case["steps"]):
        gradients = [nd.array(arrays[f"{name}/p{k}/g{step}"]) for k in range(len(created))]
        with autograd.record():
            total = nd.add_n(*[(parameter.data() * gradient).sum() for parameter, gradient in zip(created, gradients)])
        total.backward()
        if seed is not None:
            mx.random.seed(seed + step)
        trainer.step(1)
        for k, parameter in enumerate(created):
            out[f"{name}/p{k}/w{step + 1}"] = parameter.data().asnumpy()
        if seed is not None:
            mx.random.seed(seed + step)
            for k, parameter in enumerate(created):
                noise = mx.random.normal(0, math.sqrt(trainer.learning_rate), shape=parameter.shape,
                                         dtype=parameter.dtype)
                out[f"{name}/p{k}/noise{step}"] = noise.asnumpy()


def main(request_path, arrays_path, out_path):
    with open(request_path) as handle:
        request = json.load(handle)
    arrays = dict(np.load(arrays_path))
    out = {}
    for case in request["cases"]:
        run_case(case, arrays, out)
    np.savez(out_path, **out)


if __name__ == "__main__":
    main(*sys.argv[1:4])
