"""One place that knows every dialect, pass and target tawa-xdsl adds to xDSL."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.context import Context
from xdsl.passes import ModulePass
from xdsl.universe import Universe
from xdsl.utils.target import Target

from tawa_xdsl.dialects import get_all_dialects
from tawa_xdsl.lowering import get_all_lowering_passes
from tawa_xdsl.transforms import get_all_passes


def register_dialects(ctx: Context) -> None:
    for name, factory in get_all_dialects().items():
        ctx.register_dialect(name, factory)


def all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Our passes and named pipelines (xDSL's come from its own registry)."""

    def hopper_pipeline() -> type[ModulePass]:
        from tawa_xdsl.pipelines import TawaHopperPipeline

        return TawaHopperPipeline

    return {
        **get_all_passes(),
        **get_all_lowering_passes(),
        "tawa-hopper-pipeline": hopper_pipeline,
    }


def all_targets(
    verify: Callable[[], bool] = lambda: True,
) -> dict[str, Callable[[], type[Target]]]:
    """Our targets; `verify` says, when one is made, whether it verifies the IR
    its stages leave (the driver's `--disable-verify` turns it off)."""

    def ptx() -> type[Target]:
        from tawa_xdsl.lowering.ptx_target import PTXTarget, UnverifiedPTXTarget

        return PTXTarget if verify() else UnverifiedPTXTarget

    return {"ptx": ptx}


def make_context() -> Context:
    """A context with every xDSL dialect and ours, all loaded lazily."""
    ctx = Context()
    for name, factory in Universe.get_multiverse().all_dialects.items():
        ctx.register_dialect(name, factory)
    register_dialects(ctx)
    return ctx


def all_passes_with_xdsl() -> dict[str, Callable[[], type[ModulePass]]]:
    """xDSL's passes plus ours: what a pipeline string may name."""
    return {**Universe.get_multiverse().all_passes, **all_passes()}
