// split-k{splits=S}: the K loop runs over slices picked by program_id z and
// stores f32 partials into a workspace; a reduce kernel sums them in slot order
// and runs the epilogue. stream-k: a persistent partials kernel over equal
// shares of tiles x K iterations, the same reduce kernel with the slot count
// read off the workspace.
// RUN: tawa-opt %examples/gemm_epilogue.mlir -p 'split-k{splits=3}' | filecheck %s
// RUN: tawa-opt %examples/gemm.mlir -p 'split-k{splits=4},tile-shape{block-n=256}' | filecheck %s --check-prefix=SHAPE
// RUN: tawa-opt %examples/gemm.mlir -p 'stream-k' | filecheck %s --check-prefix=STREAM
// RUN: tawa-opt %examples/gemm_epilogue.mlir -p 'split-k{splits=2},tawa-hopper-pipeline' | filecheck %s --check-prefix=LOWERED
// RUN: tawa-opt %examples/gemm.mlir -p 'stream-k,tawa-hopper-pipeline' | filecheck %s --check-prefix=STREAM-LOWERED
// RUN: tawa-opt %S/../../kernels/gemm_accumulate.mlir -p 'split-k{splits=2}' | filecheck %s --check-prefix=MORE

// An accumulator starting from the loaded C: each slice sums from zero (C is
// no parameter of the partials kernel), the reduce kernel's sum starts from C.
// Two stores of the accumulator: the partials kernel stores only its slice,
// the reduce kernel makes both.
// MORE-LABEL: func.func @gemm_accumulate_split_k(
// MORE-SAME:      %b: {{.*}}"K"]}, %workspace: !tile.desc<2x?x?xf32
// MORE:         %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
// MORE:         scf.for {{.*}} iter_args(%acc_k = %zero)
// MORE-LABEL: func.func @gemm_accumulate_split_k_reduce(
// MORE:         %ct = tile.load %c[%m0, %n0]
// MORE-NEXT:    %init = arith.extf %ct
// MORE:         scf.for %slot = {{.*}} iter_args(%sum = %init)
// MORE:         tile.store %out, %c[%m0, %n0]
// MORE-LABEL: func.func @gemm_two_outputs_split_k(
// MORE-NOT:     %d[
// MORE:         tile.store %acc, %workspace
// MORE-NOT:     tile.store
// MORE-LABEL: func.func @gemm_two_outputs_split_k_reduce(
// MORE:         tile.store %out, %c[%m0, %n0]
// MORE-NEXT:    arith.maximumf
// MORE:         tile.store %rout, %d[%m0, %n0]

// The partials kernel keeps A and B and appends the workspace: S x M x N f32,
// named after the output's dimensions, its box the output's with a unit slot.
// CHECK-LABEL: func.func @gemm_scale_bias_relu_split_k(
// CHECK-SAME:      %a: !tile.desc<?x?xbf16, box = [128, 64]> {tile.box = ["BM", "BK"], tile.dims = ["M", "K"]},
// CHECK-SAME:      %b: !tile.desc<?x?xbf16, box = [128, 64]> {tile.box = ["BN", "BK"], tile.dims = ["N", "K"]},
// CHECK-SAME:      %workspace: !tile.desc<3x?x?xf32, box = [1, 128, 128]> {tile.dims = ["S", "M", "N"], tile.box = ["", "BM", "BN"]})
// CHECK-SAME:      tile.split_k = {mode = "split-k", role = "partials", kernel = "gemm_scale_bias_relu", partner = "gemm_scale_bias_relu_split_k_reduce", splits = 3 : i64, args = [0 : i64, 1 : i64, -1 : i64]}
// Slice z of 3 runs iterations [z T / 3, (z + 1) T / 3) of the T the loop had,
// each bound as z (T / 3) + z (T % 3) / 3: z T wraps 32-bit indices past 2^32.
// Its loop bounds never compute lb + T * 64, which can pass 2^31 - 1: a slice
// to the end ends at %K, an empty one runs from lb to lb.
// CHECK:         %[[Z:split]] = tile.program_id z
// CHECK:         %[[SPAN:.*]] = arith.subi %K, %c0
// CHECK-NEXT:    %[[T0:.*]] = arith.ceildivsi %[[SPAN]], %bk
// CHECK:         %[[T:k_trips]] = arith.maxsi %[[T0]]
// CHECK:         %[[S:.*]] = arith.constant 3 : index
// CHECK:         %[[Z1:.*]] = arith.addi %[[Z]]
// CHECK-NEXT:    %[[Q:.*]] = arith.divui %[[T]], %[[S]]
// CHECK-NEXT:    %[[F0:.*]] = arith.muli %[[Z]], %[[Q]]
// CHECK-NEXT:    %[[R:.*]] = arith.remui %[[T]], %[[S]]
// CHECK-NEXT:    %[[F1:.*]] = arith.muli %[[Z]], %[[R]]
// CHECK-NEXT:    %[[F2:.*]] = arith.divui %[[F1]], %[[S]]
// CHECK-NEXT:    %[[FIRST:slice_begin]] = arith.addi %[[F0]], %[[F2]]
// CHECK:         %[[END:slice_end]] = arith.addi
// CHECK-NEXT:    %[[EMPTY:.*]] = arith.cmpi sge, %[[FIRST]], %[[T]]
// CHECK-NEXT:    %[[TOEND:.*]] = arith.cmpi sge, %[[END]], %[[T]]
// CHECK-NEXT:    %[[B0:.*]] = arith.muli %[[FIRST]], %bk
// CHECK-NEXT:    %[[B1:.*]] = arith.addi %c0, %[[B0]]
// CHECK-NEXT:    %[[LB:k_begin]] = arith.select %[[EMPTY]], %c0, %[[B1]]
// CHECK-NEXT:    %[[LAST:.*]] = arith.select %[[EMPTY]], %c0, %K
// CHECK-NEXT:    %[[U0:.*]] = arith.muli %[[END]], %bk
// CHECK-NEXT:    %[[U1:.*]] = arith.addi %c0, %[[U0]]
// CHECK-NEXT:    %[[UB:k_end]] = arith.select %[[TOEND]], %[[LAST]], %[[U1]]
// CHECK-NEXT:    %acc = scf.for %k = %[[LB]] to %[[UB]] step %bk iter_args(%acc_k = %zero)
// CHECK:           tile.dot
// CHECK:         }
// CHECK-NEXT:    tile.store %acc, %workspace[%[[Z]], %m0, %n0] : tensor<128x128xf32> -> !tile.desc<3x?x?xf32, box = [1, 128, 128]>
// CHECK-NEXT:    func.return

