"""The `%%goldy` IPython cell magic: `%load_ext goldy_import`, then a cell

    %%goldy [module_name]
    #[goldy::compute(workgroup_size = [64, 1, 1])]
    fn saxpy(x: &[f32], y: &mut [f32], a: f32) { ... }

imports the cell's Rust and binds each kernel (and `#[goldy::gpu]` struct) to its name in
the user namespace, the whole module too where a name is given. A cell with errors shows
the rustc-style diagnostics as the cell's error, without a traceback; warnings print below
a cell that loads.
"""

from __future__ import annotations

import sys
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, magics_class

from goldy_import.errors import DiagnosticError


@magics_class
class GoldyMagics(Magics):
    @cell_magic
    def goldy(self, line: str, cell: str) -> None:
        from goldy_import.loader import load_source
        name = line.strip()
        if name and not name.isidentifier():
            raise UsageError(f"%%goldy takes an optional module name (a Python identifier), got {name!r}")
        shell = self.shell
        assert shell is not None  # a registered magic has its shell
        filename = f"cell_{shell.execution_count}.rs"
        try:
            mod = load_source(cell, filename)
        except DiagnosticError as e:
            raise UsageError(str(e)) from None  # IPython shows it as the cell's error, no traceback
        bound: dict[str, Any] = {**mod.structs, **{cls.__name__: cls for cls in mod.kernels.values()}}
        if name:
            bound[name] = mod
        shell.user_ns.update(bound)
        if mod.result is not None and mod.result.diagnostics:  # warnings
            print(mod.result.render(), file=sys.stderr)


def load_ipython_extension(ipython: Any) -> None:
    ipython.register_magics(GoldyMagics)
