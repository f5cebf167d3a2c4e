"""What an elementwise tile op is.

Tiles are builtin tensors, so elementwise math on them is plain `arith` and
`math` (xDSL's ops accept tensors), plus the tile dialect's own compare and
select (xDSL's `arith.cmpi` / `arith.select` take scalars only). Such an op
reads and writes tiles of one shape, element by element: the shape pass ties
all its operands and results to one shape, the layout analysis to one register
layout, and the wgmma wait analysis knows its result can live in an operand's
registers.
"""

from __future__ import annotations

from xdsl.dialects import arith, math
from xdsl.ir import Operation

from tawa_xdsl.dialects import tile


def is_elementwise(op: Operation) -> bool:
    """Whether `op` computes element by element: `arith` and `math` (constants
    aside: they make a tile, they do not map one), `tile.cmpi`, `tile.select`."""
    return isinstance(op, tile.CmpiOp | tile.SelectOp) or (
        op.dialect_name() in (arith.Arith.name, math.Math.name)
        and not isinstance(op, arith.ConstantOp)
    )
