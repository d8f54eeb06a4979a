"""The framework container classes (`nn.Sequential`, `nn.ModuleList`, `nn.ModuleDict`, Gluon's `(Hybrid)Sequential`):
which kind of container each canonical id is, and the runtime class its port uses.

One table for every stage that meets a container: the frontend resolving what `__init__` builds, the translator
calling one, and codegen renaming a container named as a value (`make=nn.Sequential` as a default).
"""

CONTAINERS = {
    "torch.nn.Sequential": "sequential",
    "torch.nn.ModuleList": "list",
    "torch.nn.ModuleDict": "dict",
    "mxnet.gluon.nn.Sequential": "sequential",
    "mxnet.gluon.nn.HybridSequential": "sequential",
}
CONTAINER_RUNTIME = {"sequential": "Sequential", "list": "ModuleList", "dict": "ModuleDict"}
# containers whose runtime class differs from torch's (Gluon's Sequential has `.add(...)`)
CONTAINER_RUNTIME_BY_NAME = {"mxnet.gluon.nn.Sequential": "GluonSequential",
                             "mxnet.gluon.nn.HybridSequential": "GluonSequential"}


def container_runtime(canonical):
    """The runtime class name porting the container `canonical` (None when it is not a container)."""
    kind = CONTAINERS.get(canonical)
    return None if kind is None else CONTAINER_RUNTIME_BY_NAME.get(canonical, CONTAINER_RUNTIME[kind])
