"""The C declarations wgpu-py parses, kept in the disk cache across processes.

wgpu-py declares webgpu.h through cffi in ABI mode, and cffi parses C text with pycparser,
in Python, in every process: the whole header at `import wgpu`, then once more for each C
type wgpu-py first names in `ffi.new("WGPU... *")` (each such parse re-reads a preamble of
the header's ~440 typedef names). On the 2-core development VM that was 2.1 s of the 2.6 s
from `python` to the first wgpu result. A parse is a pure function of its text, so its
syntax tree goes to goldy_import/cache.py (kind `cffi-ast`), keyed by the exact text and
the cffi, pycparser and Python versions; a warm process unpickles the trees instead.
cffi has one parser per process, so once this is installed (runtime/wgpu.py's import)
any other library's cffi parses are cached too, by the same exact-text keys.

What is kept of a tree is what cffi reads of it (cffi/cparser.py: `_internal_parse` walks
the declarations after the preamble's first `__dotdotdot__` typedef, `parse_type_and_quals`
takes the last one): the declarations from that typedef on. If cffi's internals are not
what this expects (`_get_parser` gone), nothing is installed and cffi parses as before.
"""

from __future__ import annotations

import logging
import pickle
import sys
import threading
from typing import Any

from goldy_import import cache

KIND = "cffi-ast"
_log = logging.getLogger("goldy_import.cache")
_lock = threading.Lock()
_installed = False


class _CachingParser:
    """Stands in for cffi's pycparser.CParser: `parse(text)` from the cache, else parsed
    and stored. A failed parse raises as before and stores nothing."""

    def __init__(self, real: Any, versions: str):
        self.real, self.versions = real, versions

    def parse(self, text: str, *args: Any, **kwargs: Any) -> Any:
        k = cache.key(KIND, [self.versions, text, repr(args), repr(sorted(kwargs.items()))])
        data = cache.get(KIND, k)
        if data is not None:
            try:
                return pickle.loads(data)
            except Exception as e:  # an entry of another pycparser's classes: parse again, rewrite
                _log.debug("ignoring the unreadable cffi-ast entry %s: %s", k, e)
        ast = self.real.parse(text, *args, **kwargs)
        try:
            cache.put(KIND, k, pickle.dumps(_trimmed(ast), protocol=pickle.HIGHEST_PROTOCOL))
        except Exception as e:  # a tree that does not pickle costs this process nothing
            _log.debug("cannot store a cffi-ast entry: %s", e)
        return ast

    def __getattr__(self, name: str) -> Any:  # anything else cffi may ask of its parser
        return getattr(self.real, name)


def _trimmed(ast: Any) -> Any:
    """A copy of `ast` without the typedef preamble before its first `__dotdotdot__`."""
    ext = getattr(ast, "ext", None)
    if not isinstance(ext, list):
        return ast
    for i, decl in enumerate(ext):
        if getattr(decl, "name", None) == "__dotdotdot__":
            return type(ast)(ext=ext[i:], coord=getattr(ast, "coord", None))
    return ast


def install() -> None:
    """Route cffi's parses through the cache (once per process; nothing with GOLDY_CACHE=0)."""
    global _installed
    with _lock:
        if _installed or not cache.enabled():
            return
        _installed = True
        try:
            import cffi
            import cffi.cparser as cparser
            import pycparser
        except ImportError:
            return
        get = getattr(cparser, "_get_parser", None)
        if get is None:
            return
        versions = f"cffi {cffi.__version__} pycparser {pycparser.__version__} python {sys.version}"
        parser = _CachingParser(get(), versions)
        cparser._get_parser = lambda: parser
