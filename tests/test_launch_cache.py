"""`launch_cache` on a CPU: the signature of a call separates every call whose
conversion could differ (an array's address, shape, strides, dtype or device;
a scalar's type or bits; the grid; the stream) and refuses the calls that must
be converted every time, read through stand-ins for the torch API and the
`__cuda_array_interface__` it uses (the GPU tests run it on torch and cupy);
and the cache's eviction order."""

from __future__ import annotations

import sys
import types
from types import SimpleNamespace

import numpy as np
import pytest

from tawa_xdsl.launch_cache import CachedCall, CallCache, call_signature

STRIDED = object()


class FakeTensor:
    """The attributes of a `torch.Tensor` that `call_signature` reads."""

    def __init__(self, ptr=4096, shape=(4, 8), stride=(8, 1), dtype="bf16", **kw):
        self.ptr, self.shape, self._stride, self.dtype = ptr, shape, stride, dtype
        self.is_cuda = kw.get("cuda", True)
        self.requires_grad = kw.get("grad", False)
        self.layout = kw.get("layout", STRIDED)
        self.device = SimpleNamespace(index=kw.get("device", 0))
        self.conj = kw.get("conj", False)

    def data_ptr(self) -> int:
        return self.ptr

    def stride(self) -> tuple[int, ...]:
        return self._stride

    def is_conj(self) -> bool:
        return self.conj

    def is_neg(self) -> bool:
        return False


class FakeInterfaceArray:
    """An array with `__cuda_array_interface__` (version 3), as cupy has."""

    def __init__(self, ptr=4096, shape=(4, 8), strides=None, typestr="<f2", **kw):
        self.interface = {
            "data": (ptr, kw.get("read_only", False)),
            "shape": shape,
            "strides": strides,
            "typestr": typestr,
            "version": 3,
            "stream": kw.get("stream", 1),
        }
        if "mask" in kw:
            self.interface["mask"] = kw["mask"]

    @property
    def __cuda_array_interface__(self) -> dict:
        return dict(self.interface)


class BrokenInterfaceArray:
    @property
    def __cuda_array_interface__(self) -> dict:
        raise RuntimeError("not on this device")


@pytest.fixture
def torch(monkeypatch: pytest.MonkeyPatch) -> SimpleNamespace:
    """A stand-in `torch` whose current stream is `torch.current` (on every device)."""
    fake = types.ModuleType("torch")
    fake.Tensor, fake.strided, fake.current = FakeTensor, STRIDED, 0
    fake.cuda = SimpleNamespace(
        current_stream=lambda device: SimpleNamespace(cuda_stream=fake.current)
    )
    monkeypatch.setitem(sys.modules, "torch", fake)
    return fake


def test_repeated_calls_share_a_signature(torch) -> None:
    first = call_signature((FakeTensor(), FakeTensor(ptr=8192), 2.5, 3), None, 0)
    again = call_signature((FakeTensor(), FakeTensor(ptr=8192), 2.5, 3), None, 0)
    assert first is not None and first == again and hash(first) == hash(again)
    listed = call_signature((FakeTensor(),), [4, 1], 0)
    assert listed == call_signature((FakeTensor(),), (4, 1), 0)


@pytest.mark.parametrize(
    "other",
    [
        {"ptr": 4098},
        {"shape": (4, 9)},
        {"stride": (16, 1)},
        {"dtype": "f16"},
        {"device": 1},
    ],
    ids=str,
)
def test_any_array_difference_changes_it(torch, other) -> None:
    assert call_signature((FakeTensor(),), None, 0) != call_signature(
        (FakeTensor(**other),), None, 0
    )


@pytest.mark.parametrize(
    ("one", "other"), [(1, True), (1, 1.0), (0.0, -0.0), (2, 3), (0.5, 0.25)]
)
def test_scalars_differ_by_type_and_bits(torch, one, other) -> None:
    assert call_signature((FakeTensor(), one), None, 0) != call_signature(
        (FakeTensor(), other), None, 0
    )


def test_grids_and_streams_are_part_of_it(torch) -> None:
    torch.current = 7
    plain = call_signature((FakeTensor(),), None, 7)
    assert plain is not None
    assert plain != call_signature((FakeTensor(),), (4, 1, 1), 7)
    torch.current = 9
    assert call_signature((FakeTensor(),), None, 9) != plain


