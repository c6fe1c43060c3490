// mase_add_table: data_in_0 plus a constant table whose rows cycle (learned position
// embeddings: BERT's `embeddings + position_const[1, S, H]`, ViT's `x + pos_embed`).
//
// data_in_0 is a stream of rows of H = DATA_IN_0_TENSOR_SIZE_DIM_0 signed elements, PAR =
// DATA_IN_0_PARALLELISM_DIM_0 per beat. The table has R = WEIGHT_TENSOR_SIZE_DIM_1 rows of H
// signed elements (WEIGHT_PRECISION_0 bits, WEIGHT_PRECISION_1 fractional), a block ROM loaded
// from WEIGHT_MEM_FILE in mase_embedding's layout (R*NB words of PAR elements, NB = H / PAR beats
// per row: word r*NB + j, lane i = table[r][j*PAR + i]). Input row k gets table row k mod R added
// element by element: the exact aligned sum, cast to DATA_OUT_0_PRECISION_0/1 with
// DATA_OUT_0_ROUNDING / DATA_OUT_0_OVERFLOW, bit-identical to `mase_ir::fixed::add` then
// `cast_code` (what mase_add computes with the table row's codes on its input 1). R divides the
// rows of a tensor (DATA_IN_0_TENSOR_SIZE_DIM_1), so every tensor starts at table row 0 although
// the row counter never restarts between tensors.
// Structure: a mase_embedding reads the table row by row; its index is a free-running counter
// (always valid, 0..R-1, advancing on each index the embedding takes, wrapping, reset to 0), and
// its output format is the table's own with TRN + SAT, so its cast keeps the codes unchanged.
// Its rows feed input 1 of a mase_add whose input 0 is data_in_0. The embedding runs ahead of the
// data by its output register, so table beats wait for data, not the other way round.
//   Latency: 2 cycles from a data_in_0 beat to its sum (mase_add's two stages; after reset the
//            first table beat is ready 4 cycles later, before the first data beat can join).
//   II:      1 beat per cycle (NB cycles per row: the embedding's rows follow back to back).
//   Paths cut: data_out_0 data and valid (mase_add's registers); data_in_0_ready depends
//            combinationally on data_out_0_ready and the embedding's registered valid (a join).
`ifndef MASE_ASSERT_SVH `include "mase_assert.svh" `endif
module mase_add_table #(
    /// Input: signed elements of 1..64 bits; rows of H (1..65536) elements, DIM_1 rows per
    /// tensor (1..2^20, a multiple of R); PAR elements per beat (1..1024, divides H); one row per
    /// beat (PARALLELISM_DIM_1 = 1).
    `MASE_TENSOR_PARAMS(DATA_IN_0, 8, 4, 8, 4, 4, 1),
    /// Table elements: signed, 1..64 bits, fractional bits within 63 of the input's.
    `MASE_FORMAT_PARAMS(WEIGHT, 8, 6),
    /// H: elements per table row (must equal DATA_IN_0_TENSOR_SIZE_DIM_0).
    parameter int WEIGHT_TENSOR_SIZE_DIM_0 = DATA_IN_0_TENSOR_SIZE_DIM_0,
    /// R: table rows (1..2^24 / NB: at most 2^24 ROM words; divides DATA_IN_0_TENSOR_SIZE_DIM_1).
    parameter int WEIGHT_TENSOR_SIZE_DIM_1 = 2,
    /// Output elements: signed, 1..64 bits.
    `MASE_FORMAT_PARAMS(DATA_OUT_0, 8, 4),
    /// Rounding and overflow of the cast of the exact sum to the output format.
    `MASE_MODE_PARAMS(DATA_OUT_0),
    /// Path of the table's .mem file ($readmemh, one word of PAR elements per line; "" = all
    /// zeros).
    parameter WEIGHT_MEM_FILE = ""
) (
    /// Clock and reset (reset restarts the table at row 0 and empties both pipelines).
    `MASE_CLOCK_PORTS,
    /// Input rows, PAR elements per beat; taken when the table's matching beat is ready and the
    /// output register has room.
    `MASE_STREAM_IN(data_in_0, DATA_IN_0_PARALLELISM_DIM_0 * DATA_IN_0_PRECISION_0),
    /// Sums, PAR elements per beat (data and valid registered).
    `MASE_STREAM_OUT(data_out_0, DATA_IN_0_PARALLELISM_DIM_0 * DATA_OUT_0_PRECISION_0)
);
  /// Table rows, row length, elements per beat and beats per row.
  localparam int R = WEIGHT_TENSOR_SIZE_DIM_1;
  localparam int H = DATA_IN_0_TENSOR_SIZE_DIM_0;
  localparam int PAR = DATA_IN_0_PARALLELISM_DIM_0;
  localparam int NB = H / (PAR > 0 ? PAR : 1);
  /// Bits of a table row index (of R - 1, at least 1: a one-row table still has a 1-bit index).
  localparam int RW = R > 1 ? $clog2(R) : 1;
  /// Table element width.
  localparam int WW = WEIGHT_PRECISION_0;

