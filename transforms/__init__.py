"""Our passes, one module each. `get_all_passes` maps pass names to lazy factories."""

from collections.abc import Callable

from xdsl.passes import ModulePass


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Name -> factory; imports are local so `tawa-opt` starts fast."""

    def aref_partition() -> type[ModulePass]:
        from tawa_xdsl.transforms.aref_partition import ArefPartitionPass

        return ArefPartitionPass

    def pipeline() -> type[ModulePass]:
        from tawa_xdsl.transforms.pipeline import PipelinePass

        return PipelinePass

    def cooperative() -> type[ModulePass]:
        from tawa_xdsl.transforms.cooperative import CooperativePass

        return CooperativePass

    def register_budget() -> type[ModulePass]:
        from tawa_xdsl.transforms.register_budget import RegisterBudgetPass

        return RegisterBudgetPass

    def tile_shape() -> type[ModulePass]:
        from tawa_xdsl.transforms.tile_shape import TileShapePass

        return TileShapePass

    def persistent() -> type[ModulePass]:
        from tawa_xdsl.transforms.persistent import PersistentPass

        return PersistentPass

    def reverse_grid() -> type[ModulePass]:
        from tawa_xdsl.transforms.reverse_grid import ReverseGridPass

        return ReverseGridPass

    def cluster() -> type[ModulePass]:
        from tawa_xdsl.transforms.cluster import ClusterPass

        return ClusterPass

    def split_k() -> type[ModulePass]:
        from tawa_xdsl.transforms.split_k import SplitKPass

        return SplitKPass

    def stream_k() -> type[ModulePass]:
        from tawa_xdsl.transforms.stream_k import StreamKPass

        return StreamKPass

    def swap_operands() -> type[ModulePass]:
        from tawa_xdsl.transforms.swap_operands import SwapOperandsPass

        return SwapOperandsPass

    def ping_pong() -> type[ModulePass]:
        from tawa_xdsl.transforms.ping_pong import PingPongPass

        return PingPongPass

    return {
        "split-k": split_k,
        "stream-k": stream_k,
        "tile-shape": tile_shape,
        "swap-operands": swap_operands,
        "reverse-grid": reverse_grid,
        "cluster": cluster,
        "persistent": persistent,
        "aref-partition": aref_partition,
        "pipeline": pipeline,
        "cooperative": cooperative,
        "register-budget": register_budget,
        "ping-pong": ping_pong,
    }
