// mase_row_select: keeps the rows of one position of a gathered axis and drops the others: a
// Gather of one constant index on an axis before the last (a BERT pooler's first token,
// hidden[:, 0, :]).
//
// The input streams rows of the tensor's last axis (DATA_IN_0_TENSOR_SIZE_DIM_0 elements,
// DATA_IN_0_PARALLELISM_DIM_0 per beat, one row per beat group). Rows arrive in groups of
// GROUP x INNER rows: GROUP is the size of the gathered axis and INNER the product of the axes
// strictly between it and the last axis, so row r of a group lies at position r / INNER of the
// gathered axis. The INNER rows at position INDEX (rows INDEX*INNER .. INDEX*INNER + INNER - 1 of
// every group) pass unchanged, in order and in the input's format (no cast); every other beat is
// taken (ready high) and dropped. DATA_IN_0_TENSOR_SIZE_DIM_1 (rows per tensor) is a whole number
// of groups; the output has DATA_IN_0_TENSOR_SIZE_DIM_1 / GROUP rows.
// Kept beats go through a mase_skid_buffer; three counters (beat within the row, row within the
// position, position on the gathered axis) say which beats are kept. Nothing else is stored.
//   Latency: 1 cycle from a kept beat to the output; INDEX*INNER*B + 1 cycles from a group's first
//            input beat to its first output beat (B = DATA_IN_0_TENSOR_SIZE_DIM_0 /
//            DATA_IN_0_PARALLELISM_DIM_0 beats per row).
//   II:      1 input beat per cycle with no back-pressure (GROUP*INNER*B cycles per group).
//   Paths cut: data and valid (skid buffer registers); data_in_0_ready is a function of registers
//            only (the position counter and the skid buffer's registered ready).
`ifndef MASE_ASSERT_SVH `include "mase_assert.svh" `endif
module mase_row_select #(
    /// Input: lanes of 1..64 bits, moved and never interpreted (the fractional bits are format
    /// only); rows of 1..2^20 elements; 1..2^20 rows per tensor (a multiple of GROUP * INNER);
    /// 1..1024 elements per beat dividing the row; one row per beat (PARALLELISM_DIM_1 = 1).
    `MASE_TENSOR_PARAMS(DATA_IN_0, 8, 4, 8, 4, 4, 1),
    /// Size of the gathered axis (1..DATA_IN_0_TENSOR_SIZE_DIM_1).
    parameter int GROUP = 4,
    /// Rows per position of the gathered axis: the product of the axes between it and the last
    /// axis (1..DATA_IN_0_TENSOR_SIZE_DIM_1 / GROUP; 1 when the gathered axis is the
    /// second-to-last).
    parameter int INNER = 1,
    /// The position kept (0..GROUP - 1; a negative ONNX index is normalized by the binding).
    parameter int INDEX = 0,
    /// Output format (must equal the input's: rows are moved, never re-quantized).
    `MASE_FORMAT_PARAMS(DATA_OUT_0, DATA_IN_0_PRECISION_0, DATA_IN_0_PRECISION_1),
    /// Output shape: the input's row length and lanes, DATA_IN_0_TENSOR_SIZE_DIM_1 / GROUP rows.
    `MASE_SHAPE_PARAMS(DATA_OUT_0, DATA_IN_0_TENSOR_SIZE_DIM_0, 1, DATA_IN_0_PARALLELISM_DIM_0,
                       DATA_IN_0_PARALLELISM_DIM_1)
) (
    /// Clock and reset (reset restarts the counters at the first beat of a group and empties the
    /// output register).
    /// data_in_0: input beats; a dropped beat is always taken, a kept one when the output
    /// register has room.
    /// data_out_0: the kept beats, unchanged (data and valid registered).
    `MASE_STAGE_PORTS(DATA_IN_0_PARALLELISM_DIM_0 * DATA_IN_0_PARALLELISM_DIM_1 * DATA_IN_0_PRECISION_0,
                      DATA_OUT_0_PARALLELISM_DIM_0 * DATA_OUT_0_PARALLELISM_DIM_1 * DATA_OUT_0_PRECISION_0)
);
  /// Bits per element, elements of a row per beat and lanes per beat (P: PARALLELISM_DIM_1 is 1).
  localparam int W = DATA_IN_0_PRECISION_0;
  localparam int P = DATA_IN_0_PARALLELISM_DIM_0;
  localparam int L = P * DATA_IN_0_PARALLELISM_DIM_1;
  /// Beats per row and rows per group.
  localparam int RB = DATA_IN_0_TENSOR_SIZE_DIM_0 / P;
  localparam int GR = GROUP * INNER;
  /// Counter widths: beat of a row, row of a position, position of the gathered axis.
  localparam int BW = RB > 1 ? $clog2(RB) : 1;
  localparam int IW = INNER > 1 ? $clog2(INNER) : 1;
  localparam int GW = GROUP > 1 ? $clog2(GROUP) : 1;
  /// Output rows per tensor.
  localparam int OUT_D1 = DATA_IN_0_TENSOR_SIZE_DIM_1 / (GROUP > 0 ? GROUP : 1);

`ifndef SYNTHESIS
  generate
    `MASE_CHECK_FORMAT(DATA_IN_0, 64);
    `MASE_CHECK_ROW_SHAPE(DATA_IN_0, 1048576, 1048576, 1024);
    `MASE_CHECK_RANGE(GROUP, 1, DATA_IN_0_TENSOR_SIZE_DIM_1);
    `MASE_CHECK_RANGE(INNER, 1, DATA_IN_0_TENSOR_SIZE_DIM_1 / GROUP);
    `MASE_CHECK_RANGE(INDEX, 0, GROUP - 1);
    if (DATA_IN_0_TENSOR_SIZE_DIM_1 % GR != 0) begin : g_check_group
      $fatal(1, "GROUP * INNER (%0d) must divide DATA_IN_0_TENSOR_SIZE_DIM_1 (%0d)", GR,
             DATA_IN_0_TENSOR_SIZE_DIM_1);
    end
    `MASE_CHECK_EQUAL(DATA_OUT_0_PRECISION_0, DATA_IN_0_PRECISION_0);
    `MASE_CHECK_EQUAL(DATA_OUT_0_PRECISION_1, DATA_IN_0_PRECISION_1);
    `MASE_CHECK_EQUAL(DATA_OUT_0_TENSOR_SIZE_DIM_0, DATA_IN_0_TENSOR_SIZE_DIM_0);
    `MASE_CHECK_EQUAL_TO(DATA_OUT_0_TENSOR_SIZE_DIM_1, "DATA_IN_0_TENSOR_SIZE_DIM_1 / GROUP", OUT_D1);
    `MASE_CHECK_EQUAL(DATA_OUT_0_PARALLELISM_DIM_0, DATA_IN_0_PARALLELISM_DIM_0);
    `MASE_CHECK_EQUAL(DATA_OUT_0_PARALLELISM_DIM_1, DATA_IN_0_PARALLELISM_DIM_1);
  endgenerate
`endif

  /// Where the next input beat lies: its beat within the row, its row within the position, its
  /// position on the gathered axis.
  logic [BW-1:0] beat;
  logic [IW-1:0] sub;
  logic [GW-1:0] pos;
  /// The next input beat is kept; the output register has room; an input beat moves.
  logic keep, out_ready, take;

  assign keep = pos == GW'(INDEX);
  assign data_in_0_ready = !keep || out_ready;
  assign take = data_in_0_valid && data_in_0_ready;

  always_ff @(posedge clk) begin
    if (rst) begin
      beat <= '0;
      sub  <= '0;
      pos  <= '0;
    end else if (take) begin
      if (beat != BW'(RB - 1)) begin
        beat <= beat + 1'b1;
      end else begin
        beat <= '0;
        if (sub != IW'(INNER - 1)) begin
          sub <= sub + 1'b1;
        end else begin
          sub <= '0;
          pos <= pos == GW'(GROUP - 1) ? '0 : pos + 1'b1;
        end
      end
    end
  end

  `MASE_OUTPUT_SKID(W, L, data_in_0, data_in_0_valid && keep, out_ready);

  // Handshake: every stream port keeps an offered beat offered and unchanged until taken.
  `MASE_ASSERT_STREAM_STABLE(data_in_0)
  `MASE_ASSERT_STREAM_STABLE(data_out_0)
endmodule
