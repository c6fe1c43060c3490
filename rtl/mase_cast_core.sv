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
// This module is the shared output stage of mase_cast, mase_add and mase_linear; it has no
// parameter checks of its own (its instantiating component validates the formats).
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
  /// Width of the rounded (or left-shifted) integer n.
  localparam int NW = (SHIFT > 0) ? XW - RSH + 1 : XW + LSH;
  /// Working width for the range check: n sign-extended to at least OUT_WIDTH+1 bits.
  localparam int RW = (NW > OUT_WIDTH) ? NW + 1 : OUT_WIDTH + 1;

  /// Input extended to a signed XW-bit value.
  logic [XW-1:0] x_ext;
  assign x_ext = {{2{IN_SIGNED != 0 && data_in[IN_WIDTH-1]}}, data_in};

  /// The integer n after rounding (signed, NW bits).
  logic [NW-1:0] n;

  if (SHIFT > 0) begin : g_round
    /// floor(x / 2^RSH).
    logic [XW-RSH-1:0] q;
    /// Dropped bits: the remainder x mod 2^RSH.
    logic [RSH-1:0] r;
    /// Remainder is at least half an LSB.
    logic half;
    /// Remainder bits below the half bit are non-zero.
    logic rest;
    /// Input is negative.
    logic neg;
    /// Increment floor by one.
    logic up;
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
    assign n = {q[XW-RSH-1], q} + {{(NW - 1) {1'b0}}, up};
  end else if (LSH > 0) begin : g_shl
    assign n = {x_ext, {LSH{1'b0}}};
  end else begin : g_same
    assign n = x_ext;
  end

  /// n sign-extended to RW bits.
  logic [RW-1:0] nx;
  assign nx = {{(RW - NW) {n[NW-1]}}, n};

  /// n is negative.
  logic n_neg;
  /// n lies inside the output range.
  logic fits;
  /// n lies below the lower saturation bound of SAT_SYM (-max for signed, 0 for unsigned).
  logic below_sym;
  assign n_neg = nx[RW-1];

  if (OUT_SIGNED != 0) begin : g_signed_range
    /// Bits that must all equal the sign for n to fit.
    logic [RW-OUT_WIDTH:0] hi;
    assign hi   = nx[RW-1:OUT_WIDTH-1];
    assign fits = (&hi) || !(|hi);
    if (OUT_WIDTH >= 2) begin : g_sym
      // Below -max: out of range negative, or exactly the most negative code.
      assign below_sym = n_neg && (!fits || !(|nx[OUT_WIDTH-2:0]));
    end else begin : g_sym1
      assign below_sym = n_neg && !fits;
    end
  end else begin : g_unsigned_range
    assign fits = !(|nx[RW-1:OUT_WIDTH]);
    assign below_sym = n_neg;
  end

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

  always_comb begin
    data_out = nx[OUT_WIDTH-1:0];
    case (OVERFLOW)
      1: if (!fits) data_out = n_neg ? min_code : max_code;  // SAT
      2: if (!fits) data_out = '0;  // SAT_ZERO
      3: begin  // SAT_SYM
        if (below_sym) data_out = sym_code;
        else if (!fits) data_out = max_code;
      end
      default: ;  // WRAP: keep the low bits
    endcase
  end
endmodule
