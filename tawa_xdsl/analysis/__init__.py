"""Analyses that several passes share: facts read from IR, never rewrites.

- `carried`: a value's copies through `scf` loops and branches.
- `uniformity`: which values differ between the programs (or the blocks of a
  cluster) that run one kernel.
- `coordinates`: tile coordinates proven non-negative or multiples of a constant.
- `elementwise`: what an elementwise tile op is.
- `shapes`: which tile dimensions of a kernel are one dimension, and their names.
- `transposable`: which transposes of computed tiles move up to the loaded
  tiles, and what stops the others.
- `layouts`: where each tile of a consumer role lives once lowered (a shared-memory
  view or a register fragment layout).
- `kernel_plan`: what the Hopper lowering makes of a kernel (parameters, shared
  memory, barriers, multicast, store paths, launch), decided before it rewrites.
"""
