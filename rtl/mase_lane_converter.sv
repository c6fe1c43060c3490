// mase_lane_converter: changes the number of lanes per beat of a row-major stream, between a
// producer emitting P_IN = DATA_IN_0_PARALLELISM_DIM_0 elements per beat and a consumer taking
// P_OUT = DATA_OUT_0_PARALLELISM_DIM_0 per beat. Elements keep their stream order: lane i of a
// beat is the i-th element of that beat, on both sides. One of P_IN, P_OUT divides the other and
// both divide the row length, so a beat never straddles two rows (the emitter chains two
// converters through gcd(P_IN, P_OUT) for other pairs).
//
// Three shapes, chosen at elaboration (K = the ratio of the larger to the smaller lane count):
//   Gather (P_OUT = K*P_IN, K >= 2): the first K-1 input beats of a group fill a collection
//     register, the K-th is written together with them into the output register. The input
//     keeps flowing while the output register waits, as long as it is drained by the time the
//     next group completes.
//     Latency: K cycles (first input beat taken in cycle t, output valid in cycle t+K).
//     II: one output beat every K cycles, one input beat per cycle, no bubble between groups.
//   Split (P_IN = K*P_OUT, K >= 2): the input beat is loaded into a holding register and leaves
//     as K slices of P_OUT lanes, lowest lanes first (the register shifts down by one slice per
//     output beat); the next input beat is accepted in the cycle the last slice leaves.
//     Latency: 1 cycle. II: one output beat per cycle, one input beat every K cycles.
//   Equal (P_IN = P_OUT): a plain pipeline register. Latency: 1 cycle. II: 1 beat per cycle.
// Paths cut: data and valid (data_out_0 and data_out_0_valid come from registers; in the split
// shape the output is the low slice of the holding register). Not cut: data_in_0_ready depends
// combinationally on data_out_0_ready (put a skid buffer after the converter to cut it).
// DATA_IN_0_PRECISION_1 and DATA_IN_0_TENSOR_SIZE_DIM_1 are format information: the lanes are
// opaque words of DATA_IN_0_PRECISION_0 bits and need no row counter.
`ifndef MASE_ASSERT_SVH `include "mase_assert.svh" `endif
module mase_lane_converter #(
    /// Lane format (1..64 bits, the same on both sides; the fractional bits are format only).
    `MASE_FORMAT_PARAMS(DATA_IN_0, 8, 4),
    /// Tensor size along dim 0 (elements per row); P_IN and P_OUT must divide it.
    parameter int DATA_IN_0_TENSOR_SIZE_DIM_0 = 8,
    /// Tensor size along dim 1 (rows; format only).
    parameter int DATA_IN_0_TENSOR_SIZE_DIM_1 = 1,
    /// P_IN: elements of dim 0 per input beat.
    parameter int DATA_IN_0_PARALLELISM_DIM_0 = 2,
    /// P_OUT: elements of dim 0 per output beat (a multiple or a divisor of P_IN).
    parameter int DATA_OUT_0_PARALLELISM_DIM_0 = 4
) (
    /// Clock and reset (reset empties the converter: a partial group or slices are dropped).
    /// data_in_0: input beats of P_IN lanes; ready is combinational in data_out_0_ready when the
    /// converter must drain the output to make room.
    /// data_out_0: output beats of P_OUT lanes (data and valid registered).
    `MASE_STAGE_PORTS(DATA_IN_0_PARALLELISM_DIM_0 * DATA_IN_0_PRECISION_0,
                      DATA_OUT_0_PARALLELISM_DIM_0 * DATA_IN_0_PRECISION_0)
);
`ifndef SYNTHESIS
  generate
    `MASE_CHECK_FORMAT(DATA_IN_0, 64);
    `MASE_CHECK_RANGE(DATA_IN_0_TENSOR_SIZE_DIM_0, 1, 1048576);
    `MASE_CHECK_RANGE(DATA_IN_0_TENSOR_SIZE_DIM_1, 1, 1048576);
    `MASE_CHECK_RANGE(DATA_IN_0_PARALLELISM_DIM_0, 1, 1024);
    `MASE_CHECK_RANGE(DATA_OUT_0_PARALLELISM_DIM_0, 1, 1024);
    if (DATA_OUT_0_PARALLELISM_DIM_0 % DATA_IN_0_PARALLELISM_DIM_0 != 0
        && DATA_IN_0_PARALLELISM_DIM_0 % DATA_OUT_0_PARALLELISM_DIM_0 != 0) begin : g_check_ratio
      $fatal(1, "DATA_IN_0_PARALLELISM_DIM_0 (%0d) and DATA_OUT_0_PARALLELISM_DIM_0 (%0d) must divide one another (the emitter chains two lane converters through their gcd otherwise)",
             DATA_IN_0_PARALLELISM_DIM_0, DATA_OUT_0_PARALLELISM_DIM_0);
    end
    `MASE_CHECK_DIVIDES(DATA_IN_0_PARALLELISM_DIM_0, DATA_IN_0_TENSOR_SIZE_DIM_0);
    `MASE_CHECK_DIVIDES(DATA_OUT_0_PARALLELISM_DIM_0, DATA_IN_0_TENSOR_SIZE_DIM_0);
  endgenerate
`endif

  /// Lane width.
  localparam int W = DATA_IN_0_PRECISION_0;
  /// P_IN, clamped to >= 1 so that invalid parameters still elaborate up to the checks above.
  localparam int PI = DATA_IN_0_PARALLELISM_DIM_0 < 1 ? 1 : DATA_IN_0_PARALLELISM_DIM_0;
  /// P_OUT, clamped likewise.
  localparam int PO = DATA_OUT_0_PARALLELISM_DIM_0 < 1 ? 1 : DATA_OUT_0_PARALLELISM_DIM_0;
  /// Gather shape (P_OUT a multiple of P_IN, including P_OUT = P_IN).
  localparam bit GATHER = PO % PI == 0;
  /// Split shape (P_IN a multiple of P_OUT, P_IN > P_OUT).
  localparam bit SPLIT = !GATHER && PI % PO == 0;
  /// Ratio of the larger to the smaller lane count (beats per group or slices per beat).
  localparam int K = GATHER ? PO / PI : (SPLIT ? PI / PO : 1);
  /// Width of the group/slice counter.
  localparam int CW = K > 1 ? $clog2(K) : 1;

  /// Gather: input beats of the current group taken so far. Split: slices of the held beat sent.
  logic [CW-1:0] cnt;
  /// The counter is at its last position (K-th input beat of a group / last slice of a beat).
  logic          last;
  /// An input beat moves this cycle.
  logic          in_fire;

  assign last    = cnt == CW'(K - 1);
  assign in_fire = data_in_0_valid && data_in_0_ready;

  if (GATHER) begin : g_gather
    // The input is taken unless it completes a group while the output register still holds an
    // untaken beat.
    assign data_in_0_ready = !last || !data_out_0_valid || data_out_0_ready;

    always_ff @(posedge clk) begin
      if (rst) begin
        cnt              <= '0;
        data_out_0_valid <= 1'b0;
      end else begin
        if (in_fire) cnt <= last ? '0 : cnt + 1'b1;
        if (in_fire && last) data_out_0_valid <= 1'b1;
        else if (data_out_0_ready) data_out_0_valid <= 1'b0;
      end
    end

    if (K > 1) begin : g_collect
      /// The first K-1 input beats of the current group, beat s at [s*P_IN*W +: P_IN*W].
      logic [(K-1)*PI*W-1:0] acc;
      // Data registers carry no reset (validity is tracked by cnt and data_out_0_valid).
      for (genvar s = 0; s < K - 1; s++) begin : g_slot
        always_ff @(posedge clk) begin
          if (in_fire && cnt == CW'(s)) acc[s*PI*W+:PI*W] <= data_in_0;
        end
      end
      always_ff @(posedge clk) begin
        if (in_fire && last) data_out_0 <= {data_in_0, acc};
      end
    end else begin : g_register
      // P_IN = P_OUT: a plain pipeline register.
      always_ff @(posedge clk) begin
        if (in_fire) data_out_0 <= data_in_0;
      end
    end
  end else if (SPLIT) begin : g_split
    /// The input beat being sent, shifted down by one slice per output beat sent.
    logic [PI*W-1:0] hold;
    /// An output beat (slice) moves this cycle.
    logic            out_fire;

    assign out_fire = data_out_0_valid && data_out_0_ready;

    // The next input beat is taken when nothing is held or the last slice leaves now.
    assign data_in_0_ready = !data_out_0_valid || (data_out_0_ready && last);
    assign data_out_0 = hold[PO*W-1:0];

    always_ff @(posedge clk) begin
      if (rst) begin
        cnt              <= '0;
        data_out_0_valid <= 1'b0;
      end else if (in_fire) begin
        cnt              <= '0;
        data_out_0_valid <= 1'b1;
      end else if (out_fire) begin
        cnt <= last ? '0 : cnt + 1'b1;
        if (last) data_out_0_valid <= 1'b0;
      end
    end

    always_ff @(posedge clk) begin
      if (in_fire) hold <= data_in_0;
      else if (out_fire) hold <= hold >> (PO * W);
    end
  end else begin : g_invalid
    // Neither lane count divides the other: rejected by the parameter checks above; tie the
    // outputs off so that elaboration reaches them.
    assign data_in_0_ready  = 1'b0;
    assign data_out_0       = '0;
    assign data_out_0_valid = 1'b0;
    assign cnt              = '0;
  end

  // Handshake: every stream port keeps an offered beat offered and unchanged until taken.
  `MASE_ASSERT_STREAM_STABLE(data_in_0)
  `MASE_ASSERT_STREAM_STABLE(data_out_0)
endmodule
