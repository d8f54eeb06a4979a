"""Producers of output files beyond the model module and PORTING.md, one module each.

A producer is `produce(source, ctx, manifest, options) -> {relative path: text}`; `convert` calls them in this
order. Each issue's module lives here (training script, equivalence tests, HTML report, Colab notebook, Cloud TPU
runbook).
"""

from porter.plugins import load_present

PRODUCER_MODULES = ("porter.outputs.training", "porter.outputs.equivalence_tests", "porter.outputs.html_report",
                    "porter.outputs.notebook", "porter.outputs.runbook")

PRODUCERS = [module.produce for module in load_present(PRODUCER_MODULES)]
