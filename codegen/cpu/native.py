"""The one-pass reduction loop's sum (codegen/cpu/loops.py `accumulate`) compiled to C.

numpy computes `acc + t[0] + t[1] + ...` (t = x op y per lane) in two passes over a
buffer of terms; a C loop does it in one, the lanes innermost so the compiler vectorises
across lanes without reordering any lane's adds. Built with `-ffp-contract=off` (no fused
multiply-add) and without fast-math, each `*`, `+` and `-` is one IEEE f32 operation
rounded to nearest: the SIMT loop's bits, which tests/test_cpu_native.py checks against
the numpy path on random and special values.

The library is built once per machine with the C compiler (`$CC`, else `cc`) and kept in
the disk cache (goldy_import/cache.py, kind `cpu-native`; keyed by the source, the flags,
the compiler binary and the CPU, as it is built for this CPU's instructions). Without a
compiler, or with GOLDY_CPU_NATIVE=0, `accumulate` keeps its numpy path: the same bits,
slower. A compiler whose f32 arithmetic keeps excess precision (x87's FLT_EVAL_METHOD 2;
0, 16 and 32 evaluate float as float) fails the build on purpose, with the same result."""

from __future__ import annotations

import logging
import os
import platform
import threading
from typing import Any, Optional

import numpy as np

from goldy_import import cache
from goldy_import.envflag import env_flag

_log = logging.getLogger("goldy_import.cpu.native")

SOURCE = r"""
#include <float.h>
/* float evaluated as float: 0, or 16 / 32 (only narrower types widened, C23), not x87's 2 */
#if !defined(FLT_EVAL_METHOD) || !(FLT_EVAL_METHOD == 0 || FLT_EVAL_METHOD == 16 || FLT_EVAL_METHOD == 32)
#error "f32 arithmetic with excess precision (x87): numpy's path runs instead"
#endif
/* out[l] = out[l] + t(j, l) for j = 0 .. k-1 in order, t = x (op 0), x * y (1), x + y (2)
   or x - y (3), x(j, l) = x[j * xj + l * xl] (strides in elements, 0 broadcasts): each
   operation one f32 rounding. Four iterations at a time keep a lane's sum in a register
   (its adds still in order). Lanes go in blocks: wide where the operands are contiguous
   along the lanes (out stays in L2 while a row streams by), narrow where one is strided
   (each lane's run stays in L1 across j). */
#define T(A, B, L) (op == 0 ? (A)[(L) * xl] : op == 1 ? (A)[(L) * xl] * (B)[(L) * yl] : \
                    op == 2 ? (A)[(L) * xl] + (B)[(L) * yl] : (A)[(L) * xl] - (B)[(L) * yl])
#define BODY                                                                              \
    for (long j = 0; j < k; j += 4) {                                                     \
        const float *a0 = x + j * xj + l0 * xl, *b0 = y + j * yj + l0 * yl;               \
        if (j + 4 <= k) {                                                                 \
            const float *a1 = a0 + xj, *a2 = a1 + xj, *a3 = a2 + xj;                      \
            const float *b1 = b0 + yj, *b2 = b1 + yj, *b3 = b2 + yj;                      \
            for (long l = 0; l < n; l++)                                                  \
                o[l] = (((o[l] + T(a0, b0, l)) + T(a1, b1, l)) + T(a2, b2, l)) + T(a3, b3, l); \
        } else {                                                                          \
            for (long jj = j; jj < k; jj++, a0 += xj, b0 += yj)                           \
                for (long l = 0; l < n; l++) o[l] = o[l] + T(a0, b0, l);                  \
        }                                                                                 \
    }

/* one copy of the loops per (op, stride) case the compiler can vectorise, a generic one */
#define CASE(OP, XL, YL)                                                                  \
    static void run_##OP##_##XL##_##YL(float *restrict out, long lanes, long k, const float *x, long xj, \
                                       const float *y, long yj, long block) {            \
        const int op = OP; const long xl = XL, yl = YL;                                   \
        for (long l0 = 0; l0 < lanes; l0 += block) {                                      \
            long n = lanes - l0 < block ? lanes - l0 : block;                             \
            float *restrict o = out + l0;                                                 \
            BODY                                                                          \
        }                                                                                 \
    }
CASE(0, 1, 0) CASE(1, 1, 0) CASE(2, 1, 0) CASE(3, 1, 0)
CASE(1, 1, 1) CASE(2, 1, 1) CASE(3, 1, 1)

static void run_any(float *restrict out, long lanes, long k, const float *x, long xj, long xl, int op,
                    const float *y, long yj, long yl, long block) {
    for (long l0 = 0; l0 < lanes; l0 += block) {
        long n = lanes - l0 < block ? lanes - l0 : block;
        float *restrict o = out + l0;
        BODY
    }
}

void goldy_accumulate(float *restrict out, long lanes, long k, const float *x, long xj, long xl,
                      int op, const float *y, long yj, long yl) {
    long block = (xl > 1 || yl > 1) ? 16 : 32768;
    if (xl == 1 && (yl == 0 || op == 0)) {
        switch (op) {
        case 0: run_0_1_0(out, lanes, k, x, xj, y, yj, block); return;
        case 1: run_1_1_0(out, lanes, k, x, xj, y, yj, block); return;
        case 2: run_2_1_0(out, lanes, k, x, xj, y, yj, block); return;
        case 3: run_3_1_0(out, lanes, k, x, xj, y, yj, block); return;
        }
    } else if (xl == 1 && yl == 1) {
        switch (op) {
        case 1: run_1_1_1(out, lanes, k, x, xj, y, yj, block); return;
        case 2: run_2_1_1(out, lanes, k, x, xj, y, yj, block); return;
        case 3: run_3_1_1(out, lanes, k, x, xj, y, yj, block); return;
        }
    }
    run_any(out, lanes, k, x, xj, xl, op, y, yj, yl, block);
}
"""
FLAGS = ("-O3", "-march=native", "-fPIC", "-shared", "-ffp-contract=off", "-fno-fast-math", "-fno-math-errno")
OPS = {np.multiply: 1, np.add: 2, np.subtract: 3}  # the term ufuncs of loops.TERM_UFUNCS

