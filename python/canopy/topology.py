"""canopy.Topology: the machine as a tree, from hwloc (this machine, an XML
file of another one, or a synthetic description such as "pack:2 core:4")."""
import json as _json
import os

from . import _canopy


class Topology:
    """A machine's topology. Build one with Topology.this_machine(),
    Topology.from_xml(path), Topology.synthetic("pack:2 numa:2 core:8 pu:2")
    or Topology.load(input) (the CLI's --input rule)."""

    def __init__(self, _native):
        if not isinstance(_native, _canopy.Topology):
            raise TypeError("use Topology.this_machine(), Topology.from_xml(path) or Topology.synthetic(description)")
        self._t = _native

    @classmethod
    def this_machine(cls):
        """This machine, restricted to the PUs this process may run on."""
        return cls(_canopy.Topology.this_machine())

    @classmethod
    def from_xml(cls, path):
        """An hwloc XML file (`lstopo machine.xml` on the target machine)."""
        return cls(_canopy.Topology.from_xml_file(os.fspath(path)))

    @classmethod
    def synthetic(cls, description):
        """An hwloc synthetic description such as "pack:2 numa:2 core:8 pu:2"."""
        return cls(_canopy.Topology.from_synthetic(description))

    from_synthetic = synthetic

    @classmethod
    def load(cls, input=None):
        """The CLI's --input rule: None or "" = this machine; an existing file
        or a name ending in .xml = XML; anything else = synthetic."""
        return cls(_canopy.Topology.load(os.fspath(input) if input else ""))

    def restricted(self, os_indexes):
        """The same machine restricted to the given OS CPU numbers."""
        return Topology(self._t.restricted([int(i) for i in os_indexes]))

    @property
    def source(self):
        """"this machine", the XML file's path, or the synthetic string."""
        return self._t.source

    @property
    def num_pus(self):
        return self._t.num_pus

    @property
    def num_cores(self):
        return self._t.num_cores

    @property
    def num_numa_nodes(self):
        return self._t.num_numa_nodes

    @property
    def levels(self):
        """Level names, root first (merged levels joined by '+')."""
        return self._t.level_names()

    @property
    def pu_os_indexes(self):
        """OS CPU number of each logical PU (NumPy array)."""
        return self._t.pu_os_indexes()

    @property
    def pu_cores(self):
        """Logical core of each logical PU (NumPy array)."""
        return self._t.pu_cores()

    @property
    def pu_numa_nodes(self):
        """Logical NUMA node of each logical PU (NumPy array)."""
        return self._t.pu_numa_nodes()

    def distance(self, pu_a, pu_b):
        """How many levels up the common ancestor of two logical PUs is."""
        return self._t.distance(int(pu_a), int(pu_b))

    def text(self):
        """The tree as text, as `canopy topology` prints it."""
        return self._t.text()

    def json(self):
        """The tree as JSON text, as `canopy topology --of json` prints it."""
        return self._t.json()

    def to_dict(self):
        return _json.loads(self._t.json())

    def svg(self):
        """The tree as an SVG picture, as `canopy topology --of svg`."""
        return self._t.svg()

    def to_xml(self):
        """hwloc's XML of this topology (save it to load it again later)."""
        return self._t.to_xml()

    def _repr_svg_(self):
        return self.svg()

    def __str__(self):
        return self.text()

    def __repr__(self):
        return (f"<canopy.Topology {self.source!r}: {self.num_pus} PUs, {self.num_cores} cores, "
                f"{self.num_numa_nodes} NUMA nodes>")