@pytest.mark.parametrize(
    "args",
    [
        (np.zeros((4, 8), np.float32),),  # host arrays: copied every call
        (FakeTensor(cuda=False),),
        (FakeTensor(grad=True),),  # DLPack refuses these: the refusal repeats
        (FakeTensor(conj=True),),
        (FakeTensor(layout=object()),),
        (FakeTensor(), np.float32(2.0)),  # a scalar not exactly a Python one
        (FakeTensor(), "2"),
        (2, 3),  # no arrays at all
    ],
    ids=[
        "numpy",
        "host tensor",
        "autograd",
        "conj",
        "sparse",
        "np scalar",
        "str",
        "no arrays",
    ],
)
def test_calls_converted_every_time_have_none(torch, args) -> None:
    assert call_signature(args, None, 0) is None


def test_a_launch_on_another_stream_than_torch_has_none(torch) -> None:
    """The DLPack export would order torch's work before the launch stream."""
    torch.current = 5
    assert call_signature((FakeTensor(),), None, 0) is None
    assert call_signature((FakeTensor(),), None, 5) is not None


def test_odd_grids_and_streams_have_none(torch) -> None:
    assert call_signature((FakeTensor(),), ([1], 1), 0) is None  # unhashable
    assert call_signature((FakeTensor(),), "big", 0) is None
    assert call_signature((FakeTensor(),), None, True) is None
    assert call_signature((FakeTensor(),), None, object()) is None


def test_without_torch_every_call_is_converted(monkeypatch) -> None:
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    assert call_signature((FakeTensor(),), None, 0) is None


def test_interface_arrays_have_a_signature_without_torch(monkeypatch) -> None:
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    args = (FakeInterfaceArray(), FakeInterfaceArray(ptr=8192), 2.5)
    first = call_signature(args, None, 0)
    assert first is not None and first == call_signature(args, None, 0)


@pytest.mark.parametrize(
    "other",
    [
        {"ptr": 4098},
        {"shape": (4, 9)},
        {"strides": (32, 2)},
        {"typestr": "<f4"},
        {"read_only": True},
    ],
    ids=str,
)
def test_any_interface_difference_changes_it(other) -> None:
    assert call_signature((FakeInterfaceArray(),), None, 0) != call_signature(
        (FakeInterfaceArray(**other),), None, 0
    )


@pytest.mark.parametrize(
    ("on", "launch", "cached"),
    [
        (1, 0, True),
        (0, 1, True),
        (None, 7, True),
        (7, 7, True),
        (7, 0, False),
        (1, 7, False),
        (2, 0, False),
    ],
)
def test_interface_arrays_on_another_stream_have_none(on, launch, cached) -> None:
    """The export would order the array's stream before the launch stream;
    the legacy default stream is 0 to the driver and 1 in the interface."""
    signature = call_signature((FakeInterfaceArray(stream=on),), None, launch)
    assert (signature is not None) == cached


@pytest.mark.parametrize(
    "array",
    [FakeInterfaceArray(mask=object()), BrokenInterfaceArray()],
    ids=["masked", "refused"],
)
def test_interface_arrays_the_conversion_refuses_have_none(array) -> None:
    assert call_signature((array,), None, 0) is None


def test_torch_and_interface_arrays_mix(torch) -> None:
    signature = call_signature((FakeTensor(), FakeInterfaceArray()), None, 0)
    assert signature is not None
    torch.current = 5  # torch's work is on another stream than the launch's
    assert call_signature((FakeTensor(), FakeInterfaceArray()), None, 0) is None


def test_the_least_recently_used_call_goes_first() -> None:
    cache = CallCache(capacity=2)
    entries = {k: CachedCall(lambda: None, k, None) for k in "abc"}
    cache.put(("a",), entries["a"])
    cache.put(("b",), entries["b"])
    assert cache.get(("a",)) is entries["a"]  # now b is the oldest
    cache.put(("c",), entries["c"])
    assert len(cache) == 2 and cache.get(("b",)) is None
    assert cache.get(("a",)) is entries["a"] and cache.get(("c",)) is entries["c"]
    cache.clear()
    assert len(cache) == 0