// The reduce kernel takes the workspace, then the bias, the output and alpha;
// it adds the slots in order where the loop was, then the epilogue and store.
// CHECK-LABEL: func.func @gemm_scale_bias_relu_split_k_reduce(
// CHECK-SAME:      %workspace: !tile.desc<3x?x?xf32, box = [1, 128, 128]> {tile.dims = ["S", "M", "N"], tile.box = ["", "BM", "BN"]},
// CHECK-SAME:      %bias: !tile.desc<?xbf16, box = [128]> {tile.box = ["BN"], tile.dims = ["N"]},
// CHECK-SAME:      %c: !tile.desc<?x?xbf16, box = [128, 128]> {tile.box = ["BM", "BN"], tile.dims = ["M", "N"]},
// CHECK-SAME:      %alpha: f32)
// CHECK-SAME:      tile.split_k = {mode = "split-k", role = "reduce", kernel = "gemm_scale_bias_relu", partner = "gemm_scale_bias_relu_split_k", splits = 3 : i64, args = [-1 : i64, 2 : i64, 3 : i64, 4 : i64]}
// CHECK-NOT:     tile.dot
// CHECK:         %[[COUNT:.*]] = arith.constant 3 : index
// CHECK:         %total = scf.for %slot = %{{.*}} to %[[COUNT]] step %{{.*}} iter_args(%sum = %zero) -> (tensor<128x128xf32>) {
// CHECK-NEXT:      %partial = tile.load %workspace[%slot, %m0, %n0] : !tile.desc<3x?x?xf32, box = [1, 128, 128]> -> tensor<128x128xf32>
// CHECK-NEXT:      %[[NEXT:.*]] = arith.addf %sum, %partial
// CHECK-NEXT:      scf.yield %[[NEXT]]
// CHECK-NEXT:    }
// CHECK-NEXT:    %alpha_t = tile.splat %alpha
// CHECK-NEXT:    %scaled = arith.mulf %total, %alpha_t
// CHECK:         %relu = arith.maximumf
// CHECK:         tile.store %out, %c[%m0, %n0]
// CHECK-LABEL: func.func @gemm_bias_gelu_split_k(
// CHECK-LABEL: func.func @gemm_bias_gelu_split_k_reduce(
// CHECK:         math.tanh

// The workspace box follows tile-shape in both kernels.
// SHAPE-LABEL: func.func @gemm_nt_split_k(
// SHAPE-SAME:      %workspace: !tile.desc<4x?x?xf32, box = [1, 128, 256]> {tile.dims = ["S", "M", "N"], tile.box = ["", "BM", "BN"]}
// SHAPE:         tile.store %acc, %workspace[%split, %m0, %n0] : tensor<128x256xf32>
// SHAPE-LABEL: func.func @gemm_nt_split_k_reduce(
// SHAPE:         tile.load %workspace[%slot, %m0, %n0] : !tile.desc<4x?x?xf32, box = [1, 128, 256]> -> tensor<128x256xf32>

