"""The tuned defaults follow the kernel's structure (see `tawa_xdsl.tuning`)."""

from __future__ import annotations

import pytest

from tawa_xdsl.kernel import find_kernel
from tawa_xdsl.tuning import default_options

from .conftest import example_module


def options_for(file: str, name: str) -> dict:
    return default_options(find_kernel(example_module(file, name), name))


@pytest.mark.parametrize("d", [64, 128])
def test_equal_work_attention_is_persistent_with_one_q_slot(d) -> None:
    options = options_for("attention.mlir", f"attention_d{d}")
    assert options["persistent"] and options["outer_stages"] == 1
    assert options["group_m"] == 1 and options["num_stages"] == 3
    assert "cluster" not in options  # measured: multicasting K and V did not pay


@pytest.mark.parametrize("d", [64, 128])
def test_causal_attention_keeps_one_program_per_tile_longest_first(d) -> None:
    """The causal key loop ends at the query block: its bound depends on the
    program id, so tiles differ in work; the hardware starts the longest first."""
    options = options_for("attention.mlir", f"attention_causal_d{d}")
    assert "persistent" not in options and options["two_stage"]
    assert "cluster" not in options and options["reverse_x"]
    assert "reverse_x" not in options_for("attention.mlir", f"attention_d{d}")


def test_head_dim_64_takes_192_rows_over_three_warpgroups() -> None:
    options = options_for("attention.mlir", "attention_d64")
    assert (options["block_m"], options["num_consumers"]) == (192, 3)
    assert "block_m" not in options_for("attention.mlir", "attention_d128")


def test_gemm_is_persistent_on_128x256_tiles() -> None:
    options = options_for("gemm.mlir", "gemm_nt")
    assert options["block_n"] == 256 and options["persistent"]
    assert options["group_m"] == 16 and options["num_stages"] == 3
