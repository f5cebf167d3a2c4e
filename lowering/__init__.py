"""Lowering from aref IR to the nvgpu_async dialect, from there to the ptx
dialect (`select-store-path`, `distribute-fragments`), and the PTX target.

`get_all_lowering_passes` maps pass names to lazy factories, as
`tawa_xdsl.transforms.get_all_passes` does for the aref-level passes."""

from collections.abc import Callable

from xdsl.passes import ModulePass


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
    }
