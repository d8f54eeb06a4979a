"""Gluon's Sequential and HybridSequential: torch's runtime Sequential plus Gluon's `add(*blocks)`.

Children are keyed "0", "1", ... in the order they were added, which is how `save_parameters` names them
(`features.3.weight`).
"""

from porter.runtime.module import Sequential


class GluonSequential(Sequential):
    """gluon.nn.Sequential / HybridSequential (`prefix=`/`params=` accepted and ignored)."""

    def add(self, *blocks):
        """Append `blocks` in order, as Gluon's `Sequential.add` does."""
        for block in blocks:
            self.names.append(str(len(self.items)))
            self.items.append(block)
