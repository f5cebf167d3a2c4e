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

    return {
        "aref-partition": aref_partition,
        "pipeline": pipeline,
        "cooperative": cooperative,
        "register-budget": register_budget,
    }
