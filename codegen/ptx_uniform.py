"""Which barriers every thread of a block reaches together.

PTX's `bar.sync` (= `barrier.sync.aligned`) requires that all non-exited threads of each
warp execute the same barrier instruction; after a divergent early `return`, or inside
control flow whose condition differs between threads, only `barrier.sync` is allowed, and
warp shuffles with a full mask are not. This pass marks each Barrier/Reduce/Softmax
statement "aligned" when it is reached in uniform control flow with no thread having left
the kernel or the enclosing loop early in divergent control flow.

A value is uniform when every thread of a block computes the same one: constants, scalar
and uniform parameters, workgroup ids and sizes, lengths, loads at uniform indices from
memory the kernel never writes, collective results, and locals only ever assigned uniform
values in uniform control flow (found by iterating to a fixed point). Anything else,
including workgroup-array loads, is treated as divergent: the analysis may say "divergent"
where threads agree (costing a slightly slower barrier), never the reverse.
"""

from __future__ import annotations

from goldy_import.ir import nodes as N


class Uniformity:
    def __init__(self, k: N.Kernel):
        self.k = k
        self.written = _written_resources(k)
        self.divergent_locals: set[str] = set()
        self.aligned: set[int] = set()  # id() of statements whose barriers may be `bar.sync`
        for _ in range(len(k.locals) + 2):
            before = set(self.divergent_locals)
            self.aligned = set()
            self._body(k.body, divergent=False)
            if self.divergent_locals == before:
                break

    # ------------------------------------------------------------ expressions

    def uniform(self, e: N.Expr) -> bool:
        if isinstance(e, N.Const):
            return True
        if isinstance(e, N.Var):
            return e.name not in self.divergent_locals
        if isinstance(e, N.Builtin):
            return e.name in ("workgroup_id", "num_workgroups", "workgroup_size")
        if isinstance(e, (N.Len, N.TensorRank, N.ImageSize)):
            return True
        if isinstance(e, N.Load):
            p = self.k.param(e.resource)
            return p is not None and e.resource not in self.written and self.uniform(e.index)
        return all(self.uniform(c) for c in N.expr_children(e))

    # ------------------------------------------------------------ statements

    def _assign(self, name: str, value_uniform: bool, divergent: bool) -> None:
        if divergent or not value_uniform:
            self.divergent_locals.add(name)

    def _body(self, stmts: list[N.Stmt], divergent: bool) -> bool:
        """Analyse a block entered with `divergent`; returns whether, after it, some threads
        may have left (returned, or broken/continued out of this loop iteration) while
        others go on."""
        left = False
        for s in stmts:
            d = divergent or left
            if isinstance(s, N.Let):
                if s.value is not None:
                    self._assign(s.name, self.uniform(s.value), d)
                elif d:
                    self.divergent_locals.add(s.name)
            elif isinstance(s, N.Assign):
                root = s.target
                while isinstance(root, (N.Field, N.Swizzle)):
                    root = root.value
                if isinstance(root, N.Var):
                    self._assign(root.name, self.uniform(s.value), d)
            elif isinstance(s, N.AtomicAdd):
                if s.target is not None:
                    self.divergent_locals.add(s.target)
            elif isinstance(s, (N.Barrier, N.Reduce, N.Softmax)):
                if not d:
                    self.aligned.add(id(s))
                if isinstance(s, N.Reduce) and d:
                    self.divergent_locals.add(s.target)
            elif isinstance(s, N.If):
                inner = d or not self.uniform(s.cond)
                a = self._body(s.then_body, inner)
                b = self._body(s.else_body, inner)
                left = left or a or b
            elif isinstance(s, (N.While, N.Loop, N.For)):
                cond_u = True
                if isinstance(s, N.While):
                    cond_u = self.uniform(s.cond)
                if isinstance(s, N.For):
                    cond_u = self.uniform(s.start) and self.uniform(s.end)
                    self._assign(s.var, cond_u, d)
                inner = d or not cond_u
                # a divergent break/continue/return makes later iterations divergent
                saved = set(self.aligned)
                if self._body(s.body, inner):
                    self.aligned = saved
                    self._body(s.body, True)
                left = left or self._returns_divergently(s.body, inner)
            elif isinstance(s, (N.Return, N.Break, N.Continue)):
                if d:
                    left = True
        return left

    def _returns_divergently(self, body: list[N.Stmt], divergent: bool) -> bool:
        """A `return` inside a loop leaves the kernel, not just the loop."""
        for s in N.walk_stmts(body):
            if isinstance(s, N.Return):
                return True if divergent else self._under_divergence(body, s)
        return False

    def _under_divergence(self, body: list[N.Stmt], target: N.Stmt) -> bool:
        def walk(stmts, d):
            for s in stmts:
                if s is target:
                    return d
                if isinstance(s, N.If):
                    inner = d or not self.uniform(s.cond)
                    for b in (s.then_body, s.else_body):
                        r = walk(b, inner)
                        if r is not None:
                            return r
                elif isinstance(s, (N.While, N.Loop, N.For)):
                    r = walk(s.body, True)
                    if r is not None:
                        return r
            return None
        return bool(walk(body, False))


def _written_resources(k: N.Kernel) -> set[str]:
    out = set()
    for s in N.walk_stmts(k.body):
        if isinstance(s, (N.Store, N.AtomicAdd)):
            out.add(s.resource)
        elif isinstance(s, N.Softmax):
            out.add(s.resource)
    return out
