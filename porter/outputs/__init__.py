"""Producers of output files beyond the model module and PORTING.md, one module each.

A producer is `produce(source, ctx, manifest, options) -> {relative path: text}`; `convert` calls them in this
order. Each issue's module lives here (training script, equivalence tests, HTML report).
"""

import importlib

PRODUCER_MODULES = ("porter.outputs.training", "porter.outputs.equivalence_tests", "porter.outputs.html_report")


def _load():
    producers = []
    for name in PRODUCER_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as error:
            if error.name != name:
                raise
            continue
        producers.append(module.produce)
    return producers


PRODUCERS = _load()
