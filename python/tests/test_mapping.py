"""The placement engine from Python: every policy gives a valid placement,
placements print exactly what the CLI prints for the same input (golden
files, and the CLI itself for compare), costs match `canopy eval`, and bad
input raises canopy.Error with canopy's message."""
import json
import math

import numpy as np
import pytest
import scipy.sparse

import canopy
from conftest import SMALL, TEST_DATA, TWO_SOCKET, golden

STENCIL16 = "cli/stencil16.txt"


def stencil16():
    return canopy.CommMatrix.read(TEST_DATA / STENCIL16)


def test_policies_and_default():
    names = [p.name for p in canopy.policies()]
    assert {"compact", "scatter", "treematch", "eagermap", "choicemap", "canopy"} <= set(names)
    assert all(p.description for p in canopy.policies())
    assert canopy.default_policy() in names
    assert canopy.map(canopy.Topology.synthetic(SMALL), 4).policy == canopy.default_policy()


@pytest.mark.parametrize("policy", [p.name for p in canopy.policies()])
@pytest.mark.parametrize("tasks", [7, 16, 32, 50])
def test_every_policy_gives_a_valid_placement(policy, tasks):
    t = canopy.Topology.synthetic(SMALL)
    rng = np.random.default_rng(tasks)
    a = rng.integers(0, 5, size=(tasks, tasks)).astype(float)
    a = a + a.T
    np.fill_diagonal(a, 0)
    p = canopy.map(t, a, policy)
    assert p.policy == policy and len(p) == tasks
    assert p.pus.dtype.kind == "i" and p.pus.shape == (tasks,)
    assert ((0 <= p.pus) & (p.pus < t.num_pus)).all()
    assert np.bincount(p.pus, minlength=t.num_pus).max() == math.ceil(tasks / t.num_pus)
    p.validate()
    np.testing.assert_array_equal(p.os_pus, t.pu_os_indexes[p.pus])
    assert p.omp_places().count("{") == tasks
    c = canopy.cost(t, a, p)
    assert c == p.cost(a) == p.cost()
    assert c.weighted >= 0 and sum(c.tasks_per_numa) == tasks


def test_numpy_scipy_and_file_inputs_give_the_same_placement():
    t = canopy.Topology.synthetic(SMALL)
    path = TEST_DATA / STENCIL16
    a = np.loadtxt(path)
    ref = canopy.map(t, canopy.CommMatrix.read(path), "canopy")
    for m in (a, scipy.sparse.csr_matrix(a), str(path), path, stencil16()):
        p = canopy.map(t, m, "canopy")
        np.testing.assert_array_equal(p.pus, ref.pus)
        assert canopy.cost(t, m, p) == canopy.cost(t, path, ref)


@pytest.mark.parametrize("name,fmt", [("map_compact_two_socket.places", "omp-places"),
                                      ("map_compact_two_socket.gomp", "gomp"),
                                      ("map_compact_two_socket.list", "list")])
def test_strings_match_the_cli(in_test_data, name, fmt):
    t = canopy.Topology.from_xml(TWO_SOCKET)
    p = canopy.map(t, STENCIL16, "compact")
    assert p.format(fmt) == golden(name)
    method = {"omp-places": p.omp_places, "gomp": p.gomp_cpu_affinity, "list": None}[fmt]
    if method:
        assert method() == golden(name).rstrip("\n")
    # The list reads back as the same placement.
    np.testing.assert_array_equal(canopy.Placement.from_list(t, golden("map_compact_two_socket.list")).pus, p.pus)


