"""The batched entry of element-wise kernels on WGSL (issue 18).

A kernel that `codegen.ptx.emitter.batchable` admits (no barrier, collective, atomic,
workgroup array or loop; a workgroup of [x, 1, 1]) on a 1-D logical grid of gx workgroups
may run `batch` consecutive logical workgroups in one dispatched workgroup, in lock step:
dispatched workgroup f runs copies j = 0..batch-1 of its threads, copy j as logical
workgroup f * batch + j (valid while below gx). `global_id()` and `workgroup_id()` keep
their logical meaning, `num_workgroups()` is the logical grid (`gi_grid.xyz`; the runtime
passes gi_grid = (gx, 1, 1, dispatched workgroups), folded past the cap as ever).

Lock step, statement by statement: each copy has its own locals (`<name>__b<j>`) and a
predicate (its `gi_live__b<j>` and the conditions of the enclosing `if`s, held in lets), and
the body is flattened: an `if` computes each copy's condition, its branches run for every
copy under the copy's predicate. Values (lets, a store's value, an assigned value) are
computed for every copy, so a statement's loads come before its stores, with no branch in
front of them (loads are memory-safe in WGSL, `_Emitter.speculable`; a checked load or
division records its failure only where the copy's predicate holds, `gi_pchecked_*`); side
effects (stores, assignments) happen under the predicate. A `return` clears the copy's
`gi_live`. The copies are different threads of the kernel, which never wait for or observe
each other except through racing memory accesses, so this is one of the executions the
GPU could have produced; each copy keeps Rust's order of its own faults.
"""

from __future__ import annotations

from goldy_import.ir import nodes as N

from .parens import _bare, _strip


def batched_prologue(em, batch: int) -> list[str]:
    """Per copy j: the logical workgroup and global ids, and whether the copy exists."""
    wx = em.k.workgroup_size[0]
    mutable = any(isinstance(s, N.Return) for s in N.walk_stmts(em.k.body))
    out = ["    let gi_num_workgroups = gi_grid.xyz;"]
    for j in range(batch):
        out += [f"    let gi_workgroup_id__b{j} = vec3<u32>(gi_fold * {batch}u + {j}u, 0u, 0u);",
                f"    let gi_global_id__b{j} = gi_workgroup_id__b{j} * vec3<u32>({wx}u, 1u, 1u) + gi_local_id;",
                f"    {'var' if mutable else 'let'} gi_live__b{j} = gi_workgroup_id__b{j}.x < gi_grid.x;"]
    return out


class Batched:
    """Emits the kernel body for `batch` copies in lock step through the emitter `em`."""

    def __init__(self, em, batch: int):
        self.em, self.batch = em, batch
        self.base_names = dict(em.names)
        local = {s.name for s in N.walk_stmts(em.k.body) if isinstance(s, N.Let)}
        self.copy_names = [{**self.base_names, **{n: f"{self.base_names[n]}__b{j}" for n in local}}
                           for j in range(batch)]

    def copy(self, j: int, cond: str) -> None:
        """Expressions from here on are copy j's, under `cond` (its enclosing conditions)."""
        em = self.em
        em.names = self.copy_names[j]
        em.copy_suffix = f"__b{j}"
        em.live = f"gi_live__b{j}" + (f" && {cond}" if cond else "")

    def done(self) -> None:
        em = self.em
        em.names, em.copy_suffix, em.live = self.base_names, "", None

    def emit(self) -> None:
        self.block(self.em.k.body, [""] * self.batch)
        self.done()

    def block(self, stmts: list[N.Stmt], conds: list[str]) -> None:
        for s in stmts:
            self.stmt(s, conds)

    def stmt(self, s: N.Stmt, conds: list[str]) -> None:
        em, sp = self.em, s.span
        if isinstance(s, N.Let):
            for j in range(self.batch):
                self.copy(j, conds[j])
                n = em.names[s.name]
                if s.value is None:
                    em.line(f"var {n}: {em.ty(s.ty)};", sp)
                else:
                    em.line(f"{'var' if s.mutable else 'let'} {n}: {em.ty(s.ty)} = {_bare(em.expr(s.value))};", sp)
        elif isinstance(s, (N.Store, N.Assign)):
            values = []
            for j in range(self.batch):  # every copy's value first: the loads ahead of the stores
                self.copy(j, conds[j])
                v = em.fresh("v")
                em.line(f"let {v}: {em.ty(s.value.ty)} = {_bare(em.expr(s.value))};", sp)
                values.append(v)
            for j in range(self.batch):
                self.copy(j, conds[j])
                live = em.live
                em.live = None  # inside the branch the copy runs: plain checked helpers
                em.line(f"if ({live}) {{", sp)
                em.indent += 1
                if isinstance(s, N.Store):
                    em.line(self.store(s, values[j]), sp)
                else:
                    em.assign(s, value_text=values[j])
                em.indent -= 1
                em.line("}")
        elif isinstance(s, N.If):
            then_c, else_c = [], []
            for j in range(self.batch):
                self.copy(j, conds[j])
                c = em.fresh("c")
                em.line(f"let {c}: bool = {_bare(em.expr(s.cond))};", sp)
                outer = f"{conds[j]} && " if conds[j] else ""
                then_c.append(f"({outer}{c})")
                else_c.append(f"({outer}!{c})")
            em.line("{", sp)  # a scope for the branches' lets, not a branch
            em.indent += 1
            self.block(s.then_body, then_c)
            em.indent -= 1
            em.line("}")
            if s.else_body:
                em.line("{")
                em.indent += 1
                self.block(s.else_body, else_c)
                em.indent -= 1
                em.line("}")
        elif isinstance(s, N.Return):
            for j in range(self.batch):
                em.line(f"gi_live__b{j} = gi_live__b{j} && !{conds[j]};" if conds[j] else f"gi_live__b{j} = false;", sp)
        else:
            em.fail(f"the batched entry cannot run `{type(s).__name__}`", sp)

    def store(self, s: N.Store, value: str) -> str:
        em = self.em
        index = _strip(em.expr(s.index))
        if s.check >= 0:
            return f"{em.checked_storer(s.resource, s.span)}({index}, {value}, {s.check}u);"
        return f"{em.storer(s.resource, s.span)}({index}, {value});"
