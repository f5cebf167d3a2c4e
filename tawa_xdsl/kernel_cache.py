"""The on-disk cache of compiled kernels and autotuning results, so a second
process launches without compiling or searching.

Layout (`cache_dir()`: `$TAWA_XDSL_CACHE_DIR`, else `$XDG_CACHE_HOME/tawa-xdsl`,
else `~/.cache/tawa-xdsl`):

    v2/ptx/<sha256>.json    {"key": {...}, "value": <a CompiledKernel as JSON>}
    v2/tuned/<sha256>.json  {"key": {...}, "value": {"options": ..., "timings": ...}}

An entry's file name is the SHA-256 of its key (canonical JSON); the key is
stored whole beside the value and compared on load, so a hash collision or an
entry of another format reads as a miss. A `ptx` entry is keyed by the tile
kernel's IR, the resolved options, the GPU's name, the driver's version, the
package's version and a fingerprint of the compiler's sources (an editable
install changes the code without changing the version); its value is the
compiled-kernel record (`compiled.CompiledKernel.to_json`: the PTX, the launch
contract and the options; no IR), all `runtime.Kernel` reads to launch. A `tuned`
entry is keyed by the same facts with the caller's options and the dispatch
key in place of the resolved options; its value is the winning options and
the timings of every candidate.

Writers write a temporary file in the entry's directory and rename it over the
entry (atomic on POSIX), so concurrent processes never see half an entry; the
last one wins, and all write the same value. An entry that cannot be read or
does not hold what its kind needs is a miss (the caller compiles and writes it
anew); a cache directory that cannot be written costs a warning, never a
failure.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

CACHE_ENV = "TAWA_XDSL_CACHE_DIR"
"""Overrides where the cache lives."""

LAYOUT = "v2"
"""Bumped when the entries' layout changes: old entries are then never read."""

T = TypeVar("T")


def cache_dir() -> Path:
    """Where the cache lives (see the module docstring)."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "tawa-xdsl"


@functools.cache
def compiler_fingerprint() -> str:
    """A hash of the sources of every package that turns tile IR into PTX."""
    import tawa_xdsl
    import tawa_xdsl.dialects
    import tawa_xdsl.lowering
    import tawa_xdsl.transforms

    digest = hashlib.sha256()
    for package in (
        tawa_xdsl,
        tawa_xdsl.dialects,
        tawa_xdsl.transforms,
        tawa_xdsl.lowering,
    ):
        root = Path(package.__file__).parent
        for path in sorted(root.rglob("*.py")):
            digest.update(str(path.relative_to(root)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _canonical(key: Mapping[str, Any]) -> str:
    return json.dumps(key, sort_keys=True, separators=(",", ":"))


class DiskCache:
    """Entries of one kind ("ptx", "tuned") under `root`."""

    def __init__(self, kind: str, root: Path | None = None) -> None:
        self.directory = (root or cache_dir()) / LAYOUT / kind

    def path(self, key: Mapping[str, Any]) -> Path:
        name = hashlib.sha256(_canonical(key).encode()).hexdigest()
        return self.directory / f"{name}.json"

    def load(
        self, key: Mapping[str, Any], read: Callable[[Mapping[str, Any]], T]
    ) -> T | None:
        """`read(value)` of the entry for `key`, or None when there is none or it
        is unreadable, of another key, or refused by `read`. Whatever `read`
        raises is a miss: an entry of an older compiler may fail in ways of the
        reader's own (a record of a contract that no longer reads), and the caller
        then compiles and rewrites it."""
        try:
            entry = json.loads(self.path(key).read_text())
            if _canonical(entry["key"]) != _canonical(key):
                return None
            return read(entry["value"])
        except Exception:  # a cache miss, never a failure
            return None

    def store(self, key: Mapping[str, Any], value: Mapping[str, Any]) -> None:
        """Write the entry atomically (a temporary file renamed over it). The
        temporary file goes whatever stops the write: a value JSON cannot hold
        (a bug of ours, raised) left it behind."""
        path = self.path(key)
        temporary: Path | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, name = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
            temporary = Path(name)
            with os.fdopen(fd, "w") as f:
                json.dump({"key": key, "value": value}, f)
            os.replace(temporary, path)
            temporary = None
        except OSError as e:
            warnings.warn(
                f"tawa-xdsl: cannot write the kernel cache at {path.parent} ({e}); "
                f"set {CACHE_ENV} to a writable directory",
                stacklevel=2,
            )
        finally:
            if temporary is not None:
                temporary.unlink(missing_ok=True)
