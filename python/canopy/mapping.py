"""The placement engine: the policy registry, canopy.map, canopy.cost and
canopy.compare (every policy on one input, as `canopy compare`)."""
import builtins
from collections import namedtuple
from dataclasses import dataclass, field

from . import _canopy
from .matrix import as_matrix
from .placement import Cost, Placement, _placement_of

Policy = namedtuple("Policy", ["name", "description"])


def policies():
    """Every mapping policy, in the order `canopy map --list-policies` lists them."""
    return [Policy(n, d) for n, d in _canopy.policies()]


def default_policy():
    """The policy map() uses when none is given."""
    return _canopy.default_policy()


def default_weights(topology):
    """The cost model's weight per level, root first (docs/cost-model.md)."""
    return _canopy.default_weights(topology._t)


def _weights(weights):
    return [float(w) for w in weights] if weights is not None else []


def map(topology, matrix, policy=None, *, pack=False, granularity="pu", helpers="none", weights=None):
    """Place the tasks of `matrix` (a CommMatrix, NumPy array, SciPy sparse
    matrix, path, or a number of tasks that do not communicate) on
    `topology` with `policy` (default: default_policy())."""
    m = as_matrix(matrix)
    policy = default_policy() if policy is None else policy
    _canopy.find_policy(policy)  # an unknown name fails with the list of known ones
    native = _canopy.map_tasks(topology._t, m._m, policy, pack, granularity, helpers, _weights(weights))
    return Placement(topology, native, m)


def cost(topology, matrix, placement, weights=None):
    """What `placement` (a Placement or one logical PU per task) costs for
    `matrix` on `topology`, with the default or the given per-level weights."""
    p = _placement_of(topology, placement)
    return Cost._from(_canopy.evaluate(topology._t, as_matrix(matrix)._m, p._p, _weights(weights)))


@dataclass(frozen=True)
class PolicyResult:
    """One policy's line of compare(): its cost, ratio to the best weighted
    cost, time, or the error that stopped it (then cost is None)."""
    policy: str
    cost: Cost = None
    ratio: float = None
    time_ms: float = None
    error: str = None


@dataclass(frozen=True)
class Comparison:
    results: list
    best: str  # the policy with the lowest weighted cost, None when every policy failed
    weights: list = field(default_factory=list)

    def __getitem__(self, policy):
        for r in self.results:
            if r.policy == policy:
                return r
        raise KeyError(policy)

    def table(self):
        """The results as aligned text (without times, which vary run to run)."""
        rows = [("policy", "hop-bytes", "weighted", "NUMA crossing", "ratio")]
        for r in self.results:
            if r.error:
                rows.append((r.policy, "-", "-", "-", "failed: " + r.error))
            else:
                rows.append((r.policy, f"{r.cost.hop_bytes:g}", f"{r.cost.weighted:g}", f"{r.cost.numa_crossing:g}",
                             f"{r.ratio:.2f}"))
        width = [builtins.max(len(row[i]) for row in rows) for i in range(5)]
        lines = ["  ".join(c.ljust(width[i]) if i == 0 else c.rjust(width[i]) for i, c in enumerate(row)).rstrip()
                 for row in rows]
        lines.append(f"best: {self.best}" if self.best else "best: none (every policy failed)")
        return "\n".join(lines) + "\n"

    def __str__(self):
        return self.table()


def compare(topology, matrix, *, pack=False, granularity="pu", weights=None):
    """Run every policy on one input and judge each placement (as `canopy compare`)."""
    m = as_matrix(matrix)
    c = _canopy.compare_policies(topology._t, m._m, pack, granularity, _weights(weights))
    results = []
    for r in c.results:
        if r.error:
            results.append(PolicyResult(r.policy, error=r.error))
        else:
            results.append(PolicyResult(r.policy, Cost._from(r.cost), r.ratio, r.time_ms))
    best = c.results[c.best].policy if c.best >= 0 else None
    return Comparison(results, best, list(c.weights))
