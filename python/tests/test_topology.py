"""canopy.Topology: the three sources, sizes and per-PU arrays, the text,
JSON and SVG the CLI prints for the same machine, and canopy's errors."""
import json

import numpy as np
import pytest

import canopy
from conftest import SMALL, TWO_SOCKET, golden


def test_synthetic_sizes_levels_and_pu_arrays():
    t = canopy.Topology.synthetic(SMALL)
    assert (t.num_pus, t.num_cores, t.num_numa_nodes) == (32, 16, 4)
    assert t.source == SMALL
    assert t.levels[0] == "Machine" and t.levels[-1] == "PU"
    assert isinstance(t.pu_os_indexes, np.ndarray)
    assert t.pu_os_indexes.tolist() == list(range(32))
    assert t.pu_cores.tolist() == [i // 2 for i in range(32)]
    assert t.pu_numa_nodes.tolist() == [i // 8 for i in range(32)]
    assert t.distance(0, 0) == 0
    assert t.distance(0, 1) < t.distance(0, 2) < t.distance(0, 8) < t.distance(0, 16)
    assert "32 PUs" in repr(t)


def test_xml_matches_the_cli_goldens(in_test_data):
    t = canopy.Topology.from_xml(TWO_SOCKET)
    assert t.text() == golden("topology_two_socket.txt")
    assert t.json() == golden("topology_two_socket.json")
    assert t.svg() == golden("topology_two_socket.svg")
    assert str(t) == t.text()
    # OS numbering differs from the logical one: siblings are P#n and P#n+16.
    assert t.pu_os_indexes[:4].tolist() == [0, 16, 1, 17]
    assert t.to_dict() == json.loads(golden("topology_two_socket.json"))


def test_synthetic_matches_the_cli_goldens():
    t = canopy.Topology.synthetic(SMALL)
    assert t.text() == golden("topology_small.txt")
    assert t.json() == golden("topology_small.json")
    assert t._repr_svg_() == golden("topology_small.svg")
    assert t._repr_svg_().lstrip().startswith(("<svg", "<?xml"))


def test_load_follows_the_input_rule(in_test_data, tmp_path):
    assert canopy.Topology.load(TWO_SOCKET).text() == golden("topology_two_socket.txt")
    assert canopy.Topology.load(SMALL).num_pus == 32
    # Saved as XML and loaded back: the same machine.
    path = tmp_path / "small.xml"
    path.write_text(canopy.Topology.synthetic(SMALL).to_xml())
    again = canopy.Topology.from_xml(path)
    assert again.text().split("\n", 1)[1] == golden("topology_small.txt").split("\n", 1)[1]


def test_this_machine():
    t = canopy.Topology.this_machine()
    assert t.num_pus >= 1
    assert t.source == "this machine"
    assert canopy.Topology.load().num_pus == t.num_pus
    first = int(t.pu_os_indexes[0])
    r = t.restricted([first])
    assert r.num_pus == 1 and r.pu_os_indexes.tolist() == [first]


def test_errors_carry_canopys_message(in_test_data):
    with pytest.raises(canopy.Error, match=r"synthetic topology 'pack:x': not a valid hwloc synthetic description"):
        canopy.Topology.synthetic("pack:x")
    with pytest.raises(canopy.Error, match="synthetic topology: the description is empty"):
        canopy.Topology.synthetic("  ")
    with pytest.raises(canopy.Error, match="nowhere.xml: no such topology file"):
        canopy.Topology.from_xml("nowhere.xml")
    with pytest.raises(canopy.Error, match="cli/corrupt.xml: not a valid hwloc XML topology"):
        canopy.Topology.from_xml("cli/corrupt.xml")
    with pytest.raises(canopy.Error):
        canopy.Topology.synthetic(SMALL).restricted([4096])
    assert issubclass(canopy.Error, ValueError)
    with pytest.raises(IndexError):
        canopy.Topology.synthetic(SMALL).distance(0, 32)
    with pytest.raises(TypeError):
        canopy.Topology("pack:2")
