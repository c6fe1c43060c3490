// mase_embedding: table lookup (an embedding): for every index on data_in_0, the table's row at
// that index on data_out_0, cast to the output format.
//
// The table has V = WEIGHT_TENSOR_SIZE_DIM_1 rows of H = WEIGHT_TENSOR_SIZE_DIM_0 signed elements
// (WEIGHT_PRECISION_0 bits, WEIGHT_PRECISION_1 fractional). It is a synchronous-read block ROM
// loaded from WEIGHT_MEM_FILE ($readmemh; "" = all zeros) of V*NB words of PAR elements
// (PAR = DATA_OUT_0_PARALLELISM_DIM_0, NB = H / PAR beats per row): word r*NB + j, lane i =
// table[r][j*PAR + i] (lane i at bits [i*WEIGHT_PRECISION_0 +: WEIGHT_PRECISION_0]).
// data_in_0 carries one unsigned IDX_WIDTH-bit index per beat. For each index r, data_out_0
// carries NB beats: the elements of row r in order, PAR per beat, each cast from the table's
// format to DATA_OUT_0_PRECISION_0/1 (signed) with DATA_OUT_0_ROUNDING / DATA_OUT_0_OVERFLOW. An
// index r >= V (possible when 2^IDX_WIDTH > V) gives a row of H zeros; negative indices do not
// exist on this port (the producer normalizes them).
// Schedule: an index is held while its row's words are read, one per cycle the output register
// has room; the next index is taken in the cycle of the last read, so rows follow back to back.
//   Latency: 4 cycles from an index to the first beat of its row (take, ROM read, R, output
//            register).
//   II:      NB cycles per index (one output beat per cycle).
//   Paths cut: data_in_0_ready is a function of registers (the held index, the beat counter and
//            the skid buffer's registered ready); the ROM read is registered, and registered once
//            more (R) before the cast, so a block RAM's clock-to-out (5.8 ns on ECP5 without its
//            output register) ends at a register; the output is the register of a
//            mase_skid_buffer (data, valid and ready cut).
`ifndef MASE_ASSERT_SVH `include "mase_assert.svh" `endif
module mase_embedding #(
    /// Bits of an index on data_in_0 (unsigned; at least the bits of V - 1, at least 1; at most
    /// 32).
    parameter int IDX_WIDTH = 4,
    /// Table elements: signed, 1..64 bits.
    `MASE_FORMAT_PARAMS(WEIGHT, 8, 6),
    /// H: elements per table row (1..65536).
    parameter int WEIGHT_TENSOR_SIZE_DIM_0 = 8,
    /// V: table rows, the number of valid indices (1..2^24 / NB: at most 2^24 ROM words).
    parameter int WEIGHT_TENSOR_SIZE_DIM_1 = 10,
    /// Output elements: signed, 1..64 bits.
    `MASE_FORMAT_PARAMS(DATA_OUT_0, 8, 4),
    /// Output shape: rows of H elements (dim 0 must equal WEIGHT_TENSOR_SIZE_DIM_0), one per index
    /// (dim 1: indices per tensor, 1..2^20, not used by the datapath); PAR elements per beat
    /// (1..1024, divides H); one row per beat (PARALLELISM_DIM_1 = 1).
    `MASE_SHAPE_PARAMS(DATA_OUT_0, WEIGHT_TENSOR_SIZE_DIM_0, 4, 4, 1),
    /// Rounding and overflow of the cast from the table's format to the output format.
    `MASE_MODE_PARAMS(DATA_OUT_0),
    /// Path of the table's .mem file ($readmemh, one word of PAR elements per line; "" = all
    /// zeros).
    parameter WEIGHT_MEM_FILE = ""
) (
    /// Clock and reset (reset drops the held index and empties the pipeline).
    `MASE_CLOCK_PORTS,
    /// Indices, one per beat (unsigned); taken when no row is being read, or with the last read
    /// of the current row.
    `MASE_STREAM_IN(data_in_0, IDX_WIDTH),
    /// Table rows: NB beats per index, PAR output elements per beat (data and valid registered).
    `MASE_STREAM_OUT(data_out_0, DATA_OUT_0_PARALLELISM_DIM_0 * DATA_OUT_0_PRECISION_0)
);
  /// Table rows and row length; elements per beat and beats per row.
  localparam int V = WEIGHT_TENSOR_SIZE_DIM_1;
  localparam int H = WEIGHT_TENSOR_SIZE_DIM_0;
  localparam int PAR = DATA_OUT_0_PARALLELISM_DIM_0;
  localparam int NB = H / (PAR > 0 ? PAR : 1);
  /// Table and output element widths.
  localparam int WW = WEIGHT_PRECISION_0;
  localparam int OW = DATA_OUT_0_PRECISION_0;
  /// ROM words, ROM address width, beat counter width.
  localparam int NW = V * NB;
  localparam int AW = NW > 1 ? $clog2(NW) : 1;
  localparam int JW = NB > 1 ? $clog2(NB) : 1;
  /// Bits an index needs (of V - 1, at least 1).
  localparam int VBITS = V > 1 ? $clog2(V) : 1;
  /// Some IDX_WIDTH-bit index is out of range (V < 2^IDX_WIDTH).
  localparam bit CAN_OOR = $clog2(V + 1) <= IDX_WIDTH;

