// mase_split_mul: an exact unsigned product a * b cut into partial products of at most 17 x 17
// bits (each one DSP multiplier on ECP5 and 7-series), registered, then summed.
// A product wider than one DSP otherwise runs through the DSP and the adders that join the
// partial products in one cycle; registering the partial products cuts that path in two.
//   Pipeline: the partial products are registered in the cycles en is high; y is their shifted
//   sum (combinational), for the caller to register.
//   Latency: 1 cycle (from a and b in a cycle with en to y).
//   Paths cut: the multipliers from the adders.
`ifndef MASE_ASSERT_SVH `include "mase_assert.svh" `endif
module mase_split_mul #(
    /// Width of operand a (1..64).
    parameter int A_WIDTH = 25,
    /// Width of operand b (1..64).
    parameter int B_WIDTH = 25
) (
    /// Clock.
    input  logic                       clk,
    /// Register the partial products of a and b.
    input  logic                       en,
    /// Operand a (unsigned).
    input  logic [        A_WIDTH-1:0] a,
    /// Operand b (unsigned).
    input  logic [        B_WIDTH-1:0] b,
    /// The product of the operands registered at the last en (unsigned, exact).
    output logic [A_WIDTH+B_WIDTH-1:0] y
);
`ifndef SYNTHESIS
  initial begin
    `MASE_CHECK_RANGE(A_WIDTH, 1, 64);
    `MASE_CHECK_RANGE(B_WIDTH, 1, 64);
  end
`endif
  /// Chunk width: an unsigned 17 x 17 product fits one DSP multiplier.
  localparam int C = 17;
  /// Chunks of a.
  localparam int NA = (A_WIDTH + C - 1) / C;
  /// Chunks of b.
  localparam int NB = (B_WIDTH + C - 1) / C;
  /// Product width.
  localparam int YW = A_WIDTH + B_WIDTH;

  /// Partial product (i, j) at its weight 2^(C*(i+j)), term i*NB+j at [(i*NB+j)*YW +: YW].
  logic [NA*NB*YW-1:0] terms;

  for (genvar i = 0; i < NA; i++) begin : g_a
    for (genvar j = 0; j < NB; j++) begin : g_b
      /// Bits of a's chunk i.
      localparam int WA = (A_WIDTH - i * C) < C ? A_WIDTH - i * C : C;
      /// Bits of b's chunk j.
      localparam int WB = (B_WIDTH - j * C) < C ? B_WIDTH - j * C : C;
      /// The registered partial product of a's chunk i and b's chunk j.
      logic [WA+WB-1:0] pp;
      always_ff @(posedge clk) begin
        if (en) pp <= (WA + WB)'(a[i*C+:WA]) * (WA + WB)'(b[j*C+:WB]);
      end
      assign terms[(i*NB+j)*YW+:YW] = YW'(pp) << (C * (i + j));
    end
  end

  // The sum of the terms (exact: the product fits YW bits).
  always_comb begin
    y = '0;
    for (int k = 0; k < NA * NB; k++) y = y + terms[k*YW+:YW];
  end
endmodule
