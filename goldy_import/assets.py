"""A manifest of `.kir.json` assets and their drift guard (`goldy-import assets check|regen`).

The manifest (TOML, or JSON with the same keys) lists every asset: the Rust source, the
kernel and the destination file, as paths relative to `root` (the manifest's directory
unless it says otherwise):

    root = ".."
    [[asset]]
    source = "rust_examples/saxpy.rs"
    kernel = "saxpy"
    dest = "rust_examples/kir/saxpy.kir.json"

`check` regenerates every asset from its source and reports each one whose bytes differ
or that is missing, and every file in a destination directory the manifest does not list.
`regen` writes the assets that differ and deletes unlisted `.kir.json` files there. An
asset is imported with its source path as written, so the bytes never depend on the
working directory.
"""

from __future__ import annotations

import json
import os
import tomllib
from dataclasses import dataclass
from goldy_import.errors import GoldyError

from .kir import SUFFIX, kir_text

ASSET_KEYS = {"source", "kernel", "dest"}


class ManifestError(GoldyError):
    """The manifest cannot be read or is malformed."""


@dataclass(frozen=True)
class Asset:
    source: str
    kernel: str
    dest: str


@dataclass
class Manifest:
    path: str
    root: str  # absolute directory the asset paths are relative to
    assets: list[Asset]

    def abs(self, rel: str) -> str:
        return os.path.join(self.root, rel)

    def dest_dirs(self) -> list[str]:
        return sorted({os.path.dirname(a.dest) for a in self.assets})


@dataclass
class Problem:
    kind: str  # "stale" | "missing" | "unlisted" | "source"
    path: str  # relative to the root
    detail: str = ""

    def render(self) -> str:
        return f"error: {self.path}: {self.detail}" if self.detail else f"error: {self.path}"


def read_manifest(path: str) -> Manifest:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise ManifestError(f"cannot read {path}: {e.strerror or e}") from None
    try:
        doc = json.loads(data) if path.endswith(".json") else tomllib.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise ManifestError(f"{path}: not a valid {'JSON' if path.endswith('.json') else 'TOML'} manifest: {e}") from None
    if not isinstance(doc, dict) or set(doc) - {"root", "asset"}:
        raise ManifestError(f"{path}: a manifest holds `root` and `[[asset]]` tables only")
    root = doc.get("root", ".")
    entries = doc.get("asset", [])
    if not isinstance(root, str) or not isinstance(entries, list):
        raise ManifestError(f"{path}: `root` is a path and `asset` a list of tables")
    assets: list[Asset] = []
    seen: set[str] = set()
    for n, entry in enumerate(entries, 1):
        if not isinstance(entry, dict) or set(entry) != ASSET_KEYS or not all(isinstance(v, str) for v in entry.values()):
            raise ManifestError(f"{path}: asset {n} needs exactly the string keys source, kernel, dest")
        a = Asset(entry["source"], entry["kernel"], os.path.normpath(entry["dest"]))
        if os.path.isabs(a.source) or os.path.isabs(a.dest) or not a.dest.endswith(SUFFIX):
            raise ManifestError(f"{path}: asset {n}: source and dest are relative paths, dest ends in {SUFFIX}")
        if a.dest in seen:
            raise ManifestError(f"{path}: {a.dest} is listed twice")
        seen.add(a.dest)
        assets.append(a)
    base = os.path.dirname(os.path.abspath(path))
    return Manifest(path, os.path.normpath(os.path.join(base, root)), assets)


