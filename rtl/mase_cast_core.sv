// mase_cast_core: combinational fixed-point re-quantization of one value, ap_fixed semantics.
//
// Computes exactly what `mase_ir::fixed::cast_code` computes: the input code x (IN_WIDTH bits,
// IN_FRAC fractional bits, IN_SIGNED) is scaled to OUT_FRAC fractional bits; when bits are
// dropped the ROUNDING mode makes it an integer n, then the OVERFLOW mode maps n into the
// OUT_WIDTH-bit output format when it does not fit.
//   Rounding codes: 0 TRN (floor), 1 TRN_ZERO, 2 RND (ties up), 3 RND_ZERO, 4 RND_INF (ties away
//                   from zero), 5 RND_MIN_INF (ties down), 6 RND_CONV (ties to even).
//   Overflow codes: 0 WRAP, 1 SAT, 2 SAT_ZERO, 3 SAT_SYM (signed outputs of 2+ bits never give
//                   the most negative code).
// Shifts of any size are supported: a right shift beyond IN_WIDTH+1 bits or a left shift beyond
// OUT_WIDTH+1 bits gives the same result as that clamped shift, so the datapath is clamped there.
//   Latency: 0 (purely combinational). II: 1. Paths cut: none.
// Structure (for speed on wide inputs such as accumulators): n = q + up, where q is the shifted
// input and up (0 or 1) the rounding increment. Only n's low OUT_WIDTH bits reach data_out, so
// they come from an OUT_WIDTH-bit incrementer L + up (L = q's low OUT_WIDTH bits). Whether n
// fits, its sign and the SAT_SYM bound follow from q alone: with q = H * 2^OUT_WIDTH + L, n's
// high part is H + c with the carry c = up && (L all ones), so they need only H == 0, H == -1,
// H == -2 (H's bits above the lowest all ones), H's sign and "L (or L below its top bit) all
// ones / all zeros", log-depth AND/OR trees over q. The whole output is formed twice in
// parallel, for up = 0 (n = q) and up = 1 (n = q + 1, the incrementer fed by q alone), and up,
// itself an OR tree over the dropped bits, only selects between the two at the end (one LUT
// level; merging up into the incrementer's carry or into the flags measured 88 / 105 MHz on
// mase_sub's 64-bit-output instance, this form 124 MHz).
// Why: the plain form (n = q + up as wide as the input, then the range check over n's high
// bits, then the saturation mux) is serial on ECP5, a carry chain up to ~115 bits long feeding
// the AND/OR trees (74 MHz measured through mase_sub's cast).
// This module is the shared output stage of mase_cast, mase_add, mase_mul, mase_linear and the
// other components with a cast; it has no parameter checks of its own (its instantiating
// component validates the formats).
module mase_cast_core #(
    /// Input width in bits (1..128; wider intermediates such as accumulators are allowed).
    parameter int IN_WIDTH = 16,
    /// Input fractional bits (any value; the value is x * 2^-IN_FRAC).
    parameter int IN_FRAC = 8,
    /// 1 when the input code is two's complement, 0 when unsigned.
    parameter int IN_SIGNED = 1,
    /// Output width in bits (1..64).
    parameter int OUT_WIDTH = 8,
    /// Output fractional bits (any value).
    parameter int OUT_FRAC = 4,
    /// 1 when the output code is two's complement, 0 when unsigned.
    parameter int OUT_SIGNED = 1,
    /// Rounding mode code (0 TRN .. 6 RND_CONV, see header).
    parameter int ROUNDING = 0,
    /// Overflow mode code (0 WRAP, 1 SAT, 2 SAT_ZERO, 3 SAT_SYM).
    parameter int OVERFLOW = 1
) (
    /// Input code.
    input  logic [ IN_WIDTH-1:0] data_in,
    /// Output code in the output format.
    output logic [OUT_WIDTH-1:0] data_out
);
  /// Fractional bits dropped (positive) or appended (negative).
  localparam int SHIFT = IN_FRAC - OUT_FRAC;
  /// Right shift clamped to IN_WIDTH+1 (beyond it every mode gives the same result).
  localparam int RSH = (SHIFT > IN_WIDTH + 1) ? IN_WIDTH + 1 : SHIFT;
  /// Left shift clamped to OUT_WIDTH+1 (beyond it every non-zero value overflows the same way).
  localparam int LSH = (-SHIFT > OUT_WIDTH + 1) ? OUT_WIDTH + 1 : -SHIFT;
  /// Width of the sign- or zero-extended input (two guard bits keep RSH in range).
  localparam int XW = IN_WIDTH + 2;
  /// Width of q, the input after the shift (before the rounding increment).
  localparam int QW = (SHIFT > 0) ? XW - RSH : (LSH > 0) ? XW + LSH : XW;
  /// Width of q sign-extended so that its high part H has at least 2 bits (H == -2 needs them).
  localparam int QX = (QW > OUT_WIDTH + 2) ? QW : OUT_WIDTH + 2;
  /// Width of H, q's bits above the output width.
  localparam int HW = QX - OUT_WIDTH;

  /// Input extended to a signed XW-bit value.
  logic [XW-1:0] x_ext;
  assign x_ext = {{2{IN_SIGNED != 0 && data_in[IN_WIDTH-1]}}, data_in};

  /// The shifted input: floor(x / 2^RSH), or x * 2^LSH, or x (signed, QW bits).
  logic [QW-1:0] q;
  /// Rounding increment: n = q + up.
  logic up;

  if (SHIFT > 0) begin : g_round
    /// Dropped bits: the remainder x mod 2^RSH.
    logic [RSH-1:0] r;
    /// Remainder is at least half an LSB.
    logic half;
    /// Remainder bits below the half bit are non-zero.
    logic rest;
    /// Input is negative.
    logic neg;
    assign q = x_ext[XW-1:RSH];
    assign r = x_ext[RSH-1:0];
    assign half = r[RSH-1];
    if (RSH >= 2) begin : g_rest
      assign rest = |r[RSH-2:0];
    end else begin : g_norest
      assign rest = 1'b0;
    end
    assign neg = x_ext[XW-1];
    always_comb begin
      case (ROUNDING)
        1: up = neg && (half || rest);  // TRN_ZERO
        2: up = half;  // RND
        3: up = half && (rest || neg);  // RND_ZERO
        4: up = half && (rest || !neg);  // RND_INF
        5: up = half && rest;  // RND_MIN_INF
        6: up = half && (rest || q[0]);  // RND_CONV
        default: up = 1'b0;  // TRN
      endcase
    end
  end else if (LSH > 0) begin : g_shl
    assign q  = {x_ext, {LSH{1'b0}}};
    assign up = 1'b0;
  end else begin : g_same
    assign q  = x_ext;
    assign up = 1'b0;
  end

  /// q sign-extended to QX bits.
  logic [QX-1:0] qx;
  assign qx = {{(QX - QW) {q[QW-1]}}, q};
  /// L: q's low OUT_WIDTH bits (n's low bits are L + up).
  logic [OUT_WIDTH-1:0] l;
  /// H: q's high bits (n's high part is H + c, c = up && L all ones).
  logic [HW-1:0] h;
  assign l = qx[OUT_WIDTH-1:0];
  assign h = qx[QX-1:OUT_WIDTH];

  /// H == 0.
  logic h_zero;
  /// H's bits above its lowest are all ones (H is -1 or -2).
  logic h_top_ones;
  /// H == -1 (all ones).
  logic h_ones;
  /// H < 0 (q is negative).
  logic h_neg;
  /// L's bits below its top bit are all ones (1 for a 1-bit output).
  logic l_low_ones;
  /// L is all ones (up carries out of L).
  logic l_ones;
  assign h_zero = !(|h);
  assign h_top_ones = &h[HW-1:1];
  assign h_ones = h_top_ones && h[0];
  assign h_neg = h[HW-1];
  if (OUT_WIDTH >= 2) begin : g_low
    assign l_low_ones = &l[OUT_WIDTH-2:0];
  end else begin : g_low1
    assign l_low_ones = 1'b1;
  end
  assign l_ones = l_low_ones && l[OUT_WIDTH-1];

  /// Most positive output code.
  logic [OUT_WIDTH-1:0] max_code;
  /// Most negative output code.
  logic [OUT_WIDTH-1:0] min_code;
  /// Lower bound of SAT_SYM: -max for signed outputs of 2+ bits, else the most negative code.
  logic [OUT_WIDTH-1:0] sym_code;
  always_comb begin
    max_code = {OUT_WIDTH{1'b1}};
    min_code = '0;
    if (OUT_SIGNED != 0) begin
      max_code[OUT_WIDTH-1] = 1'b0;
      min_code[OUT_WIDTH-1] = 1'b1;
    end
    sym_code = min_code;
    if (OUT_SIGNED != 0 && OUT_WIDTH >= 2) sym_code[0] = 1'b1;
  end

  /// The output for up = 0 (low half, n = q) and for up = 1 (high half, n = q + 1).
  logic [2*OUT_WIDTH-1:0] res;

  for (genvar u = 0; u < 2; u++) begin : g_up
    /// Carry from L into H: n's high part is H + c.
    logic c;
    /// n's high part H + c is 0.
    logic nh_zero;
    /// n is negative.
    logic n_neg;
    /// n lies inside the output range.
    logic fits;
    /// n lies below the lower saturation bound of SAT_SYM (-max for signed, 0 for unsigned).
    logic below_sym;
    /// n's low OUT_WIDTH bits: L + u (an OUT_WIDTH-bit incrementer on q alone for u = 1).
    logic [OUT_WIDTH-1:0] lo;
    /// The output code for this value of up.
    logic [OUT_WIDTH-1:0] out;
    assign c = (u != 0) && l_ones;
    assign nh_zero = c ? h_ones : h_zero;
    assign n_neg = h_neg && !(c && h_ones);
    if (u == 0) begin : g_lo0
      assign lo = l;
    end else begin : g_lo1
      assign lo = l + 1'b1;
    end
    if (OUT_SIGNED != 0) begin : g_signed_range
      /// Top bit of lo (from L alone, without waiting for the incrementer).
      logic lo_top;
      /// n's high part H + c is -1 (H == -1 without a carry, H == -2 with one).
      logic nh_ones;
      assign lo_top = l[OUT_WIDTH-1] ^ ((u != 0) && l_low_ones);
      assign nh_ones = c ? h_top_ones && !h[0] : h_ones;
      assign fits = (nh_zero && !lo_top) || (nh_ones && lo_top);
      if (OUT_WIDTH >= 2) begin : g_sym
        /// lo's bits below its top bit are all zeros.
        logic lo_low_zero;
        assign lo_low_zero = (u != 0) ? l_low_ones : !(|l[OUT_WIDTH-2:0]);
        // Below -max: out of range negative, or exactly the most negative code.
        assign below_sym = n_neg && (!fits || lo_low_zero);
      end else begin : g_sym1
        assign below_sym = n_neg && !fits;
      end
    end else begin : g_unsigned_range
      assign fits = nh_zero;
      assign below_sym = n_neg;
    end

    always_comb begin
      out = lo;
      case (OVERFLOW)
        1: if (!fits) out = n_neg ? min_code : max_code;  // SAT
        2: if (!fits) out = '0;  // SAT_ZERO
        3: begin  // SAT_SYM
          if (below_sym) out = sym_code;
          else if (!fits) out = max_code;
        end
        default: ;  // WRAP: keep the low bits
      endcase
    end
    assign res[u*OUT_WIDTH+:OUT_WIDTH] = out;
  end

  // up (an OR tree over the dropped bits) only picks between the two finished outputs.
  assign data_out = up ? res[2*OUT_WIDTH-1:OUT_WIDTH] : res[OUT_WIDTH-1:0];
endmodule
