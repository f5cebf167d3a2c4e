"""Lowering from aref IR to the nvgpu_async dialect, from there to the ptx
dialect (`select-store-path`, `distribute-fragments`), the thread-level passes
down to PTX text (`ptx-skip-unit-scale`, `ptx-contract-fma`, `ptx-allocate`,
`ptx-lower-control-flow`), and the PTX target.

`get_all_lowering_passes` maps pass names to lazy factories, as
`tawa_xdsl.transforms.get_all_passes` does for the aref-level passes."""

from collections.abc import Callable

from xdsl.passes import ModulePass


def _thread_level_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """The passes on ptx IR, from distributed kernels to printable ones."""

    def ptx_skip_unit_scale() -> type[ModulePass]:
        from tawa_xdsl.lowering.ptx_skip_unit_scale import PtxSkipUnitScalePass

        return PtxSkipUnitScalePass

    def ptx_contract_fma() -> type[ModulePass]:
        from tawa_xdsl.lowering.ptx_contract_fma import PtxContractFmaPass

        return PtxContractFmaPass

    def ptx_allocate() -> type[ModulePass]:
        from tawa_xdsl.lowering.ptx_allocate import PtxAllocatePass

        return PtxAllocatePass

    def ptx_lower_control_flow() -> type[ModulePass]:
        from tawa_xdsl.lowering.ptx_control_flow import PtxLowerControlFlowPass

        return PtxLowerControlFlowPass

    return {
        "ptx-skip-unit-scale": ptx_skip_unit_scale,
        "ptx-contract-fma": ptx_contract_fma,
        "ptx-allocate": ptx_allocate,
        "ptx-lower-control-flow": ptx_lower_control_flow,
    }


def get_all_lowering_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    def convert_aref_to_nvgpu_async() -> type[ModulePass]:
        from tawa_xdsl.lowering.aref_to_nvgpu import ConvertArefToNVGPUAsyncPass

        return ConvertArefToNVGPUAsyncPass

    def select_store_path() -> type[ModulePass]:
        from tawa_xdsl.lowering.select_store_path import SelectStorePathPass

        return SelectStorePathPass

    def distribute_fragments() -> type[ModulePass]:
        from tawa_xdsl.lowering.distribute import DistributeFragmentsPass

        return DistributeFragmentsPass

    return {
        "convert-aref-to-nvgpu-async": convert_aref_to_nvgpu_async,
        "select-store-path": select_store_path,
        "distribute-fragments": distribute_fragments,
        **_thread_level_passes(),
    }
