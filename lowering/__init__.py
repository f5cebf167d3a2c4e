"""Lowering from aref IR to the nvgpu_async dialect, and the PTX target."""
