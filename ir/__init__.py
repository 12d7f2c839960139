"""The kernel IR shared by every target: nodes, types, layout, verifier, JSON."""

from . import nodes, types
from .nodes import Kernel
from .serialize import IR_VERSION, from_json, kernel_from_dict, kernel_to_dict, to_json
from .verify import VerifyError, verify

__all__ = ["nodes", "types", "Kernel", "IR_VERSION", "to_json", "from_json", "kernel_to_dict",
           "kernel_from_dict", "verify", "VerifyError"]