`ifndef SYNTHESIS
  // The same rules as AddTable::validate, in its order. The instances below check their own
  // parameters too; these come first in the source so that an invalid set is reported in this
  // module's parameter names.
  generate
    `MASE_CHECK_FORMAT(DATA_IN_0, 64);
    `MASE_CHECK_ROW_SHAPE(DATA_IN_0, 65536, 1048576, 1024);
    `MASE_CHECK_FORMAT(WEIGHT, 64);
    if (WEIGHT_PRECISION_1 - DATA_IN_0_PRECISION_1 > 63 ||
        DATA_IN_0_PRECISION_1 - WEIGHT_PRECISION_1 > 63) begin : g_check_alignment
      $fatal(1, "WEIGHT_PRECISION_1 (%0d) must be within 63 of DATA_IN_0_PRECISION_1 (%0d)",
             WEIGHT_PRECISION_1, DATA_IN_0_PRECISION_1);
    end
    `MASE_CHECK_EQUAL(WEIGHT_TENSOR_SIZE_DIM_0, DATA_IN_0_TENSOR_SIZE_DIM_0);
    `MASE_CHECK_RANGE(WEIGHT_TENSOR_SIZE_DIM_1, 1, 16777216 / NB);
    `MASE_CHECK_DIVIDES(WEIGHT_TENSOR_SIZE_DIM_1, DATA_IN_0_TENSOR_SIZE_DIM_1);
    `MASE_CHECK_FORMAT(DATA_OUT_0, 64);
    `MASE_CHECK_MODES(DATA_OUT_0);
  endgenerate
`endif

  /// The table row read next: the embedding's index, always offered.
  logic [RW-1:0] row;
  /// The embedding takes the index (it starts reading that row).
  logic row_ready;

  always_ff @(posedge clk) begin
    if (rst) row <= '0;
    else if (row_ready) row <= (row == RW'(R - 1)) ? '0 : row + 1'b1;
  end

  /// Table beats: the elements of row `row`, PAR per beat, in the table's own format.
  logic [PAR*WW-1:0] tab;
  logic tab_valid, tab_ready;

  mase_embedding #(
      .IDX_WIDTH(RW),
      `MASE_PASS_FORMAT(WEIGHT),
      .WEIGHT_TENSOR_SIZE_DIM_0(H),
      .WEIGHT_TENSOR_SIZE_DIM_1(R),
      // The identity cast: the table's format with TRN + SAT.
      .DATA_OUT_0_PRECISION_0(WEIGHT_PRECISION_0),
      .DATA_OUT_0_PRECISION_1(WEIGHT_PRECISION_1),
      // One index per tensor as far as the embedding knows (its dim 1 is not used by its
      // datapath, and R may exceed the 2^20 it allows there).
      .DATA_OUT_0_TENSOR_SIZE_DIM_0(H),
      .DATA_OUT_0_TENSOR_SIZE_DIM_1(1),
      .DATA_OUT_0_PARALLELISM_DIM_0(PAR),
      .DATA_OUT_0_PARALLELISM_DIM_1(1),
      .DATA_OUT_0_ROUNDING(0),
      .DATA_OUT_0_OVERFLOW(1),
      .WEIGHT_MEM_FILE(WEIGHT_MEM_FILE)
  ) u_table (
      .clk(clk),
      .rst(rst),
      .data_in_0(row),
      .data_in_0_valid(1'b1),
      .data_in_0_ready(row_ready),
      .data_out_0(tab),
      .data_out_0_valid(tab_valid),
      .data_out_0_ready(tab_ready)
  );

  mase_add #(
      `MASE_PASS_FORMAT(DATA_IN_0),
      .DATA_IN_0_TENSOR_SIZE_DIM_0(H),
      .DATA_IN_0_TENSOR_SIZE_DIM_1(DATA_IN_0_TENSOR_SIZE_DIM_1),
      .DATA_IN_0_PARALLELISM_DIM_0(PAR),
      // One row per beat, as the ports are wide: an invalid DATA_IN_0_PARALLELISM_DIM_1 is then
      // reported by this module's check rather than as a port width mismatch.
      .DATA_IN_0_PARALLELISM_DIM_1(1),
      .DATA_IN_1_PRECISION_0(WEIGHT_PRECISION_0),
      .DATA_IN_1_PRECISION_1(WEIGHT_PRECISION_1),
      `MASE_PASS_FORMAT(DATA_OUT_0),
      `MASE_PASS_MODES(DATA_OUT_0)
  ) u_add (
      .clk(clk),
      .rst(rst),
      `MASE_PASS_STREAM(data_in_0),
      .data_in_1(tab),
      .data_in_1_valid(tab_valid),
      .data_in_1_ready(tab_ready),
      `MASE_PASS_STREAM(data_out_0)
  );

  // Handshake: every stream port keeps an offered beat offered and unchanged until taken.
  `MASE_ASSERT_STREAM_STABLE(data_in_0)
  `MASE_ASSERT_STREAM_STABLE(data_out_0)
endmodule
