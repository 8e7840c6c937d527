"""canopy.Placement (where each task runs, on which topology) and
canopy.Cost (what it costs). A placement prints itself in the formats other
tools read, with the same text as the CLI: OMP_PLACES, GOMP_CPU_AFFINITY,
Open MPI rankfiles, canopy's list, table and JSON, and an SVG picture."""
import json as _json
from dataclasses import dataclass, field

import numpy as np

from . import _canopy
from .matrix import as_matrix
from .topology import Topology


@dataclass(frozen=True)
class Cost:
    """What a placement costs (docs/cost-model.md); lower is better."""
    hop_bytes: float
    weighted: float
    numa_crossing: float
    tasks_per_numa: list = field(default_factory=list)

    @classmethod
    def _from(cls, c):
        return cls(c.hop_bytes, c.weighted, c.numa_crossing, list(c.tasks_per_numa))


class Placement:
    """Task -> PU on a topology. `pus` holds logical PU indexes (canopy's and
    hwloc's), `os_pus` the OS CPU numbers that OMP_PLACES and taskset use."""

    def __init__(self, topology, native, matrix=None):
        self.topology = topology
        self.matrix = matrix  # the CommMatrix map() placed, if any: adds per-task volumes to table and JSON
        self._p = native

    @classmethod
    def from_pus(cls, topology, pus, *, os_indexes=False, granularity="pu", policy="user"):
        """A placement given by hand: one logical PU per task (or OS CPU
        numbers with os_indexes=True). Loads are not checked, so that an
        oversubscribed placement can still be evaluated; call validate()."""
        pus = [int(p) for p in np.asarray(pus).ravel()]
        if os_indexes:
            text = " ".join(str(p) for p in pus)
            native = _canopy.parse_placement_list(topology._t, text, "os_indexes", len(pus))
            native = _canopy.Placement(policy, native.task_pu, [], granularity)
        else:
            for t, p in enumerate(pus):
                if not 0 <= p < topology.num_pus:
                    raise _canopy.Error(f"task {t} is on PU {p}, but topology '{topology.source}' has PUs "
                                        f"0..{topology.num_pus - 1}")
            native = _canopy.Placement(policy, pus, [], granularity)
        return cls(topology, native)

    @classmethod
    def from_list(cls, topology, text, num_tasks=-1):
        """canopy's list format (`canopy map --of list`): one OS CPU per task."""
        return cls(topology, _canopy.parse_placement_list(topology._t, text, "placement", num_tasks))

    @property
    def policy(self):
        return self._p.policy

    @property
    def granularity(self):
        return self._p.granularity

    @property
    def num_tasks(self):
        return self._p.num_tasks

    def __len__(self):
        return self._p.num_tasks

    @property
    def pus(self):
        """Logical PU of each task (NumPy int array)."""
        return np.asarray(self._p.task_pu, dtype=np.int64)

    @property
    def os_pus(self):
        """OS CPU number of each task's PU (NumPy int array)."""
        return self.topology.pu_os_indexes[self.pus] if self.num_tasks else np.zeros(0, dtype=np.int64)

    @property
    def helper_pus(self):
        """Logical PU kept for each task's helpers (-1 none); None without helpers="smt"."""
        h = self._p.helper_pu
        return np.asarray(h, dtype=np.int64) if h else None

    def binding(self, task):
        """The logical PUs task `task` is bound to (its PU, or its core's PUs)."""
        if not 0 <= task < self.num_tasks:
            raise IndexError(f"task {task}: expected 0..{self.num_tasks - 1}")
        return self._p.binding(self.topology._t, int(task))

    def validate(self):
        """Raise canopy.Error unless every PU exists and no PU holds more than ceil(T/P) tasks."""
        _canopy.validate_placement(self.topology._t, self._p)

    def cost(self, matrix=None, weights=None):
        """canopy.cost(self.topology, matrix, self, weights); matrix defaults to the one map() placed."""
        matrix = self.matrix if matrix is None else matrix
        if matrix is None:
            raise TypeError("cost(): give the matrix (this placement was not made by map())")
        return Cost._from(_canopy.evaluate(self.topology._t, as_matrix(matrix)._m, self._p, list(weights or [])))

    def omp_places(self):
        """OMP_PLACES value: one place per task, "{0},{1},{2,3}"."""
        return _canopy.omp_places(self.topology._t, self._p)

    def gomp_cpu_affinity(self):
        """GOMP_CPU_AFFINITY value: one OS CPU per task, "0 1 2 3"."""
        return _canopy.gomp_cpu_affinity(self.topology._t, self._p)

    def rankfile(self, host="localhost"):
        """Open MPI rankfile, one line per task (rank)."""
        return _canopy.rankfile(self.topology._t, self._p, host)

    def format(self, format="table", matrix=None):
        """The placement as `canopy map --of FORMAT` prints it, without the
        cost lines: table, json, list, omp-places, gomp or rankfile. The
        matrix (default: the one map() placed) adds per-task volumes."""
        matrix = self.matrix if matrix is None else matrix
        m = as_matrix(matrix)._m if matrix is not None else None
        return _canopy.format_placement(self.topology._t, self._p, format, m)

    def to_dict(self, matrix=None):
        return _json.loads(self.format("json", matrix))

    def svg(self):
        """The topology with each task drawn in its PU (`canopy map --svg`)."""
        return _canopy.placement_svg(self.topology._t, self._p)

    def _repr_svg_(self):
        return self.svg()

    def __str__(self):
        return self.format("table")

    def __repr__(self):
        return (f"<canopy.Placement {self.policy!r}: {self.num_tasks} tasks on {self.topology.source!r}, "
                f"pus={self.pus.tolist() if self.num_tasks <= 16 else '...'}>")


def _placement_of(topology, placement):
    if isinstance(placement, Placement):
        return placement
    return Placement.from_pus(topology, placement)


__all__ = ["Cost", "Placement", "Topology"]
