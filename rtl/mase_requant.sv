// mase_requant: requantisation of exact integer sums into the codes of another real scale.
//
// Each lane j of column c computes y = sat(round(acc * m[c] * 2^-(ACC_FRAC + MULT_SHIFT)) + ZP):
// the exact sum acc (DATA_IN_0_PRECISION_0 bits, DATA_IN_0_PRECISION_1 = ACC_FRAC fractional
// bits, two's complement) times the column's unsigned multiplier m[c] (MULT_WIDTH bits, read from
// a ROM), rounded half to even at MULT_SHIFT + ACC_FRAC fraction bits, plus the output zero
// point DATA_OUT_0_ZERO_POINT, saturated into DATA_OUT_0_PRECISION_0-bit codes (two's complement
// when DATA_OUT_0_SIGNED, else unsigned). This is `mase_ir::quant::requant::apply` bit for bit:
// the real multiplier M[c] = s_x * s_w[c] / s_y of a quantized model is m[c] * 2^-MULT_SHIFT.
// ROM word b holds the multipliers of columns b*P0 .. b*P0+P0-1 (lane j = column b*P0+j) and is
// read with the index of the beat in its row.
// The product is formed as u * m - s * m * 2^AW, with u the sum's bits read unsigned and s its
// sign, so the multiplier is mase_split_mul's unsigned partial products (one DSP per 17 x 17
// piece, operands and partial products registered) and the sign costs one subtraction.
// Pipeline: S1 input register and ROM read -> mase_split_mul (operand, partial-product and
// fabric registers) -> U sum of the partial products -> P signed product -> R rounded -> zero
// point and saturation
// (combinational) -> mase_skid_buffer; every stage advances together when the skid buffer can
// take a beat or the pipeline has room.
//   Latency: 8 cycles. II: 1 beat per cycle.
//   Paths cut: data, valid and ready (input ready is a function of registers only); the
//   multipliers from the adders; the partial products' sum from the sign correction; the
//   rounding from the saturation.
// An internal module of mase_qlinear, whose parameter checks cover these parameters.
`ifndef MASE_ASSERT_SVH `include "mase_assert.svh" `endif
module mase_requant #(
    /// Input: exact sums, two's complement, 2..64 bits with ACC_FRAC fractional bits; columns
    /// per row (multipliers in the ROM) and per beat (lanes).
    `MASE_VECTOR_PARAMS(DATA_IN_0, 24, 0, 8, 4),
    /// Bits of an unsigned multiplier (1..32).
    parameter int MULT_WIDTH = 24,
    /// Fraction bits of every multiplier (m * 2^-MULT_SHIFT is the real factor).
    parameter int MULT_SHIFT = 30,
    /// Output code width (1..32).
    parameter int DATA_OUT_0_PRECISION_0 = 8,
    /// 1: two's complement output codes; 0: unsigned.
    parameter int DATA_OUT_0_SIGNED = 1,
    /// Zero point added after the rounding (within the output code range).
    parameter int DATA_OUT_0_ZERO_POINT = 0,
    /// Path of the multiplier .mem file ($readmemh; "" = all-zero multipliers).
    parameter MULT_MEM_FILE = ""
) (
    /// Clock and reset (reset empties the pipeline and restarts the beat counter).
    /// data_in_0: exact sums, one column per lane, taken when the pipeline has room.
    /// data_out_0: output codes (data and valid registered).
    `MASE_STAGE_PORTS(DATA_IN_0_PARALLELISM_DIM_0 * DATA_IN_0_PRECISION_0,
                      DATA_IN_0_PARALLELISM_DIM_0 * DATA_OUT_0_PRECISION_0)
);
  /// Lanes per beat.
  localparam int N = DATA_IN_0_PARALLELISM_DIM_0;
  /// Input width.
  localparam int AW = DATA_IN_0_PRECISION_0;
  /// Multiplier width (at least 1, so that an invalid MULT_WIDTH still elaborates to
  /// mase_qlinear's check).
  localparam int MW = MULT_WIDTH > 0 ? MULT_WIDTH : 1;
  /// Output width.
  localparam int OW = DATA_OUT_0_PRECISION_0;
  /// Signed product width (u * m needs AW + MW bits, the sign one more).
  localparam int PW = AW + MW + 1;
  /// Fraction bits of the product.
  localparam int PF = DATA_IN_0_PRECISION_1 + MULT_SHIFT;
  /// Width of the rounded product: all its integer bits (at least OW + 3, so that saturating here
  /// and then adding the zero point saturates exactly as the unbounded sum would), at most 64.
  localparam int RW0 = PW - PF + 2 > OW + 3 ? PW - PF + 2 : OW + 3;
  localparam int RW = RW0 > 64 ? 64 : RW0;
  /// Beats per row (ROM depth).
  localparam int NB = DATA_IN_0_TENSOR_SIZE_DIM_0 / N;
  /// Beat counter width.
  localparam int BW = NB > 1 ? $clog2(NB) : 1;
  /// Cycles from S1 to mase_split_mul's product (operand, partial-product, fabric registers).
  localparam int MUL_STAGES = 3;

  /// Pipeline advance: the last stage is empty or drains into the skid buffer this cycle.
  logic en;
  /// Valid bits: S1, the multiplier's stages, U, P, R.
  logic [MUL_STAGES+3:0] v;
  /// Skid buffer can take a beat (registered).
  logic out_ready;
  /// Index of the next input beat within its row.
  logic [BW-1:0] beat;
  /// S1: the sums and their columns' multipliers.
  logic [N*AW-1:0] s1_acc;
  logic [N*MW-1:0] s1_m;
  /// Multiplier ROM: word b, lane j = multiplier of column b*N + j.
  logic [N*MW-1:0] rom[NB];
  `MASE_ROM_INIT(rom, NB, MULT_MEM_FILE)

  assign en = !v[MUL_STAGES+3] || out_ready;
  assign data_in_0_ready = en;

  always_ff @(posedge clk) begin
    if (rst) begin
      v    <= '0;
      beat <= '0;
    end else if (en) begin
      v <= {v[MUL_STAGES+2:0], data_in_0_valid};
      if (data_in_0_valid) beat <= (beat == BW'(NB - 1)) ? '0 : beat + 1'b1;
    end
  end

  always_ff @(posedge clk) begin
    if (en) begin
      s1_acc <= data_in_0;
      s1_m   <= rom[beat];
    end
  end

  /// Output codes of the lanes (input of the skid buffer).
  logic [N*OW-1:0] y;

  for (genvar i = 0; i < N; i++) begin : g_lane
    /// u * m: the sum's bits read unsigned, times the multiplier.
    logic [AW+MW-1:0] um;
    mase_split_mul #(
        .A_WIDTH(AW),
        .B_WIDTH(MW),
        .OP_REG (1),
        .PP_REG (1)
    ) u_mul (
        .clk(clk),
        .en (en),
        .a  (s1_acc[i*AW+:AW]),
        .b  (s1_m[i*MW+:MW]),
        .y  (um)
    );
    /// The sum's sign and the multiplier, delayed alongside the multiplier's stages.
    logic [MUL_STAGES-1:0] sgn_d;
    logic [MUL_STAGES*MW-1:0] m_d;
    always_ff @(posedge clk) begin
      if (en) begin
        sgn_d <= {sgn_d[MUL_STAGES-2:0], s1_acc[i*AW+AW-1]};
        m_d   <= {m_d[(MUL_STAGES-1)*MW-1:0], s1_m[i*MW+:MW]};
      end
    end
    /// U: u * m (the partial products' sum) registered with the correction it needs, so that
    /// the sum and the subtraction are each a cycle's carry chains.
    logic [AW+MW-1:0] u_um;
    logic [PW-1:0] u_corr;
    always_ff @(posedge clk) begin
      if (en) begin
        u_um   <= um;
        u_corr <= sgn_d[MUL_STAGES-1] ? PW'({m_d[(MUL_STAGES-1)*MW+:MW], AW'(0)}) : PW'(0);
      end
    end
    /// P: the signed product acc * m = u * m - s * m * 2^AW.
    logic signed [PW-1:0] p;
    always_ff @(posedge clk) begin
      if (en) p <= $signed({1'b0, u_um}) - $signed(u_corr);
    end
    /// The product rounded half to even to an integer (saturating at RW bits).
    logic [RW-1:0] rounded;
    mase_cast_core #(
        .IN_WIDTH  (PW),
        .IN_FRAC   (PF),
        .IN_SIGNED (1),
        .OUT_WIDTH (RW),
        .OUT_FRAC  (0),
        .OUT_SIGNED(1),
        .ROUNDING  (6),
        .OVERFLOW  (1)
    ) u_round (
        .data_in (p),
        .data_out(rounded)
    );
    /// R: the rounded product.
    logic signed [RW-1:0] r;
    always_ff @(posedge clk) begin
      if (en) r <= rounded;
    end
    /// The rounded product plus the zero point (exact at RW + 1 bits).
    logic signed [RW:0] shifted;
    assign shifted = (RW + 1)'(r) + (RW + 1)'(DATA_OUT_0_ZERO_POINT);
    mase_cast_core #(
        .IN_WIDTH  (RW + 1),
        .IN_FRAC   (0),
        .IN_SIGNED (1),
        .OUT_WIDTH (OW),
        .OUT_FRAC  (0),
        .OUT_SIGNED(DATA_OUT_0_SIGNED),
        .ROUNDING  (0),
        .OVERFLOW  (1)
    ) u_sat (
        .data_in (shifted),
        .data_out(y[i*OW+:OW])
    );
  end

  `MASE_OUTPUT_SKID(OW, N, y, v[MUL_STAGES+3], out_ready);
  // Handshake: every stream port keeps an offered beat offered and unchanged until taken.
  `MASE_ASSERT_STREAM_STABLE(data_in_0)
  `MASE_ASSERT_STREAM_STABLE(data_out_0)
endmodule
