"""Repeated calls of a compiled kernel, launched again without converting them.

Converting a call (each array's DLPack export, the argument checks, the
dispatch key, the TMA tensor maps encoded) costs a few hundred microseconds of
host time, longer than most GEMMs run, so a loop of plain calls would wait on
the host. What a call launches is a function of each array's address, shape,
strides, dtype and device, of the scalars, the grid and the stream: a call
that repeats all of those launches what the first such call launched.

`call_signature` reads those off the arguments, for calls whose arrays are
all on the GPU and either torch tensors (a few attribute lookups) or arrays
with `__cuda_array_interface__` (cupy, numba: the interface's dictionary);
anything else (host arrays, whose contents are copied per call, or arrays
read only through DLPack, such as JAX's) has no signature and is converted
every call. The cache keeps what was launched (packed parameters: addresses
and encoded tensor maps, and the dispatcher's own buffers), never the caller's
arrays: an entry is only used by a call that passes live arrays at those
addresses.

A DLPack export also orders the producer's pending work before the launch
stream (torch and cupy make the launch stream wait on their current stream).
A call is therefore only served from the cache when that ordering holds
without a wait: torch's current stream is the launch stream, and an
interface array names the launch stream (or none) as the stream its work is
on.
"""

from __future__ import annotations

import sys
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

CAPACITY = 256
"""Entries kept (least recently used dropped first): enough for a model's
layers to keep theirs across iterations; each entry is a few hundred bytes."""

SCALARS = (bool, int)


def _tensor_signature(value: Any, torch: Any) -> tuple[Hashable, ...] | None:
    """What the conversion reads off a torch tensor; None for one on the host
    (copied per call) or one DLPack may refuse (autograd, lazy conj/neg)."""
    if not value.is_cuda or value.requires_grad or value.is_conj() or value.is_neg():
        return None
    if value.layout is not torch.strided:
        return None
    return (
        type(value),
        value.data_ptr(),
        tuple(value.shape),
        value.stride(),
        value.dtype,
        value.device.index,
    )


LEGACY_STREAMS = (0, 1)
"""The legacy default stream: 0 for the driver, 1 in `__cuda_array_interface__`
(where 0 is not allowed)."""


def _interface_signature(value: Any, stream: int) -> tuple[Hashable, ...] | None:
    """What the conversion reads off an array with `__cuda_array_interface__`;
    None for a masked one, one the interface refuses, or one whose work is on
    another stream than the launch's (the export would order it first)."""
    try:
        cai = value.__cuda_array_interface__
        ptr, read_only = cai["data"]
        on = cai.get("stream")
        signature = (
            type(value),
            int(ptr or 0),
            tuple(cai["shape"]),
            None if cai.get("strides") is None else tuple(cai["strides"]),
            cai["typestr"],
            bool(read_only),
        )
    except Exception:  # the conversion reports it, every call
        return None
    if cai.get("mask") is not None:
        return None
    legacy = on in LEGACY_STREAMS and stream in LEGACY_STREAMS
    if on is not None and on != stream and not legacy:
        return None
    return signature


def call_signature(
    args: Sequence[Any], grid: Any, stream: Any
) -> tuple[Hashable, ...] | None:
    """The key of a call in the cache, or None when the call must be converted
    (see the module docstring)."""
    if not isinstance(stream, int) or isinstance(stream, bool):
        return None
    torch = sys.modules.get("torch")
    key: list[Hashable] = [stream]
    devices: set[int] = set()
    arrays = 0
    for value in args:
        if torch is not None and isinstance(value, torch.Tensor):
            sig = _tensor_signature(value, torch)
            if sig is None:
                return None
            devices.add(value.device.index)
            key.append(sig)
            arrays += 1
        elif hasattr(type(value), "__cuda_array_interface__"):
            sig = _interface_signature(value, stream)
            if sig is None:
                return None
            key.append(sig)
            arrays += 1
        elif type(value) is float:  # by its bits: -0.0 is not 0.0
            key.append((float, value.hex()))
        elif type(value) in SCALARS:  # exactly: 1 and True differ
            key.append((type(value), value))
        else:
            return None
    if not arrays:  # nothing is read through DLPack either
        return None
    for device in devices:  # the export's ordering holds without a wait
        if torch.cuda.current_stream(device).cuda_stream != stream:
            return None
    if grid is not None:
        if isinstance(grid, list):
            grid = tuple(grid)
        if not isinstance(grid, int | tuple) or isinstance(grid, bool):
            return None
        key.append(("grid", grid))
    try:
        hash(tuple(key))
    except TypeError:  # a grid of unhashable entries: the launch refuses it
        return None
    return tuple(key)


@dataclass(frozen=True)
class CachedCall:
    """What a call launched: its steps (`detached`: holding none of the
    caller's arrays), the specialization that ran, and when it launched
    nothing, the empty outputs (`Dispatcher.last_empty`)."""

    launch: Callable[[], None]
    spec: Any
    empty: str | None


class CallCache:
    """Calls by `call_signature`, least recently used dropped past `capacity`."""

    def __init__(self, capacity: int = CAPACITY) -> None:
        self.capacity = capacity
        self._entries: OrderedDict[tuple[Hashable, ...], CachedCall] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: tuple[Hashable, ...]) -> CachedCall | None:
        entry = self._entries.get(key)
        if entry is not None:
            self._entries.move_to_end(key)
        return entry

    def put(self, key: tuple[Hashable, ...], entry: CachedCall) -> None:
        self._entries[key] = entry
        self._entries.move_to_end(key)
        while len(self._entries) > self.capacity:
            self._entries.popitem(last=False)

    def clear(self) -> None:
        """Forget every call (a buffer their launches point into was replaced)."""
        self._entries.clear()


__all__ = ["CAPACITY", "CachedCall", "CallCache", "call_signature"]