def render_assets(m: Manifest) -> tuple[dict[str, str], list[Problem]]:
    """dest -> the asset's bytes regenerated from its source, and the sources that fail."""
    from goldy_import.importer import import_source

    results: dict = {}
    out: dict[str, str] = {}
    problems: list[Problem] = []
    for a in m.assets:
        if a.source not in results:
            try:
                with open(m.abs(a.source), "rb") as f:
                    results[a.source] = import_source(f.read(), a.source)
            except OSError as e:
                results[a.source] = None
                problems.append(Problem("source", a.source, f"cannot read the source: {e.strerror or e}"))
            else:
                if results[a.source].errors:
                    problems.append(Problem("source", a.source, "the source has errors\n\n" + results[a.source].render()))
        result = results[a.source]
        if result is None or result.errors:
            continue
        kernel = result.kernel(a.kernel)
        if kernel is None:
            have = ", ".join(k.name for k in result.kernels) or "none"
            problems.append(Problem("source", a.dest, f"no kernel `{a.kernel}` in {a.source} (kernels: {have})"))
            continue
        out[a.dest] = kir_text(kernel)
    return out, problems


def _first_difference(old: str, new: str) -> str:
    for n, (x, y) in enumerate(zip(old.splitlines(), new.splitlines()), 1):
        if x != y:
            return f"line {n}: committed `{x.strip()[:80]}`, regenerated `{y.strip()[:80]}`"
    return f"the committed file has {len(old.splitlines())} lines, the regenerated {len(new.splitlines())}"


def unlisted(m: Manifest) -> list[str]:
    listed = {a.dest for a in m.assets}
    extra = []
    for d in m.dest_dirs():
        if os.path.isdir(m.abs(d)):
            extra += [os.path.join(d, f) for f in sorted(os.listdir(m.abs(d))) if os.path.join(d, f) not in listed]
    return extra


def check(m: Manifest) -> list[Problem]:
    fresh, problems = render_assets(m)
    for dest, text in fresh.items():
        try:
            with open(m.abs(dest), "rb") as f:
                committed = f.read()
        except OSError:
            problems.append(Problem("missing", dest, "missing"))
            continue
        if committed != text.encode("utf-8"):
            problems.append(Problem("stale", dest, "differs from its source: "
                                    + _first_difference(committed.decode("utf-8", "replace"), text)))
    problems += [Problem("unlisted", p, f"not listed in {m.path}") for p in unlisted(m)]
    return problems


def regen(m: Manifest) -> tuple[list[str], list[Problem]]:
    """Write every asset that differs, delete unlisted assets; returns what changed and what
    is still wrong (sources with errors, unlisted files that are not assets)."""
    fresh, problems = render_assets(m)
    changed = []
    for dest, text in fresh.items():
        path = m.abs(dest)
        try:
            with open(path, "rb") as f:
                if f.read() == text.encode("utf-8"):
                    continue
        except OSError:
            pass
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(path, "wb") as f:
            f.write(text.encode("utf-8"))
        changed.append(f"wrote {dest}")
    for p in unlisted(m):
        if p.endswith(SUFFIX) and os.path.isfile(m.abs(p)):
            os.remove(m.abs(p))
            changed.append(f"removed {p} (not in the manifest)")
        else:
            problems.append(Problem("unlisted", p, f"not listed in {m.path}, and not an asset regen may delete"))
    return changed, problems


def main(command: str, manifest_path: str, out=None, err=None) -> int:
    """`goldy-import assets check|regen MANIFEST`: 0 clean, 1 drift or source errors, 2 manifest errors."""
    import sys

    out = out or sys.stdout
    err = err or sys.stderr
    try:
        m = read_manifest(manifest_path)
    except ManifestError as e:
        print(f"error: {e}", file=err)
        return 2
    changed: list[str] = []
    if command == "check":
        problems = check(m)
    else:
        changed, problems = regen(m)
    for line in changed:
        print(line, file=out)
    for p in problems:
        print(p.render(), file=err)
    if problems:
        if command == "check":
            print(f"\nerror: {len(problems)} problem{'s' * (len(problems) != 1)} with the assets of {manifest_path}\n"
                  f"  = help: regenerate them with `goldy-import assets regen {manifest_path}`", file=err)
        return 1
    print(f"{manifest_path}: {len(m.assets)} asset{'s' * (len(m.assets) != 1)} "
          f"{'up to date' if command == 'check' else 'regenerated' if changed else 'already up to date'}", file=out)
    return 0