`ifndef SYNTHESIS
  generate
    `MASE_CHECK_FORMAT(WEIGHT, 64);
    `MASE_CHECK_RANGE(WEIGHT_TENSOR_SIZE_DIM_0, 1, 65536);
    `MASE_CHECK_FORMAT(DATA_OUT_0, 64);
    `MASE_CHECK_EQUAL(DATA_OUT_0_TENSOR_SIZE_DIM_0, WEIGHT_TENSOR_SIZE_DIM_0);
    `MASE_CHECK_ROW_SHAPE(DATA_OUT_0, 65536, 1048576, 1024);
    `MASE_CHECK_RANGE(WEIGHT_TENSOR_SIZE_DIM_1, 1, 16777216 / NB);
    `MASE_CHECK_RANGE(IDX_WIDTH, VBITS, 32);
    `MASE_CHECK_MODES(DATA_OUT_0);
  endgenerate
`endif

  /// The read pipeline advances: the output skid buffer can take a beat.
  logic adv;
  /// A row is being read; its index is out of range.
  logic have, oor_q;
  /// The ROM word read next and its beat within the row.
  logic [AW-1:0] addr;
  logic [JW-1:0] beat;
  /// The next read is the row's last; a word is read this cycle; an index is taken; the offered
  /// index is out of range.
  logic last, issue, take, oor;

  assign last = beat == JW'(NB - 1);
  assign issue = have && adv;
  assign data_in_0_ready = !have || (adv && last);
  assign take = data_in_0_valid && data_in_0_ready;

  if (CAN_OOR) begin : g_oor
    assign oor = data_in_0 >= IDX_WIDTH'(V);
  end else begin : g_no_oor
    assign oor = 1'b0;
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      have <= 1'b0;
      beat <= '0;
    end else begin
      if (take) have <= 1'b1;
      else if (issue && last) have <= 1'b0;
      if (issue) beat <= last ? '0 : beat + 1'b1;
    end
  end

  /// The offered index as an address, and r * NB as a sum of shifted copies of it, one per set
  /// bit of NB (NB <= 65536 has bits 0..16): adders, not a multiplier, which Yosys would map onto
  /// a DSP slice for a constant product of 9 or more bits.
  logic [AW-1:0] r_addr, r_times;
  assign r_addr = AW'(data_in_0);
  always_comb begin
    r_times = '0;
    for (int k = 0; k < 17; k++) begin
      if (((NB >> k) & 1) != 0) r_times = r_times + (r_addr << k);
    end
  end

  // The address of a row's first word is r * NB (0 for an out-of-range index, whose words are
  // replaced by zeros); the following words are consecutive.
  always_ff @(posedge clk) begin
    if (take) begin
      addr  <= oor ? '0 : r_times;
      oor_q <= oor;
    end else if (issue) begin
      addr <= addr + 1'b1;
    end
  end

  /// Table ROM: word r*NB + j, lane i = table[r][j*PAR + i].
  (* rom_style = "block" *) logic [PAR*WW-1:0] rom[NW];
  `MASE_ROM_INIT(rom, NW, WEIGHT_MEM_FILE)

  /// S1: the word read, whether it is a zero row's, and whether it is valid.
  logic [PAR*WW-1:0] s1_word;
  logic s1_zero, s1_valid;

  always_ff @(posedge clk) begin
    if (issue) begin
      s1_word <= rom[addr];
      s1_zero <= oor_q;
    end
  end

  `MASE_VALID_REG(s1_valid, adv, have)

  /// R: the word of S1 one cycle later (the stages advance together).
  logic [PAR*WW-1:0] r_word;
  logic r_zero, r_valid;
  always_ff @(posedge clk) begin
    if (adv) begin
      r_word <= s1_word;
      r_zero <= s1_zero;
    end
  end
  `MASE_VALID_REG(r_valid, adv, s1_valid)

  /// R's elements cast to the output format.
  logic [PAR*OW-1:0] r_out;
  for (genvar i = 0; i < PAR; i++) begin : g_lane
    /// Table element i of the word (zero for an out-of-range index).
    logic [WW-1:0] x;
    assign x = r_zero ? '0 : r_word[i*WW+:WW];
    `MASE_CAST_TO(DATA_OUT_0, WW, WEIGHT_PRECISION_1, 1, 1, x, r_out[i*OW+:OW]);
  end

  `MASE_OUTPUT_SKID(OW, PAR, r_out, r_valid, adv);

  // Handshake: every stream port keeps an offered beat offered and unchanged until taken.
  `MASE_ASSERT_STREAM_STABLE(data_in_0)
  `MASE_ASSERT_STREAM_STABLE(data_out_0)
endmodule
