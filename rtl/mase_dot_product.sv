// mase_dot_product: the multiply-accumulate datapath of mase_linear and mase_matmul.
//
// Each cycle the caller's stage S1 offers one chunk x of LANES_IN inputs and one weight block w of
// LANES_OUT x LANES_IN weights (lane o*LANES_IN + i = W[o][i]). The datapath multiplies all pairs,
// sums each output's LANES_IN products and accumulates the sums over the chunks of a block
// (in_first marks a block's first chunk, in_last its last). The accumulator starts from `init`
// (the caller's aligned bias, or zero) and is exact when the caller sizes ACC_WIDTH so: products
// are shifted left by SHIFT bits into the accumulator's ACC_FRAC fractional bits. With
// LANE_SHIFT_WIDTH > 0 output lane o's product sums are shifted left by lane_shift[o] more bits
// (per-output-channel weight scales: the caller's shift code of the block's channel, constant over
// the block; ACC_WIDTH must include the 2^LANE_SHIFT_WIDTH - 1 bits of growth). The shift sits on
// the accumulator's addend, where a 1-bit code merges into the adder's LUTs (Yosys synth_xilinx,
// linear 64x64 P4x4 int8: +6 LUT at 1 bit, +73 at 2); with LANE_SHIFT_WIDTH = 0 the logic is as
// without it. After a block's
// last chunk the optional ReLU (on the exact sum) and the output cast (mase_cast_core: OUT format,
// ROUNDING / OVERFLOW modes) give the block's LANES_OUT outputs, registered by a mase_skid_buffer.
//
// Pipeline: caller's S1 (memory words and tags) -> R (S1 registered) -> D (R registered again, in
// the multipliers' input registers) -> S2 products -> [P partial sums] -> S3 per-output product
// sums -> S4 accumulators -> output register. Every stage, the caller's S1 and its issue stage
// included, advances together when `adv` is high (the output register can take a beat); the
// caller holds S1 while adv is low. Why R and D: a block RAM's clock-to-out (5.6 ns on ECP5
// without its output register), the routing from the block RAM to the multipliers (up to 5 ns in
// a full encoder layer) and a multiplier's input-to-output delay (3.9 ns) each want a
// register-to-register path of their own. R is the register a vendor tool, and the ECP5 flow's
// netlist pass (sim/src/bram_outreg.rs), folds into a block RAM's output register (0.96 ns
// clock-to-out); D and S2 are mase_dsp_mul's (on ECP5 the DSPs' own input and output registers),
// so the path from R is routing into the DSP and the multiplier is a path inside it. Measured on
// LFE5U-85F-6: see hwlib/src/components/linear.rs (DOT_PRODUCT_STAGES).
// Why P: the products leave the DSPs through long routes, and a sum of LANES_IN of them is
// ceil(log2 LANES_IN) carry chains in a row; with wide products that path alone was the
// critical one (linear 16-bit x 16-bit, LANES_IN 4, LANES_OUT 5: 116.2 MHz, DSP output ->
// 32-bit sum). With SUM_STAGES = 2 (products wider than SUM_SPLIT_WIDTH bits, LANES_IN >= 3) the
// first ceil(levels / 2) levels of each output's adder tree end in register P and the rest in S3;
// otherwise P does not exist and the whole tree ends in S3.
//   Latency: 5 + SUM_STAGES cycles from the last chunk of a block in S1 to the block's beat in the
//            output register (R, D, S2, [P,] S3, S4, output).
//   Paths cut: data, valid and ready of the output (skid buffer); S1's data into the multipliers;
//   with SUM_STAGES = 2 the products' adder tree halfway.
`ifndef MASE_ASSERT_SVH `include "mase_assert.svh" `endif
module mase_dot_product #(
    /// Input element width (signed).
    parameter int X_WIDTH = 8,
    /// Weight element width (signed).
    parameter int W_WIDTH = 8,
    /// Inputs per chunk.
    parameter int LANES_IN = 4,
    /// Outputs per block.
    parameter int LANES_OUT = 4,
    /// Accumulator width: enough integer bits that no sum of a block overflows.
    parameter int ACC_WIDTH = 24,
    /// Fractional bits of the accumulator.
    parameter int ACC_FRAC = 8,
    /// Left shift aligning a product sum to ACC_FRAC (0..32).
    parameter int SHIFT = 0,
    /// Width of the caller's tag carried from S1 to S2 (mid_tag).
    parameter int TAG_WIDTH = 1,
    /// 1: max(0, .) on the exact sum before the cast.
    parameter int FUSED_RELU = 0,
    /// Output element width (signed).
    parameter int OUT_WIDTH = 8,
    /// Output fractional bits.
    parameter int OUT_FRAC = 4,
    /// Output rounding (mase_cast_core's codes).
    parameter int ROUNDING = 0,
    /// Output overflow (mase_cast_core's codes).
    parameter int OVERFLOW = 1,
    /// Bits of each output lane's extra left shift of its product sums (0: none, lane_shift unused).
    parameter int LANE_SHIFT_WIDTH = 0
) (
    /// Clock and reset (reset empties the pipeline).
    `MASE_CLOCK_PORTS,
    /// The pipeline advances this cycle; the caller's issue stage and S1 advance with it.
    output logic                               adv,
    /// S1 holds a chunk.
    input  logic                               in_valid,
    /// The chunk in S1 is the first of its block.
    input  logic                               in_first,
    /// The chunk in S1 is the last of its block.
    input  logic                               in_last,
    /// Caller's tag of the chunk in S1 (e.g. the block index).
    input  logic [               TAG_WIDTH-1:0] in_tag,
    /// S1 input chunk, lane i at [i*X_WIDTH +: X_WIDTH].
    input  logic [      LANES_IN*X_WIDTH-1:0] x,
    /// S1 weight block, lane o*LANES_IN + i at [(o*LANES_IN+i)*W_WIDTH +: W_WIDTH].
    input  logic [LANES_OUT*LANES_IN*W_WIDTH-1:0] w,
    /// Tag of the chunk two advances before it reaches S3 (in D, or in S2 when SUM_STAGES = 2):
    /// a memory addressed by it, its read registered and registered once more, gives a word due
    /// in S3 with the chunk (init, lane_shift) whatever SUM_STAGES is.
    output logic [               TAG_WIDTH-1:0] init_tag,
    /// Start value of the accumulators, due in S3 (used with the block's first chunk), lane o
    /// at [o*ACC_WIDTH +: ACC_WIDTH].
    input  logic [    LANES_OUT*ACC_WIDTH-1:0] init,
    /// Extra left shift of output lane o's product sums at [o*LSW +: LSW] (LSW =
    /// max(LANE_SHIFT_WIDTH, 1), unsigned), due in S3 with every chunk of the block.
    input  logic [LANES_OUT*(LANE_SHIFT_WIDTH > 0 ? LANE_SHIFT_WIDTH : 1)-1:0] lane_shift,
    /// Output beats: the LANES_OUT outputs of a block, lane o at [o*OUT_WIDTH +: OUT_WIDTH]
    /// (data and valid registered).
    `MASE_STREAM_OUT(data_out_0, LANES_OUT * OUT_WIDTH)
);
  /// Product width; width of a sum of LANES_IN products.
  localparam int PW = X_WIDTH + W_WIDTH;
  localparam int TW = PW + (LANES_IN > 1 ? $clog2(LANES_IN) : 0);
  /// Lanes.
  localparam int PI = LANES_IN;
  localparam int PO = LANES_OUT;
  localparam int AW = ACC_WIDTH;
  /// Width of a lane's shift code in lane_shift.
  localparam int LSW = LANE_SHIFT_WIDTH > 0 ? LANE_SHIFT_WIDTH : 1;
  /// Widest product whose sum of PI stays in one stage. Above it the carry chains are long and
  /// the products come from many DSPs (linear 16-bit x 16-bit P_IN 4: 116.2 MHz in one stage;
  /// in the demo's encoder layer the FFN's 16-bit x 8-bit P_IN 4 sum was the critical path at
  /// 109.0 MHz: 3.3 ns of routing out of the DSP, two LUT levels and a 26-bit carry chain);
  /// the Rust cost model (hwlib/src/components/linear.rs, dot_product_stages) has the same rule.
  localparam int SUM_SPLIT_WIDTH = 23;
  /// Registered stages of the product sums: 2 (P and S3) for wide products and a tree of at least
  /// two levels (PI >= 3), else 1 (S3).
  localparam int SUM_STAGES = (PW > SUM_SPLIT_WIDTH && PI >= 3) ? 2 : 1;
  /// Levels of a sum's adder tree, and those that end in P (none when SUM_STAGES = 1).
  localparam int LEVELS = PI > 1 ? $clog2(PI) : 0;
  localparam int PL = SUM_STAGES == 2 ? (LEVELS + 1) / 2 : 0;
  /// Products per partial sum (2^PL), partial sums per output, and a partial sum's width.
  localparam int G = 1 << PL;
  localparam int NG = (PI + G - 1) / G;
  localparam int GW = PW + PL;

  // R: S1 registered
  /// The chunk, weight block, flags and tag of S1, one cycle later.
  logic [PI*X_WIDTH-1:0] r_x;
  logic [PO*PI*W_WIDTH-1:0] r_w;
  logic r_valid, r_first, r_last;
  logic [TAG_WIDTH-1:0] r_tag;

  always_ff @(posedge clk) begin
    if (adv) begin
      r_x     <= x;
      r_w     <= w;
      r_first <= in_first;
      r_last  <= in_last;
      r_tag   <= in_tag;
    end
  end

  // D: R registered again (the operands in the multipliers' input registers, the tags here)
  /// The flags and tag of R, one advance later (the operands are inside the mase_dsp_muls).
  logic d_valid, d_first, d_last;
  logic [TAG_WIDTH-1:0] d_tag;
  mase_delay #(.DEPTH(1), .WIDTH(TAG_WIDTH + 2)) u_d_side (.clk(clk), .rst(rst), .en(adv),
      .d({r_first, r_last, r_tag}), .q({d_first, d_last, d_tag}));

  // S2: products
  /// Product of input lane i and weight lane o*PI + i at [(o*PI+i)*PW +: PW].
  logic [PO*PI*PW-1:0] s2_prod;
  logic s2_valid, s2_first, s2_last;

  // The operands are R's registers (r_x is shared by the PO products of a lane), registered again
  // in D and multiplied into S2 by mase_dsp_mul (on ECP5 D and S2 are the DSP's own registers).
  for (genvar o = 0; o < PO; o++) begin : g_mul_o
    for (genvar i = 0; i < PI; i++) begin : g_mul_i
      mase_dsp_mul #(
          .A_WIDTH(X_WIDTH),
          .B_WIDTH(W_WIDTH),
          .SIGNED (1),
          .A_REG  (1),
          .B_REG  (1)
      ) u_mul (
          .clk(clk),
          .ce (adv),
          .a  (r_x[i*X_WIDTH+:X_WIDTH]),
          .b  (r_w[(o*PI+i)*W_WIDTH+:W_WIDTH]),
          .p  (s2_prod[(o*PI+i)*PW+:PW])
      );
    end
  end

  always_ff @(posedge clk) begin
    if (adv) begin
      s2_first <= d_first;
      s2_last  <= d_last;
    end
  end

  // P (SUM_STAGES = 2): partial sums of G products each; with SUM_STAGES = 1 the "partial sums"
  // are the products themselves (G = 1, no register)
  /// Partial sum g of output lane o at [(o*NG+g)*GW +: GW], combinational and in P.
  logic [PO*NG*GW-1:0] part_d, p_part;
  /// Flags of the chunk in P (S2's when there is no P).
  logic p_valid, p_first, p_last;

  always_comb begin
    for (int o = 0; o < PO; o++) begin
      for (int g = 0; g < NG; g++) begin
        part_d[(o*NG+g)*GW+:GW] = '0;
        for (int i = g * G; i < PI && i < (g + 1) * G; i++) begin
          part_d[(o*NG+g)*GW+:GW] = part_d[(o*NG+g)*GW+:GW] + GW'($signed(s2_prod[(o*PI+i)*PW+:PW]));
        end
      end
    end
  end

  mase_delay #(.DEPTH(SUM_STAGES - 1), .WIDTH(PO * NG * GW + 2)) u_p (.clk(clk), .rst(rst),
      .en(adv), .d({part_d, s2_first, s2_last}), .q({p_part, p_first, p_last}));
  mase_delay #(.DEPTH(SUM_STAGES - 1), .WIDTH(1), .RESET(1)) u_p_valid (.clk(clk), .rst(rst),
      .en(adv), .d(s2_valid), .q(p_valid));
  // The tag two advances before S3: D's, or S2's when P adds a stage.
  mase_delay #(.DEPTH(SUM_STAGES - 1), .WIDTH(TAG_WIDTH)) u_init_tag (.clk(clk), .rst(rst),
      .en(adv), .d(d_tag), .q(init_tag));

  // S3: sum of the PI products (NG partial sums) of each output
  /// Sum for output lane o at [o*TW +: TW], and the combinational sums feeding it.
  logic [PO*TW-1:0] s3_sum, sum_d;
  logic s3_valid, s3_first, s3_last;

  always_comb begin
    for (int o = 0; o < PO; o++) begin
      sum_d[o*TW+:TW] = '0;
      for (int g = 0; g < NG; g++) begin
        sum_d[o*TW+:TW] = sum_d[o*TW+:TW] + TW'($signed(p_part[(o*NG+g)*GW+:GW]));
      end
    end
  end

  always_ff @(posedge clk) begin
    if (adv) begin
      s3_sum   <= sum_d;
      s3_first <= p_first;
      s3_last  <= p_last;
    end
  end

  // S4: exact accumulation, starting from init
  /// Accumulator of output lane o at [o*AW +: AW].
  logic [PO*AW-1:0] acc;
  /// S4 holds the finished sums of a block.
  logic s4_valid;

  for (genvar o = 0; o < PO; o++) begin : g_acc
    /// Aligned product sum.
    logic [AW-1:0] sum_al;
    if (LANE_SHIFT_WIDTH > 0) begin : g_lane_shift
      assign sum_al = (AW'($signed(s3_sum[o*TW+:TW])) << SHIFT) << lane_shift[o*LSW+:LSW];
    end else begin : g_no_lane_shift
      assign sum_al = AW'($signed(s3_sum[o*TW+:TW])) << SHIFT;
      /// Without lane shifts the port is not read.
      logic unused_shift;
      assign unused_shift = ^lane_shift[o*LSW+:LSW];
    end
    always_ff @(posedge clk) begin
      if (adv && s3_valid)
        acc[o*AW+:AW] <= (s3_first ? init[o*AW+:AW] : acc[o*AW+:AW]) + sum_al;
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      r_valid  <= 1'b0;
      d_valid  <= 1'b0;
      s2_valid <= 1'b0;
      s3_valid <= 1'b0;
      s4_valid <= 1'b0;
    end else if (adv) begin
      r_valid  <= in_valid;
      d_valid  <= r_valid;
      s2_valid <= d_valid;
      s3_valid <= p_valid;
      s4_valid <= s3_valid && s3_last;
    end
  end

  // Output: ReLU, cast, skid buffer
  /// Cast outputs of the block in S4.
  logic [PO*OUT_WIDTH-1:0] y;

  for (genvar o = 0; o < PO; o++) begin : g_out
    /// Sum after the optional ReLU.
    logic [AW-1:0] pre;
    assign pre = (FUSED_RELU != 0 && acc[o*AW+AW-1]) ? '0 : acc[o*AW+:AW];
    mase_cast_core #(
        .IN_WIDTH  (AW),
        .IN_FRAC   (ACC_FRAC),
        .IN_SIGNED (1),
        .OUT_WIDTH (OUT_WIDTH),
        .OUT_FRAC  (OUT_FRAC),
        .OUT_SIGNED(1),
        .ROUNDING  (ROUNDING),
        .OVERFLOW  (OVERFLOW)
    ) u_cast (
        .data_in (pre),
        .data_out(y[o*OUT_WIDTH+:OUT_WIDTH])
    );
  end

  `MASE_OUTPUT_SKID(OUT_WIDTH, PO, y, s4_valid, adv);

  `MASE_ASSERT_STREAM_STABLE(data_out_0)
endmodule