_lock = threading.RLock()  # library() and one_thread()
_lib: Any = None  # the ctypes.CDLL
_tried = False


def library() -> Any:
    """The compiled helper, built or read from the disk cache on first use; None where
    there is no C compiler (or GOLDY_CPU_NATIVE=0)."""
    global _lib, _tried
    if _tried:
        return _lib
    with _lock:
        if not _tried:
            _lib = _load() if env_flag("GOLDY_CPU_NATIVE", True) else None
            _tried = True
    return _lib


def _compiler() -> Optional[str]:
    import shutil
    return shutil.which(os.environ.get("CC") or "cc")


def _processor() -> str:
    """What `-march=native` builds for: the machine, the CPU model and its feature flags
    (a cache directory shared between machines never serves another CPU's build)."""
    ident = [platform.machine(), platform.processor()]
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(("model name", "flags", "Features", "CPU part")):
                    ident.append(line.strip())
                elif not line.strip():
                    break  # the first processor's lines
    except OSError:
        pass
    return "\n".join(ident)


def _load() -> Any:
    lib = build(SOURCE)
    if lib is not None:
        import ctypes
        fn = lib.goldy_accumulate
        L, P = ctypes.c_long, ctypes.c_void_p
        fn.argtypes = [P, L, L, P, L, L, ctypes.c_int, P, L, L]
        fn.restype = None
    return lib


def build(source: str) -> Any:
    """`source` built into a shared library and loaded (a ctypes.CDLL), from the disk cache
    where this machine built it before; None without a compiler, or where it fails (a
    failed build is never cached)."""
    import ctypes  # only a process that runs compiled CPU code needs these
    import subprocess
    import tempfile
    cc = _compiler()
    if cc is None:
        _log.debug("no C compiler: the CPU backend stays in numpy")
        return None
    st = os.stat(cc)
    k = cache.key("cpu-native", [source, " ".join(FLAGS), os.path.realpath(cc), st.st_size, st.st_mtime_ns,
                                 _processor()])
    so = cache.get("cpu-native", k)
    with tempfile.TemporaryDirectory(prefix="goldy-native-") as tmp:
        path = os.path.join(tmp, "goldy_native.so")
        if so is None:
            src = os.path.join(tmp, "goldy_native.c")
            with open(src, "w") as f:
                f.write(source)
            try:
                subprocess.run([cc, *FLAGS, "-o", path, src], check=True, capture_output=True, timeout=120)
            except (OSError, subprocess.SubprocessError) as e:
                err = getattr(e, "stderr", b"") or b""  # a compiler that fails is worth saying: it costs speed
                _log.warning("goldy_import: the cpu backend's C build failed with %s (it runs numpy instead): %s %s",
                             cc, e, err.decode(errors="replace")[:2000])
                return None
            with open(path, "rb") as f:
                so = f.read()
            cache.put("cpu-native", k, so)
        else:
            with open(path, "wb") as f:
                f.write(so)
        try:
            return ctypes.CDLL(path)  # mapped: the file may go with the directory
        except OSError as e:
            _log.debug("cannot load %s: %s", path, e)
            return None