def test_json_and_table_match_the_cli(in_test_data):
    t = canopy.Topology.from_xml(TWO_SOCKET)
    p = canopy.map(t, STENCIL16, "compact")
    expected = json.loads(golden("map_compact_two_socket.json"))
    cost = expected.pop("cost")  # the CLI adds the cost to the placement's JSON
    assert p.to_dict(STENCIL16) == expected
    c = p.cost(STENCIL16)
    assert (c.hop_bytes, c.weighted, c.numa_crossing, c.tasks_per_numa) == (
        cost["hop_bytes"], cost["weighted"], cost["numa_crossing"], cost["tasks_per_numa"])
    assert canopy.default_weights(t) == cost["weights"]
    small = canopy.Topology.synthetic(SMALL)
    table = golden("map_compact_small.txt")
    assert table.startswith(canopy.map(small, STENCIL16, "compact").format("table") + "\n")
    scatter = canopy.map(small, STENCIL16, "scatter")
    assert golden("map_scatter_small.txt").startswith(str(scatter) + "\n")
    assert scatter.format("table", 16) != str(scatter)  # another matrix: other volumes


@pytest.mark.parametrize("granularity,name", [("pu", "map_compact_two_socket"),
                                              ("core", "map_compact_core_two_socket")])
def test_rankfile_and_core_granularity_match_the_cli(in_test_data, granularity, name):
    t = canopy.Topology.from_xml(TWO_SOCKET)
    p = canopy.map(t, 6, "compact", granularity=granularity)
    assert p.granularity == granularity
    assert p.rankfile() == golden(name + ".rankfile")
    if granularity == "core":
        assert p.omp_places() + "\n" == golden(name + ".places")
        assert p.binding(0) == [0, 1]


def test_helpers_and_svg_match_the_cli(in_test_data):
    t = canopy.Topology.from_xml(TWO_SOCKET)
    p = canopy.map(t, 6, "compact", helpers="smt")
    assert p.helper_pus is not None and len(p.helper_pus) == 6
    assert not set(p.helper_pus.tolist()) & set(p.pus.tolist())
    assert p._repr_svg_() == golden("map_helpers_two_socket.svg")
    assert golden("map_helpers_two_socket.txt").startswith(str(p) + "\n")  # then the CLI's cost lines
    assert canopy.map(t, 6, "compact").helper_pus is None


def test_weights_and_oversubscription_match_the_cli():
    small = canopy.Topology.synthetic(SMALL)
    p = canopy.map(small, TEST_DATA / STENCIL16, "scatter", weights=[10, 5, 2, 1])
    c = p.cost(weights=[10, 5, 2, 1])
    assert f"weighted cost        {c.weighted:g}" in golden("map_weights_small.txt")
    over = canopy.map(canopy.Topology.synthetic("pack:2 core:2 pu:1"), 6, "compact")
    assert np.bincount(over.pus).tolist() == [2, 1, 2, 1]  # ceil(6/4) tasks at most per PU, spread per package
    assert golden("map_tasks_oversubscribed.txt").startswith(str(over))


def test_cost_of_a_hand_placement_matches_canopy_eval(in_test_data):
    t = canopy.Topology.from_xml(TWO_SOCKET)
    text = (TEST_DATA / "cli" / "stencil16.placement").read_text()
    p = canopy.Placement.from_list(t, text, 16)
    expected = json.loads(golden("eval_stencil16.json"))["cost"]
    c = canopy.cost(t, STENCIL16, p)
    assert (c.hop_bytes, c.weighted, c.numa_crossing, c.tasks_per_numa) == (
        expected["hop_bytes"], expected["weighted"], expected["numa_crossing"], expected["tasks_per_numa"])
    by_os = canopy.Placement.from_pus(t, p.os_pus, os_indexes=True)
    np.testing.assert_array_equal(by_os.pus, p.pus)
    assert canopy.cost(t, STENCIL16, p.pus) == c  # a plain array of logical PUs


