"""Vector loads for an unrolled trip's loads (ir/unroll.py `vector_groups`, issue 18).

Each member of a group is accessed where it stands (index, range test and trapping check
in evaluation order, so a fault is reported as the scalar code reports it); the last one
then loads all VECTOR elements with one `ld.global.v4` where, at run time, every member is
in range, the members' addresses are consecutive and the first is 16-byte aligned (buffer
offsets, odd row lengths and wrapping indices fail that), and one by one otherwise, each
under its own range test. Out of range reads 0 either way.
"""

from __future__ import annotations

from goldy_import.ir import nodes as N
from goldy_import.ir.unroll import VECTOR

_MOV = {"f32": "mov.f32", "u32": "mov.b32", "i32": "mov.b32"}
_ZERO = {"f32": "0f00000000", "u32": "0", "i32": "0"}
_PTY = {"f32": "f32", "u32": "u32", "i32": "u32"}


def vector_let(em, s: N.Let, group: int, place: int) -> None:
    """Emit `let` member `place` of vector group `group` (emitter `em`, codegen/ptx/emitter.py)."""
    assert isinstance(s.value, N.Load)
    em.line_comment(s.span)
    _space, ok, addr, ty, nc = em.access(s.value.resource, s.value.index, check=s.value.check)
    pending = em.__dict__.setdefault("_vector_pending", {})
    members = pending.setdefault(group, [])
    members.append((em.local(s.name)[0], ok, addr))
    if place < VECTOR - 1:
        return
    del pending[group]
    b, a0 = em.b, members[0][2]
    vec = em.new("p", "setp.eq.u64 {}, {}, 0;", em.new("rd", "and.b64 {}, {}, 15;", a0))
    for c, (_reg, okc, ad) in enumerate(members):
        if okc:
            vec = em.pred_and(vec, okc)
        if c:
            step = em.new("rd", "sub.s64 {}, {}, {};", ad, a0)
            vec = em.pred_and(vec, em.new("p", f"setp.eq.s64 {{}}, {{}}, {4 * c};", step))
    for reg, _ok, _ad in members:
        b.op(f"{_MOV[ty]} {reg}, {_ZERO[ty]};")
    regs = ", ".join(reg for reg, _ok, _ad in members)
    b.op(f"@{vec} ld.global{nc}.v{VECTOR}.{_PTY[ty]} {{{regs}}}, [{a0}];")
    scalar = em.new("p", "not.pred {}, {};", vec)
    for reg, okc, ad in members:
        one = em.pred_and(scalar, okc) if okc else scalar
        b.op(f"@{one} ld.global{nc}.{_PTY[ty]} {reg}, [{ad}];")
