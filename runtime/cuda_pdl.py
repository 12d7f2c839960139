"""Programmatic graph edges for the CUDA backend's replayed Schemes (codegen/ptx/pdl.py
says what they are and why the emitted entries may take them).

A dispatch is linked to the one before it by a programmatic edge when its module carries
the PDL prologue and cuda-python has graph edge data (CUDA 12.3 and newer); otherwise by
an ordinary edge. `GOLDY_CUDA_PDL=0` keeps every edge ordinary (for comparison)."""

from __future__ import annotations

from typing import Any, Callable, Optional
from goldy_import.envflag import env_flag

EdgeAdder = Callable[[Any, Any, Any], Any]  # (graph, from node, to node) -> cuda-python's result tuple


def edge_adder(drv: Any) -> Optional[EdgeAdder]:
    """How to add one programmatic edge with this binding, or None where it cannot."""
    if not env_flag("GOLDY_CUDA_PDL", True):
        return None
    data = getattr(drv, "CUgraphEdgeData", None)
    dep_type = getattr(getattr(drv, "CUgraphDependencyType", None), "CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC", None)
    port = getattr(drv, "CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC", None)
    if data is None or dep_type is None or port is None:
        return None
    # cuda-python 12.3-12.x names the edge-data form `_v2`; 13 made it the plain name
    add = getattr(drv, "cuGraphAddDependencies_v2", None) or drv.cuGraphAddDependencies

    def programmatic(graph: Any, before: Any, after: Any) -> Any:
        e = data()
        e.type, e.from_port = dep_type, port
        return add(graph, [before], [after], [e], 1)

    return programmatic
