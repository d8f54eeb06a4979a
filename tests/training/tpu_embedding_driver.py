"""Run in a process of its own: `python driver.py PORT_DIR OUT MODE` trains the port's train_tpu.py for 3 steps
under MirroredStrategy over 2 logical CPUs with --tpu-embedding MODE, and writes OUT/MODE.json: the metrics, the
exported model.keras's state, and (mode host) the variables and bytes of the model built without the served tables
next to the dense model's, both in the strategy's scope."""

import json
import sys

import keras
import numpy as np
import tensorflow as tf

sys.path.insert(0, sys.argv[1])
import train_tpu as T

out, mode = sys.argv[2], sys.argv[3]
T.simulate_replicas(2)
result = {}
if mode == "host":
    strategy = T.resolve_strategy(simulate=2)
    sample = [tf.zeros((1, *spec["shape"]), spec["dtype"]) for spec in T.EXAMPLE_INPUTS]
    _, _, _, result["lines"], build = T.serve_tables(strategy, sample, T.build_optimizer, host=True)
    with strategy.scope():
        with build:
            served = T.build_model()
        dense = T.build_model()
    result["rowless"] = [layer.weight is None for layer in build.layers]
    result["rowless"] += [not isinstance(p, keras.Variable) for p in build.parameters]
    for name, model in (("served", served), ("dense", dense)):
        result[name] = [len(model.weights), int(sum(np.prod(v.shape) * np.dtype(v.dtype).itemsize for v in model.weights))]
T.main(["--steps", "3", "--batch-size", "16", "--simulate-replicas", "2", "--tpu-embedding", mode, "--output-dir",
        f"{out}/{mode}", "--metrics-json", f"{out}/{mode}-metrics.json"])
classes = {**vars(T.model_lib.runtime), **vars(T.model_lib)}
exported = keras.saving.load_model(f"{out}/{mode}/export/model.keras", custom_objects={
    name: value for name, value in classes.items() if isinstance(value, type)})
with open(f"{out}/{mode}-metrics.json") as handle:
    result["metrics"] = json.load(handle)
result["state"] = {e.key: np.asarray(e.variable).tolist() for e in T.model_lib.collect_state(exported)}
with open(f"{out}/{mode}.json", "w") as handle:
    json.dump(result, handle)
