"""GPU tests: marked `gpu`, skipped without a Hopper GPU, cuda-python and torch."""
