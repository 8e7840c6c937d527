"""canopy: place parallel work on the machine's topology.

Load a topology (this machine, an hwloc XML file or a synthetic string), give
a communication matrix between tasks (NumPy, SciPy sparse or a file), map the
tasks with one of canopy's policies, judge placements with the cost model,
compare every policy, and hand the result to OpenMP (OMP_PLACES) or MPI (a
rankfile). Errors raise canopy.Error (a ValueError) with canopy's message.
See docs/python.md.
"""
from ._canopy import Error

Error.__module__ = "canopy"  # shown as canopy.Error in tracebacks
from .topology import Topology
from .matrix import CommMatrix
from .placement import Placement, Cost
from .mapping import (Comparison, Policy, PolicyResult, compare, cost, default_policy, default_weights, map,
                      policies)

__version__ = "0.1.0"

__all__ = [
    "Error", "Topology", "CommMatrix", "Placement", "Cost", "Comparison", "Policy", "PolicyResult",
    "compare", "cost", "default_policy", "default_weights", "map", "policies",
]