def test_compare_matches_the_cli(cli, in_test_data):
    t = canopy.Topology.synthetic(SMALL)
    c = canopy.compare(t, STENCIL16)
    j = json.loads(cli("compare", "--input", SMALL, "--matrix", STENCIL16, "--of", "json"))
    assert c.best == j["best"] and c.weights == j["weights"]
    assert [r.policy for r in c.results] == [x["policy"] for x in j["policies"]]
    for r, x in zip(c.results, j["policies"]):
        assert r.error is None and "error" not in x
        assert (r.cost.hop_bytes, r.cost.weighted, r.cost.numa_crossing, r.cost.tasks_per_numa, r.ratio) == (
            x["hop_bytes"], x["weighted"], x["numa_crossing"], x["tasks_per_numa"], x["ratio"])
        assert r.time_ms >= 0
    table = cli("compare", "--input", SMALL, "--matrix", STENCIL16, "--pack", "--weights", "8,4,2,1")
    cp = canopy.compare(t, STENCIL16, pack=True, weights=[8, 4, 2, 1])
    assert f"best: {cp.best} " in table


def test_compare_without_the_cli():
    t = canopy.Topology.synthetic(SMALL)
    c = canopy.compare(t, TEST_DATA / STENCIL16)
    assert [r.policy for r in c.results] == [p.name for p in canopy.policies()]
    best = min(r.cost.weighted for r in c.results)
    assert c[c.best].cost.weighted == best and c[c.best].ratio == 1.0
    for r in c.results:
        assert r.ratio == pytest.approx(r.cost.weighted / best)
        assert canopy.map(t, TEST_DATA / STENCIL16, r.policy).cost(TEST_DATA / STENCIL16) == r.cost
    assert f"best: {c.best}" in c.table() and all(r.policy in str(c) for r in c.results)
    with pytest.raises(KeyError):
        c["nope"]


def test_errors_carry_canopys_message():
    t = canopy.Topology.synthetic(SMALL)
    with pytest.raises(canopy.Error, match=r"unknown.*'nope'.*compact"):
        canopy.map(t, 4, "nope")
    with pytest.raises(canopy.Error, match=r"granularity 'socket': expected 'core' or 'pu'"):
        canopy.map(t, 4, "compact", granularity="socket")
    with pytest.raises(canopy.Error, match=r"helpers 'ht': expected 'smt' or 'none'"):
        canopy.map(t, 4, "compact", helpers="ht")
    with pytest.raises(canopy.Error, match=r"weights: 2 values given, but topology 'pack:2 numa:2 core:4 pu:2' has 5"):
        canopy.map(t, 4, "compact", weights=[1, 2])
    with pytest.raises(canopy.Error, match=r"weights: 2 values given"):
        canopy.compare(t, 4, weights=[1, 2])
    with pytest.raises(canopy.Error, match=r"must be finite and non-negative"):
        canopy.cost(t, 2, [0, 1], weights=[1, 1, 1, -1])
    with pytest.raises(canopy.Error, match=r"evaluate: the placement has 3 tasks but the matrix has 2"):
        canopy.cost(t, 2, [0, 1, 2])
    with pytest.raises(canopy.Error, match=r"task 1 is on PU 40, but topology .* has PUs 0..31"):
        canopy.cost(t, 2, [0, 40])
    with pytest.raises(canopy.Error, match=r"placement: 2 CPU numbers for 3 tasks"):
        canopy.Placement.from_list(t, "0 1", 3)
    with pytest.raises(canopy.Error, match=r"placement.*'junk'|junk"):
        canopy.Placement.from_list(t, "0 junk")
    over = canopy.Placement.from_pus(t, [0, 0, 1])
    with pytest.raises(canopy.Error):
        over.validate()  # two tasks on PU 0 with 3 tasks on 32 PUs
    with pytest.raises(TypeError):
        canopy.map(t, True)


def test_threads_map_at_once_with_the_same_results():
    # map, cost and compare release the GIL; results must not depend on it.
    from concurrent.futures import ThreadPoolExecutor
    t = canopy.Topology.synthetic(SMALL)
    m = canopy.CommMatrix.read(TEST_DATA / STENCIL16)
    ref = {p.name: canopy.map(t, m, p.name).pus.tolist() for p in canopy.policies()}
    names = [p.name for p in canopy.policies()] * 4
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda n: (n, canopy.map(t, m, n).pus.tolist()), names))
    assert all(ref[n] == pus for n, pus in got)