def _strides(a: np.ndarray, count: int, lanes: tuple) -> Optional[tuple]:
    """(j stride, lane stride) in elements of a 3-D (count or 1, h, s) f32 operand over the
    (H, S) lanes, or None where one lane stride cannot walk them (a (1, S) row repeated per
    workgroup, a negative or unaligned stride)."""
    if a.dtype != np.float32 or a.ndim != 3 or a.shape[0] not in (1, count):
        return None
    H, S = lanes
    _, h, s = a.shape
    sj = a.strides[0] if a.shape[0] > 1 else 0
    if h == 1 and s == 1:
        sl = 0
    elif h == H and s == S:
        if h > 1 and s > 1 and a.strides[1] != s * a.strides[2]:
            return None
        sl = a.strides[2] if s > 1 else a.strides[1]
    else:
        return None
    if sj < 0 or sl < 0 or sj % 4 or sl % 4:
        return None
    return sj // 4, sl // 4


def accumulate(acc, count: int, parts: list, op, lanes: tuple) -> Optional[np.ndarray]:
    """loops.accumulate's result computed by the C helper, or None where it cannot take
    these operands (`parts`: 3-D arrays, loops.Span's rows already taken)."""
    lib = library()
    if lib is None or (op is not None and op not in OPS):
        return None
    xs = _strides(parts[0], count, lanes)
    ys = (0, 0) if op is None else _strides(parts[1], count, lanes)
    if xs is None or ys is None:
        return None
    out = np.empty(lanes, np.float32)
    out[...] = acc  # the sums so far (a scalar, or per lane)
    y = parts[0] if op is None else parts[1]
    o, x, yp, code = out.ctypes.data, parts[0].ctypes.data, y.ctypes.data, 0 if op is None else OPS[op]
    size = out.size
    halves = _helpers() if size * count >= SPLIT_TERMS and size >= 2 * 64 else None
    if halves is None:
        lib.goldy_accumulate(o, size, count, x, xs[0], xs[1], code, yp, ys[0], ys[1])
        return out
    # lanes are independent: the second half on a helper thread (ctypes lets the GIL go)
    h = size // 2 // 16 * 16
    other = halves.submit(lib.goldy_accumulate, o + 4 * h, size - h, count, x + 4 * h * xs[1], xs[0], xs[1], code,
                          yp + 4 * h * ys[1], ys[0], ys[1])
    lib.goldy_accumulate(o, h, count, x, xs[0], xs[1], code, yp, ys[0], ys[1])
    other.result()
    return out


SPLIT_TERMS = 1 << 21  # terms from which a sum is worth a second core (a handoff costs ~20 us)
_threads: dict = {}  # name -> (executor, the pid it was made in)


def one_thread(name: str) -> Any:
    """This process's single-thread executor called `name` (made on first use; a forked
    child makes its own, as the parent's thread does not run there)."""
    hit = _threads.get(name)
    if hit is None or hit[1] != os.getpid():
        with _lock:
            hit = _threads.get(name)
            if hit is None or hit[1] != os.getpid():
                from concurrent.futures import ThreadPoolExecutor
                hit = _threads[name] = (ThreadPoolExecutor(1, thread_name_prefix=f"goldy-{name}"), os.getpid())
    return hit[0]


def _helpers() -> Any:
    """The sums' helper thread where the machine has a second core, else None."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return one_thread("cpu-sum") if cores > 1 else None
