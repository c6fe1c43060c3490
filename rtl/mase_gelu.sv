// mase_gelu: element-wise GELU, x * Phi(x) (erf form), by table lookup with two tails.
//
// Per lane, with the table range [LO, HI] = [max(-TABLE_NEG, min input code),
// min(TABLE_POS, max input code)] (it always holds code 0):
//   x <  LO : y = 0                      (GELU tends to 0)
//   x in [LO, HI] : y = table[x - LO]    (entries generated in Rust by mase_hwlib gelu_table:
//                                         from_f64(gelu(x * 2^-F_in), output format))
//   x >  HI : y = cast(x) into the output format with DATA_OUT_0_ROUNDING / _OVERFLOW
//             (mase_cast_core; GELU tends to the identity)
// The table is a synchronous-read ROM loaded by $readmemh(TABLE_MEM_FILE), one entry per word,
// word k for input code LO + k. Resource choice: every lane has its own copy of the ROM (one read
// port per lane; P lanes cost P ROMs, block RAM when large), so lanes never contend.
// Pipeline: ROM read + input register -> tail select / cast (combinational) -> mase_skid_buffer.
//   Latency: 2 cycles. II: 1 beat per cycle; TENSOR_SIZE_DIM_0 / PARALLELISM_DIM_0 beats per row.
//   Paths cut: data, valid and ready (input ready is a function of registers only).
`ifndef MASE_ASSERT_SVH `include "mase_assert.svh" `endif
module mase_gelu #(
    /// Input: two's complement lanes of 1..16 bits, fractional bits -2^24..2^24.
    `MASE_TENSOR_PARAMS(DATA_IN_0, 8, 4, 8, 1, 4, 1),
    /// Output format: two's complement lanes of 1..32 bits, fractional bits -2^24..2^24.
    `MASE_FORMAT_PARAMS(DATA_OUT_0, 8, 4),
    /// Output shape (must equal the input's).
    `MASE_SHAPE_PARAMS_OF(DATA_OUT_0, DATA_IN_0),
    /// Rounding and overflow of the upper tail, cast(x); the table was generated with the same
    /// modes (its entries saturate with the overflow mode).
    `MASE_MODE_PARAMS(DATA_OUT_0),
    /// The lowest tabulated input code is -TABLE_NEG (0..32768, clamped to the input range);
    /// below it the output is 0.
    parameter int TABLE_NEG = 32768,
    /// Highest tabulated input code (0..32767, clamped to the input range); above it the output
    /// is cast(x).
    parameter int TABLE_POS = 32767,
    /// Path of the table .mem file ($readmemh; "" = all-zero table).
    parameter TABLE_MEM_FILE = ""
) (
    /// Clock and reset (reset empties the pipeline).
    /// data_in_0: input blocks, taken when the input register has room (ready from registers).
    /// data_out_0: output blocks (data and valid registered).
    `MASE_STAGE_PORTS(DATA_IN_0_PARALLELISM_DIM_0 * DATA_IN_0_PARALLELISM_DIM_1 * DATA_IN_0_PRECISION_0,
                      DATA_IN_0_PARALLELISM_DIM_0 * DATA_IN_0_PARALLELISM_DIM_1 * DATA_OUT_0_PRECISION_0)
);
  /// Lanes per beat.
  localparam int N = DATA_IN_0_PARALLELISM_DIM_0 * DATA_IN_0_PARALLELISM_DIM_1;
  /// Input lane width.
  localparam int IW = DATA_IN_0_PRECISION_0;
  /// Output lane width.
  localparam int OW = DATA_OUT_0_PRECISION_0;
  /// Smallest input code.
  localparam int IMIN = -(1 <<< (IW - 1));
  /// Largest input code.
  localparam int IMAX = (1 <<< (IW - 1)) - 1;
  /// Effective lowest tabulated code.
  localparam int LO = -TABLE_NEG > IMIN ? -TABLE_NEG : IMIN;
  /// Effective highest tabulated code.
  localparam int HI = TABLE_POS < IMAX ? TABLE_POS : IMAX;
  /// Table entries (at least 1, so that invalid TABLE_NEG/POS reach the parameter checks).
  localparam int DEPTH = HI >= LO ? HI - LO + 1 : 1;
  /// Table address width.
  localparam int AW = DEPTH > 1 ? $clog2(DEPTH) : 1;
  /// Width of the address arithmetic (input codes and LO/HI are within 17 bits).
  localparam int XW = 18;

`ifndef SYNTHESIS
  initial begin
    `MASE_CHECK_FORMAT(DATA_IN_0, 16);
    `MASE_CHECK_BLOCK_SHAPE(DATA_IN_0);
    `MASE_CHECK_FORMAT(DATA_OUT_0, 32);
    `MASE_CHECK_SAME_SHAPE(DATA_OUT_0, DATA_IN_0);
    `MASE_CHECK_MODES(DATA_OUT_0);
    `MASE_CHECK_RANGE(TABLE_NEG, 0, 32768);
    `MASE_CHECK_RANGE(TABLE_POS, 0, 32767);
  end
`endif

  /// Pipeline advance: the input register is empty or drains into the skid buffer this cycle.
  logic en;
  /// Input register holds a block.
  logic s1_valid;
  /// Skid buffer can take a block (registered).
  logic out_ready;
  /// Lane results (input of the skid buffer).
  logic [N*OW-1:0] y;

  assign en = !s1_valid || out_ready;
  assign data_in_0_ready = en;

  always_ff @(posedge clk) begin
    if (rst) s1_valid <= 1'b0;
    else if (en) s1_valid <= data_in_0_valid;
  end

  for (genvar i = 0; i < N; i++) begin : g_lane
    /// This lane's copy of the table.
    logic [OW-1:0] rom[DEPTH];
    `MASE_ROM_INIT(rom, DEPTH, TABLE_MEM_FILE)

    /// Input code, sign-extended.
    logic signed [XW-1:0] x;
    /// Code below the table.
    logic below;
    /// Code above the table.
    logic above;
    /// ROM address (0 outside the table).
    logic [AW-1:0] addr;
    assign x = XW'($signed(data_in_0[i*IW+:IW]));
    assign below = x < XW'(LO);
    assign above = x > XW'(HI);
    assign addr = (below || above) ? '0 : AW'(x - XW'(LO));

    /// Registered table entry.
    logic [OW-1:0] s1_t;
    /// Registered input code (for the upper tail).
    logic [IW-1:0] s1_x;
    /// Registered below/above flags.
    logic s1_below, s1_above;
    always_ff @(posedge clk) begin
      if (en) begin
        s1_t     <= rom[addr];
        s1_x     <= data_in_0[i*IW+:IW];
        s1_below <= below;
        s1_above <= above;
      end
    end

    /// Upper tail: the input cast into the output format.
    logic [OW-1:0] tail;
    `MASE_CAST_TO(DATA_OUT_0, IW, DATA_IN_0_PRECISION_1, 1, 1, s1_x, tail);
    assign y[i*OW+:OW] = s1_below ? '0 : s1_above ? tail : s1_t;
  end

  `MASE_OUTPUT_SKID(OW, N, y, s1_valid, out_ready);
  // Handshake: every stream port keeps an offered beat offered and unchanged until taken.
  `MASE_ASSERT_STREAM_STABLE(data_in_0)
  `MASE_ASSERT_STREAM_STABLE(data_out_0)
endmodule
