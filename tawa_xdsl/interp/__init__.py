"""Executable semantics of our IR levels on the CPU: the reference interpreter
for tile kernels (and the simulators that build on it)."""
