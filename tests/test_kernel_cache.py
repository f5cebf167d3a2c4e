"""The disk cache of compiled kernels (`tawa_xdsl.kernel_cache`) as the
dispatcher uses it: a second process (a fresh `Dispatcher`) reuses the PTX
without running the pipeline; corrupt, foreign or stale entries are misses
that get rewritten; a cache that cannot be written costs a warning."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tawa_xdsl
from tawa_xdsl import kernel_cache
from tawa_xdsl.compiler import CompileOptions
from tawa_xdsl.dispatch import Device, Dispatcher
from tawa_xdsl.dtypes import bfloat16
from tawa_xdsl.kernel_cache import CACHE_ENV, LAYOUT, DiskCache, cache_dir

from .conftest import example_module

TEXT = str(example_module("gemm.mlir", "gemm_nt"))
ARGS = [np.zeros(s, bfloat16) for s in ((64, 256), (1024, 256), (64, 1024))]


@pytest.fixture
def cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    return tmp_path


def fresh() -> Dispatcher:
    """What a new process makes of compile(): nothing in memory."""
    return Dispatcher(TEXT, "gemm_nt", CompileOptions())


def entries(cache: Path) -> list[Path]:
    return sorted((cache / LAYOUT / "ptx").glob("*.json"))


def test_a_new_process_reuses_the_ptx(cache: Path, lowerings: list[Any]) -> None:
    first = fresh().specialize(*ARGS)
    assert len(lowerings) == 1 and first.origin == "rules, compiled"
    (entry,) = entries(cache)
    second = fresh()
    spec = second.specialize(*ARGS)
    assert len(lowerings) == 1 and spec.origin == "rules, disk cache"
    assert spec.ptx == first.ptx and spec.options == first.options
    assert spec.kernel.threads == first.kernel.threads
    assert spec.kernel.params == first.kernel.params
    assert spec.kernel.contract == first.kernel.contract  # the whole contract
    # a kernel read back is not loaded yet and keeps the dispatcher's settings
    # (a positional slip once handed allow_spills over as the CUDA function)
    assert spec.kernel._function is None and spec.kernel.num_regs == 0
    assert spec.kernel.options == first.kernel.options
    spilling = Dispatcher(TEXT, "gemm_nt", CompileOptions(), allow_spills=True)
    assert spilling.specialize(*ARGS).kernel.allow_spills
    assert "(rules, disk cache)" in second.explain()
    stored = json.loads(entry.read_text())
    assert stored["key"]["options"] == first.options
    # the record, not IR: the PTX, the contract as data, the options
    assert set(stored["value"]) == {"name", "ptx", "contract", "options"}
    assert "func.func" not in json.dumps(stored["value"])
    assert set(stored["key"]) == {
        "ir", "kernel", "options", "gpu", "driver", "package", "compiler"
    }  # fmt: skip


@pytest.mark.parametrize(
    "damage",
    [
        lambda text: text[: len(text) // 2],  # a torn write
        lambda text: "not json",
        lambda text: json.dumps(
            {"key": {"other": 1}, "value": json.loads(text)["value"]}
        ),
        lambda text: json.dumps(
            {"key": json.loads(text)["key"], "value": {"ptx": 1, "record": "x"}}
        ),
        lambda text: json.dumps(
            {
                "key": json.loads(text)["key"],
                "value": {**json.loads(text)["value"], "contract": {"abi": "junk"}},
            }
        ),
        lambda text: text.replace("tensor_map", "tensor_mop"),  # a type no more
    ],
    ids=["torn", "garbage", "other-key", "ill-typed", "bad-contract", "bad-type"],
)
def test_a_damaged_entry_is_compiled_again_and_rewritten(
    cache: Path, lowerings: list[Any], damage
) -> None:
    ptx = fresh().specialize(*ARGS).ptx
    (entry,) = entries(cache)
    entry.write_text(damage(entry.read_text()))
    spec = fresh().specialize(*ARGS)
    assert len(lowerings) == 2 and spec.origin == "rules, compiled"
    assert spec.ptx == ptx
    assert json.loads(entry.read_text())["value"]["ptx"] == ptx  # rewritten
    assert fresh().specialize(*ARGS).origin == "rules, disk cache"


def test_other_options_are_other_entries(cache: Path, lowerings: list[Any]) -> None:
    fresh().specialize(*ARGS)
    Dispatcher(TEXT, "gemm_nt", CompileOptions(num_stages=3)).specialize(*ARGS)
    assert len(entries(cache)) == 2 and len(lowerings) == 2


@pytest.mark.parametrize(
    "change",
    [
        lambda m: m.setattr(
            Device, "current", staticmethod(lambda: Device("NVIDIA H200", "none", 132))
        ),
        lambda m: m.setattr(
            Device, "current", staticmethod(lambda: Device("none", "12080", 132))
        ),
        lambda m: m.setattr(tawa_xdsl, "__version__", "0.0.0+other"),
        lambda m: m.setattr(kernel_cache, "compiler_fingerprint", lambda: "edited"),
    ],
    ids=["gpu", "driver", "package", "compiler"],
)
def test_another_machine_or_build_is_another_entry(
    monkeypatch: pytest.MonkeyPatch, cache: Path, lowerings: list[Any], change
) -> None:
    """A record compiled for another GPU, driver, package version or compiler
    source is not reused (the key names them; this checks that each reaches
    the lookup)."""
    fresh().specialize(*ARGS)
    change(monkeypatch)
    assert fresh().specialize(*ARGS).origin == "rules, compiled"
    assert len(entries(cache)) == 2 and len(lowerings) == 2


def test_another_kernel_text_is_another_entry(
    cache: Path, lowerings: list[Any]
) -> None:
    fresh().specialize(*ARGS)
    other = TEXT.replace("%zero", "%nought")  # the same kernel, other IR text
    assert Dispatcher(other, "gemm_nt", CompileOptions()).specialize(*ARGS).origin == (
        "rules, compiled"
    )
    assert len(entries(cache)) == 2


def test_an_unwritable_cache_warns(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, lowerings: list[Any]
) -> None:
    (tmp_path / "file").write_text("")
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "file" / "cache"))
    with pytest.warns(UserWarning, match="cannot write the kernel cache"):
        spec = fresh().specialize(*ARGS)
    assert spec.origin == "rules, compiled"


def test_concurrent_writers_leave_one_whole_entry(tmp_path: Path) -> None:
    """Each writer renames a whole temporary file over the entry."""
    cache = DiskCache("ptx", tmp_path)
    key = {"k": 1}
    value = {"ptx": "x" * 100_000}
    threads = [
        threading.Thread(target=cache.store, args=(key, value)) for _ in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert cache.load(key, lambda v: v) == value
    assert [p.name for p in cache.directory.iterdir()] == [cache.path(key).name]


def test_a_write_that_fails_leaves_no_temporary_file(tmp_path: Path) -> None:
    """A value JSON cannot hold is our bug (raised), but the half-written
    temporary file no longer stays in the cache's directory."""
    cache = DiskCache("tuned", tmp_path)
    with pytest.raises(TypeError, match="not JSON serializable"):
        cache.store({"k": 1}, {"ms": np.float32(1.5)})
    assert list(cache.directory.iterdir()) == []


def test_where_the_cache_lives(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_ENV, "/x/tawa")
    assert cache_dir() == Path("/x/tawa")
    monkeypatch.delenv(CACHE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", "/y")
    assert cache_dir() == Path("/y/tawa-xdsl")
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache_dir() == Path.home() / ".cache" / "tawa-xdsl"