// stream-k: the loop bounds are computed once; program p of P takes units
// [p U / P, (p + 1) U / P) of the U = tiles x iterations, walking the tiles they
// touch, and stores each tile's partial at its rank among the tile's programs.
// STREAM-LABEL: func.func @gemm_nt_stream_k(
// STREAM-SAME:      %workspace: !tile.desc<?x?x?xf32, box = [1, 128, 128]> {tile.dims = ["S", "M", "N"], tile.box = ["", "BM", "BN"]}
// STREAM-SAME:      tile.split_k = {mode = "stream-k", role = "partials", kernel = "gemm_nt", partner = "gemm_nt_stream_k_reduce", splits = 0 : i64, args = [0 : i64, 1 : i64, -1 : i64]}
// STREAM:         %[[PER:tile_units]] = arith.maxsi %k_trips
// STREAM:         arith.constant {tile.size = "BM"} 128 : index
// STREAM:         arith.constant {tile.size = "BN"} 128 : index
// STREAM:         %[[UNITS:units]] = arith.muli %tiles, %[[PER]]
// STREAM-NEXT:    %[[P:program]] = tile.program_id x
// STREAM-NEXT:    %[[NP:programs]] = tile.num_programs x
// STREAM:         %unit_begin = arith.divui %{{.*}}, %[[NP]]
// STREAM:         %unit_end = arith.divui %{{.*}}, %[[NP]]
// STREAM:         %[[SLOTS:slots]] = tile.dim %workspace, 0
// STREAM:         scf.for %tile_id = %{{.*}} to %{{.*}} step %{{.*}} {
// STREAM:           %pid_x = arith.addi
// STREAM:           %pid_y = arith.divui
// STREAM:           %acc = scf.for %k = %k_begin to %k_end step %bk_1
// STREAM:           %first_program = arith.divui %{{.*}}, %[[UNITS]]
// STREAM:           %last_program = arith.divui %{{.*}}, %[[UNITS]]
// STREAM:           %[[RANK:.*]] = arith.subi %[[P]], %first_program
// STREAM-NEXT:      %slot = arith.minui %[[RANK]], %[[SLOTS]]
// STREAM-NEXT:      tile.store %acc, %workspace[%slot, %m0, %n0]
// STREAM:           %zero_from = arith.minui
// STREAM:           scf.for %{{.*}} = %zero_from to %[[SLOTS]] step %{{.*}} iter_args(%[[Z:.*]] = %zero)
// STREAM-NEXT:        tile.store %[[Z]], %workspace[
// STREAM-LABEL: func.func @gemm_nt_stream_k_reduce(
// STREAM:         %[[R:slots]] = tile.dim %workspace, 0
// STREAM:         scf.for %slot = %{{.*}} to %[[R]]

// Both kernels of each pair go through the whole pipeline with their own
// options: the partials kernel persistent over (x, y, z) on the tuned 128 x 192
// tiles (its f32 staging tile leaves 128 x 256 two stages, 128 x 192 three:
// `tuning.GEMM_STAGES`), the reduce kernel on the output's grid; both keep their record. They hand over by programmatic
// dependent launch: the partials kernel lets the reduce kernel start at once,
// and the reduce kernel waits for the partial sums after its barriers are set
// up, before any load.
// LOWERED-LABEL: func.func @gemm_scale_bias_relu_split_k(
// LOWERED-SAME:      tile.split_k = {mode = "split-k", role = "partials"
// LOWERED-SAME:      tile.persistent = {{\[}}[2 : i64, 2 : i64, 0 : i64, 1 : i64], [0 : i64, 2 : i64, 1 : i64, 128 : i64], [1 : i64, 2 : i64, 2 : i64, 192 : i64]]
// LOWERED-SAME:      tile.arg_names = ["a", "b", "workspace"]
// LOWERED-SAME:      nvgpu_async.launch
// LOWERED-NEXT:      nvgpu_async.launch_dependents
// LOWERED-NOT:       nvgpu_async.grid_dependency_wait
// LOWERED:           nvgpu_async.wgmma
// LOWERED-LABEL: func.func @gemm_scale_bias_relu_split_k_reduce(
// LOWERED-SAME:      tile.split_k = {mode = "split-k", role = "reduce"
// LOWERED-SAME:      tile.grid = {{\[}}[0 : i64, 2 : i64, 0 : i64, 128 : i64], [1 : i64, 2 : i64, 1 : i64, 128 : i64]]
// LOWERED-SAME:      tile.arg_names = ["workspace", "bias", "c", "alpha"]
// LOWERED-SAME:      nvgpu_async.launch
// LOWERED-NOT:       nvgpu_async.launch_dependents
// LOWERED:           nvgpu_async.cta_barrier
// LOWERED-NEXT:      nvgpu_async.grid_dependency_wait
// LOWERED-NOT:       nvgpu_async.tma_load
// LOWERED:           nvgpu_async.role_dispatch
// LOWERED:           nvgpu_async.tma_load %workspace

// The stream-K partials kernel walks its own share: persistent leaves it alone
// and it records no grid (the launch gives one program per SM).
// STREAM-LOWERED-LABEL: func.func @gemm_nt_stream_k(
// STREAM-LOWERED-NOT:     tile.persistent
// STREAM-LOWERED-NOT:     tile.grid
// STREAM-LOWERED-SAME:    nvgpu_async.launch
// STREAM-LOWERED-LABEL: func.func @gemm_nt_stream_k_reduce(
// STREAM-LOWERED-SAME:    tile.grid
