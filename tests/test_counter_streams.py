"""A kernel that takes its tiles from the module's counter
(`persistent{dynamic=true}`) must not run twice at once: the runtime orders a
launch on another stream after the last launch (`Kernel.counts_tiles`). The
driver calls are checked here against a stand-in for cuda-python; the GPU test
is tests/gpu/test_dynamic_tiles_gpu.py."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from tawa_xdsl.runtime import kernel as runtime
from tawa_xdsl.runtime.kernel import Kernel, Packed


class Driver:
    """The cuda-python calls `Kernel._launch` makes, recorded in order."""

    CUevent_flags = SimpleNamespace(CU_EVENT_DISABLE_TIMING=2)

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def cuEventCreate(self, flags: int) -> tuple[int, str]:
        self.calls.append(("create", flags))
        return 0, "event"

    def cuStreamWaitEvent(self, stream: int, event: str, flags: int) -> tuple[int]:
        self.calls.append(("wait", stream))
        return (0,)

    def cuEventRecord(self, event: str, stream: int) -> tuple[int]:
        self.calls.append(("record", stream))
        return (0,)

    def cuLaunchKernel(self, function: str, *args: Any) -> tuple[int]:
        self.calls.append(("launch", args[7]))  # grid, block, smem, then stream
        return (0,)


@pytest.fixture
def driver(monkeypatch: pytest.MonkeyPatch) -> Driver:
    cu = Driver()
    monkeypatch.setattr(runtime, "context", lambda: (cu, None))
    monkeypatch.setattr(
        runtime, "check", lambda result, what: (result[1:] or [None])[0]
    )
    return cu


def kernel(dynamic: bool) -> Kernel:
    launch = SimpleNamespace(threads=384, smem=1024, cluster=1)
    compiled = SimpleNamespace(
        name="k",
        options={"dynamic_tiles": dynamic},
        contract=SimpleNamespace(split=None, launch=launch),
    )
    k = Kernel(compiled)  # type: ignore[arg-type]
    k.load = lambda: "function"  # type: ignore[method-assign]
    return k


def test_a_launch_on_another_stream_waits_for_the_last(driver: Driver) -> None:
    k = kernel(dynamic=True)
    for stream in (1, 1, 2, 2, 1):
        k._launch((132, 1, 1), Packed(), stream)
    events = [c for c in driver.calls if c[0] == "create"]
    assert len(events) == 1
    rest = [c for c in driver.calls if c[0] != "create"]
    assert rest == [
        ("launch", 1), ("record", 1),
        ("launch", 1), ("record", 1),
        ("wait", 2), ("launch", 2), ("record", 2),
        ("launch", 2), ("record", 2),
        ("wait", 1), ("launch", 1), ("record", 1),
    ]  # fmt: skip


def test_a_kernel_without_the_counter_launches_alone(driver: Driver) -> None:
    k = kernel(dynamic=False)
    for stream in (1, 2, 1):
        k._launch((132, 1, 1), Packed(), stream)
    assert driver.calls == [("launch", 1), ("launch", 2), ("launch", 1)]
