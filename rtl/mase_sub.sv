// mase_sub: element-wise difference data_in_0 - data_in_1 of two streams with format alignment.
//
// Joins data_in_0 and data_in_1 beat by beat (a beat of each is consumed together). Each input
// has its own signed format (PRECISION_0 bits, PRECISION_1 fractional bits). The two lanes are
// aligned to the finer fractional bit count F = max(frac_0, frac_1) and subtracted exactly (one
// bit wider than the wider aligned operand, so even min - max fits), then cast (mase_cast_core)
// to the DATA_OUT_0 format with the rounding DATA_OUT_0_ROUNDING and overflow DATA_OUT_0_OVERFLOW
// (default TRN + SAT), bit-identical to `mase_ir::fixed::sub` followed by `cast_code`.
//   Latency: 1 cycle. II: 1 beat per cycle.
//   Paths cut: data and valid (registered outputs); each input's ready depends combinationally on
//   the other input's valid and on data_out_0_ready (a join).
`ifndef MASE_ASSERT_SVH
`include "mase_assert.svh"
`endif
module mase_sub #(
    /// Width of input 0 lanes (1..64, signed).
    parameter int DATA_IN_0_PRECISION_0 = 8,
    /// Fractional bits of input 0.
    parameter int DATA_IN_0_PRECISION_1 = 4,
    /// Tensor size along dim 0 (elements per row).
    parameter int DATA_IN_0_TENSOR_SIZE_DIM_0 = 8,
    /// Tensor size along dim 1 (rows).
    parameter int DATA_IN_0_TENSOR_SIZE_DIM_1 = 1,
    /// Elements of dim 0 per beat.
    parameter int DATA_IN_0_PARALLELISM_DIM_0 = 4,
    /// Rows per beat.
    parameter int DATA_IN_0_PARALLELISM_DIM_1 = 1,
    /// Width of input 1 lanes (1..64, signed).
    parameter int DATA_IN_1_PRECISION_0 = 8,
    /// Fractional bits of input 1 (within 63 of input 0's).
    parameter int DATA_IN_1_PRECISION_1 = 4,
    /// Input 1 size along dim 0 (must equal input 0's).
    parameter int DATA_IN_1_TENSOR_SIZE_DIM_0 = DATA_IN_0_TENSOR_SIZE_DIM_0,
    /// Input 1 size along dim 1 (must equal input 0's).
    parameter int DATA_IN_1_TENSOR_SIZE_DIM_1 = DATA_IN_0_TENSOR_SIZE_DIM_1,
    /// Input 1 elements of dim 0 per beat (must equal input 0's).
    parameter int DATA_IN_1_PARALLELISM_DIM_0 = DATA_IN_0_PARALLELISM_DIM_0,
    /// Input 1 rows per beat (must equal input 0's).
    parameter int DATA_IN_1_PARALLELISM_DIM_1 = DATA_IN_0_PARALLELISM_DIM_1,
    /// Output lane width (1..64, signed).
    parameter int DATA_OUT_0_PRECISION_0 = 8,
    /// Output fractional bits.
    parameter int DATA_OUT_0_PRECISION_1 = 4,
    /// Output size along dim 0 (must equal input 0's).
    parameter int DATA_OUT_0_TENSOR_SIZE_DIM_0 = DATA_IN_0_TENSOR_SIZE_DIM_0,
    /// Output size along dim 1 (must equal input 0's).
    parameter int DATA_OUT_0_TENSOR_SIZE_DIM_1 = DATA_IN_0_TENSOR_SIZE_DIM_1,
    /// Output elements of dim 0 per beat (must equal input 0's).
    parameter int DATA_OUT_0_PARALLELISM_DIM_0 = DATA_IN_0_PARALLELISM_DIM_0,
    /// Output rows per beat (must equal input 0's).
    parameter int DATA_OUT_0_PARALLELISM_DIM_1 = DATA_IN_0_PARALLELISM_DIM_1,
    /// Rounding: 0 TRN, 1 TRN_ZERO, 2 RND, 3 RND_ZERO, 4 RND_INF, 5 RND_MIN_INF, 6 RND_CONV.
    parameter int DATA_OUT_0_ROUNDING = 0,
    /// Overflow: 0 WRAP, 1 SAT, 2 SAT_ZERO, 3 SAT_SYM.
    parameter int DATA_OUT_0_OVERFLOW = 1
) (
    /// Clock.
    input  logic                                                                                clk,
    /// Synchronous active-high reset: empties the output register.
    input  logic                                                                                rst,
    /// Input 0 beat, lane i at [i*W0 +: W0].
    input  logic [DATA_IN_0_PARALLELISM_DIM_0*DATA_IN_0_PARALLELISM_DIM_1*DATA_IN_0_PRECISION_0-1:0] data_in_0,
    /// Input 0 beat valid.
    input  logic                                                                                data_in_0_valid,
    /// Input 0 beat taken (together with input 1's).
    output logic                                                                                data_in_0_ready,
    /// Input 1 beat, lane i at [i*W1 +: W1].
    input  logic [DATA_IN_0_PARALLELISM_DIM_0*DATA_IN_0_PARALLELISM_DIM_1*DATA_IN_1_PRECISION_0-1:0] data_in_1,
    /// Input 1 beat valid.
    input  logic                                                                                data_in_1_valid,
    /// Input 1 beat taken (together with input 0's).
    output logic                                                                                data_in_1_ready,
    /// Output beat (registered), lane i at [i*WO +: WO].
    output logic [DATA_IN_0_PARALLELISM_DIM_0*DATA_IN_0_PARALLELISM_DIM_1*DATA_OUT_0_PRECISION_0-1:0] data_out_0,
    /// Output beat valid (registered).
    output logic                                                                                data_out_0_valid,
    /// Consumer accepts the output beat.
    input  logic                                                                                data_out_0_ready
);
  /// Lanes per beat.
  localparam int LANES = DATA_IN_0_PARALLELISM_DIM_0 * DATA_IN_0_PARALLELISM_DIM_1;
  /// Lane widths.
  localparam int W0 = DATA_IN_0_PRECISION_0;
  localparam int W1 = DATA_IN_1_PRECISION_0;
  localparam int WO = DATA_OUT_0_PRECISION_0;
  /// Fractional bits of the exact difference, and the alignment shifts of the two operands.
  localparam int F = DATA_IN_0_PRECISION_1 > DATA_IN_1_PRECISION_1 ? DATA_IN_0_PRECISION_1 :
      DATA_IN_1_PRECISION_1;
  localparam int S0 = F - DATA_IN_0_PRECISION_1;
  localparam int S1 = F - DATA_IN_1_PRECISION_1;
  /// Width of the exact difference.
  localparam int SW = (W0 + S0 > W1 + S1 ? W0 + S0 : W1 + S1) + 1;

`ifndef SYNTHESIS
  initial begin
    `MASE_CHECK_FORMAT(DATA_IN_0, 64);
    `MASE_CHECK_BLOCK_SHAPE(DATA_IN_0);
    `MASE_CHECK_FORMAT(DATA_IN_1, 64);
    if (DATA_IN_1_PRECISION_1 - DATA_IN_0_PRECISION_1 > 63 ||
        DATA_IN_0_PRECISION_1 - DATA_IN_1_PRECISION_1 > 63)
      $fatal(1, "DATA_IN_1_PRECISION_1 (%0d) must be within 63 of DATA_IN_0_PRECISION_1 (%0d)",
             DATA_IN_1_PRECISION_1, DATA_IN_0_PRECISION_1);
    `MASE_CHECK_SAME_SHAPE(DATA_IN_1, DATA_IN_0);
    `MASE_CHECK_FORMAT(DATA_OUT_0, 64);
    `MASE_CHECK_SAME_SHAPE(DATA_OUT_0, DATA_IN_0);
    `MASE_CHECK_MODES(DATA_OUT_0);
  end
`endif

  /// Output register free or being drained.
  logic space;
  /// Both beats present and taken this cycle.
  logic fire;
  /// Cast differences of the current beats.
  logic [LANES*WO-1:0] diff_lanes;

  assign space = !data_out_0_valid || data_out_0_ready;
  assign fire = data_in_0_valid && data_in_1_valid && space;
  assign data_in_0_ready = data_in_1_valid && space;
  assign data_in_1_ready = data_in_0_valid && space;

  for (genvar i = 0; i < LANES; i++) begin : g_lane
    /// Exact aligned difference of lane i.
    logic [SW-1:0] diff;
    assign diff = (SW'($signed(data_in_0[i*W0+:W0])) << S0) - (SW'($signed(data_in_1[i*W1+:W1])) << S1);
    mase_cast_core #(
        .IN_WIDTH  (SW),
        .IN_FRAC   (F),
        .IN_SIGNED (1),
        .OUT_WIDTH (WO),
        .OUT_FRAC  (DATA_OUT_0_PRECISION_1),
        .OUT_SIGNED(1),
        .ROUNDING  (DATA_OUT_0_ROUNDING),
        .OVERFLOW  (DATA_OUT_0_OVERFLOW)
    ) u_cast (
        .data_in (diff),
        .data_out(diff_lanes[i*WO+:WO])
    );
  end

  always_ff @(posedge clk) begin
    if (rst) data_out_0_valid <= 1'b0;
    else if (space) data_out_0_valid <= data_in_0_valid && data_in_1_valid;
  end

  // The data register has no reset: validity is tracked by data_out_0_valid.
  always_ff @(posedge clk) begin
    if (fire) data_out_0 <= diff_lanes;
  end

  // Handshake: every stream port keeps an offered beat offered and unchanged until taken.
  `MASE_ASSERT_STREAM_STABLE(data_in_0)
  `MASE_ASSERT_STREAM_STABLE(data_in_1)
  `MASE_ASSERT_STREAM_STABLE(data_out_0)
endmodule
