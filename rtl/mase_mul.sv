// mase_mul: multiplication of a signed fixed-point stream by a constant, exact product then cast.
//
// Each lane computes y = cast(x * c): the product of the input code x (DATA_IN_0_PRECISION_0
// bits, DATA_IN_0_PRECISION_1 fractional) and the constant code c (CONST_PRECISION_0 bits,
// CONST_PRECISION_1 fractional) is formed exactly in DATA_IN_0_PRECISION_0 + CONST_PRECISION_0
// bits and re-quantized once by mase_cast_core into the output format with DATA_OUT_0_ROUNDING
// and DATA_OUT_0_OVERFLOW (bit-identical to mase_ir::fixed::cast_code).
// The constant is the scalar CONST_VALUE (CONST_PER_CHANNEL = 0) or, per column of dim 0, a word
// of the ROM loaded from CONST_MEM_FILE (CONST_PER_CHANNEL = 1): word b holds the constants of
// columns b*P0 .. b*P0+P0-1 (lane j = column b*P0+j) and is read with the index of the beat in
// its block row; lane r*P0+j of a P1 x P0 block uses lane j of the word.
// A scalar constant that is 0 or +-2^k uses no multiplier: the exact product is a left shift by k
// of the (negated, for a negative constant) input.
// Pipeline: S1 input register (and the synchronous ROM read) -> S2 exact product -> cast
// (combinational) -> mase_skid_buffer; S1 and S2 advance together when S2 is empty or the skid
// buffer takes its beat.
//   Latency: 3 cycles. II: 1 beat per cycle; TENSOR_SIZE_DIM_0 / PARALLELISM_DIM_0 beats per row.
//   Paths cut: data, valid and ready (input ready is a function of registers only); the
//   multiplier from the cast (S2).
`ifndef MASE_ASSERT_SVH `include "mase_assert.svh" `endif
module mase_mul #(
    /// Input: two's complement lanes of 1..32 bits, fractional bits -2^24..2^24; dim 0 is the
    /// channel dimension (P0 = DATA_IN_0_PARALLELISM_DIM_0 elements of it per beat, P1 rows).
    `MASE_TENSOR_PARAMS(DATA_IN_0, 8, 4, 8, 1, 4, 1),
    /// Constant format: two's complement, 1..32 bits, fractional bits -2^24..2^24.
    `MASE_FORMAT_PARAMS(CONST, 8, 4),
    /// 0: one scalar constant CONST_VALUE; 1: one constant per column from the ROM.
    parameter int CONST_PER_CHANNEL = 0,
    /// Scalar constant as an integer code of the constant format (unused when per channel).
    parameter int CONST_VALUE = 24,
    /// Output format: two's complement lanes of 1..64 bits, fractional bits -2^24..2^24.
    `MASE_FORMAT_PARAMS(DATA_OUT_0, 8, 4),
    /// Output shape (must equal the input's).
    `MASE_SHAPE_PARAMS_OF(DATA_OUT_0, DATA_IN_0),
    /// Rounding and overflow of the cast of the exact product.
    `MASE_MODE_PARAMS(DATA_OUT_0),
    /// Path of the per-channel constant .mem file ($readmemh; used only when CONST_PER_CHANNEL = 1;
    /// "" = all-zero constants).
    parameter CONST_MEM_FILE = ""
) (
    /// Clock and reset (reset empties the pipeline and restarts the beat counter).
    /// data_in_0: input blocks, taken when the input register has room (ready from registers).
    /// data_out_0: output blocks (data and valid registered).
    `MASE_STAGE_PORTS(DATA_IN_0_PARALLELISM_DIM_0 * DATA_IN_0_PARALLELISM_DIM_1 * DATA_IN_0_PRECISION_0,
                      DATA_IN_0_PARALLELISM_DIM_0 * DATA_IN_0_PARALLELISM_DIM_1 * DATA_OUT_0_PRECISION_0)
);
  /// Lanes per beat.
  localparam int N = DATA_IN_0_PARALLELISM_DIM_0 * DATA_IN_0_PARALLELISM_DIM_1;
  /// Elements of dim 0 per beat.
  localparam int P0 = DATA_IN_0_PARALLELISM_DIM_0;
  /// Input lane width.
  localparam int IW = DATA_IN_0_PRECISION_0;
  /// Constant width.
  localparam int CW = CONST_PRECISION_0;
  /// Output lane width.
  localparam int OW = DATA_OUT_0_PRECISION_0;
  /// Exact product width.
  localparam int PW = IW + CW;
  /// Beats per block row (ROM depth when per channel).
  localparam int NB = DATA_IN_0_TENSOR_SIZE_DIM_0 / P0;
  /// Beat counter width.
  localparam int BW = NB > 1 ? $clog2(NB) : 1;
  /// The scalar constant, 64 bits.
  localparam logic signed [63:0] CV = 64'(CONST_VALUE);
  /// Magnitude of the scalar constant.
  localparam logic signed [63:0] CABS = CV < 0 ? -CV : CV;
  /// 1 when the scalar constant is 0 or a power of two in magnitude (shift datapath).
  localparam bit SHIFT_MODE = CONST_PER_CHANNEL == 0 && (CABS & (CABS - 1)) == 0;
  /// Left shift of the shift datapath (log2 |CONST_VALUE|).
  localparam int SHIFT = CABS > 1 ? $clog2(CABS) : 0;

`ifndef SYNTHESIS
  /// Smallest constant code.
  localparam logic signed [63:0] CMIN = -(64'sd1 <<< (CW - 1));
  /// Largest constant code.
  localparam logic signed [63:0] CMAX = (64'sd1 <<< (CW - 1)) - 1;
  generate
    `MASE_CHECK_FORMAT(DATA_IN_0, 32);
    `MASE_CHECK_BLOCK_SHAPE(DATA_IN_0);
    `MASE_CHECK_RANGE(CONST_PRECISION_0, 1, 32);
    `MASE_CHECK_RANGE(CONST_PRECISION_1, -16777216, 16777216);
    `MASE_CHECK_FLAG(CONST_PER_CHANNEL);
    if (CV < CMIN || CV > CMAX) begin : g_check_CONST_VALUE
      $fatal(1, "CONST_VALUE must be between %0d and %0d, got %0d", CMIN, CMAX, CONST_VALUE);
    end
    `MASE_CHECK_FORMAT(DATA_OUT_0, 64);
    `MASE_CHECK_SAME_SHAPE(DATA_OUT_0, DATA_IN_0);
    `MASE_CHECK_MODES(DATA_OUT_0);
  endgenerate
`endif

  /// Pipeline advance: the input register is empty or drains into the skid buffer this cycle.
  logic en;
  /// Input register holds a block.
  logic s1_valid;
  // Waiver: with CONST_VALUE = 0 the product is constant 0 and the input data is never read.
  /* verilator lint_off UNUSEDSIGNAL */
  /// Input register: the block.
  logic [N*IW-1:0] s1_x;
  /* verilator lint_on UNUSEDSIGNAL */
  /// Skid buffer can take a block (registered).
  logic out_ready;
  /// Index of the next input beat within its block row.
  logic [BW-1:0] beat;

  /// S2: the exact products of S1's beat.
  logic s2_valid;
  logic [N*PW-1:0] s2_prod;
  assign en = !s2_valid || out_ready;
  assign data_in_0_ready = en;

  always_ff @(posedge clk) begin
    if (rst) begin
      s1_valid <= 1'b0;
      s2_valid <= 1'b0;
      beat     <= '0;
    end else if (en) begin
      s1_valid <= data_in_0_valid;
      s2_valid <= s1_valid;
      if (data_in_0_valid) beat <= (beat == BW'(NB - 1)) ? '0 : beat + 1'b1;
    end
  end

  always_ff @(posedge clk) begin
    if (en) s1_x <= data_in_0;
  end

  if (CONST_PER_CHANNEL != 0) begin : g_rom
    /// Constants of the block's columns (P0 lanes of CW bits), read with the block.
    logic [P0*CW-1:0] s1_c;
    /// Per-channel constant ROM: word b, lane j = constant of column b*P0 + j.
    logic [P0*CW-1:0] rom[NB];
    `MASE_ROM_INIT(rom, NB, CONST_MEM_FILE)
    always_ff @(posedge clk) begin
      if (en) s1_c <= rom[beat];
    end
  end

  /// Exact products of the lanes.
  logic [N*PW-1:0] prod;
  /// Cast products (input of the skid buffer).
  logic [N*OW-1:0] y;

  for (genvar i = 0; i < N; i++) begin : g_lane
    if (SHIFT_MODE && CONST_VALUE == 0) begin : g_zero
      assign prod[i*PW+:PW] = '0;
    end else begin : g_nonzero
      /// Input lane sign-extended to the product width.
      logic signed [PW-1:0] xe;
      assign xe = PW'($signed(s1_x[i*IW+:IW]));
      if (SHIFT_MODE && CONST_VALUE < 0) begin : g_neg
        assign prod[i*PW+:PW] = (-xe) <<< SHIFT;
      end else if (SHIFT_MODE) begin : g_pos
        assign prod[i*PW+:PW] = xe <<< SHIFT;
      end else if (CONST_PER_CHANNEL != 0) begin : g_chan
        /// Constant of this lane's column, sign-extended.
        logic signed [PW-1:0] ce;
        assign ce = PW'($signed(g_rom.s1_c[(i%P0)*CW+:CW]));
        assign prod[i*PW+:PW] = xe * ce;
      end else begin : g_scalar
        /// The scalar constant, sign-extended.
        localparam logic signed [PW-1:0] CE = PW'(CONST_VALUE);
        assign prod[i*PW+:PW] = xe * CE;
      end
    end
    // One register process per lane: Yosys 0.23's synth_xilinx, folding one lane's slice of a
    // single shared product register into that lane's DSP48 P register, loses the other lanes
    // (at the defaults it kept 1 DSP48E1 and made lanes 0..2 constant); ECP5 and Verilator are
    // unaffected either way.
    always_ff @(posedge clk) begin
      if (en) s2_prod[i*PW+:PW] <= prod[i*PW+:PW];
    end
    `MASE_CAST_TO(DATA_OUT_0, PW, DATA_IN_0_PRECISION_1 + CONST_PRECISION_1, 1, 1, s2_prod[i*PW+:PW],
                  y[i*OW+:OW]);
  end

  `MASE_OUTPUT_SKID(OW, N, y, s2_valid, out_ready);
  // Handshake: every stream port keeps an offered beat offered and unchanged until taken.
  `MASE_ASSERT_STREAM_STABLE(data_in_0)
  `MASE_ASSERT_STREAM_STABLE(data_out_0)
endmodule
