// mase_split_mul: an exact unsigned product a * b cut into partial products of at most 17 x 17
// bits (each one DSP multiplier on ECP5 and 7-series), registered, then summed.
// A product wider than one DSP otherwise runs through the DSP and the adders that join the
// partial products in one cycle; registering the partial products cuts that path in two. Each
// partial product is a mase_dsp_mul on the caller's operand registers (on ECP5 its register is
// the DSP's own output register), or with OP_REG = 1 on operands it registers itself (on ECP5
// the DSPs' input registers, which take the routing into the DSP: for operands that come
// through logic, or from registers far from the DSPs such as a block RAM's output register).
// With PP_REG = 1 the partial products are registered once more in fabric before their sum: on
// ECP5 the routing out of a DSP's output register costs up to 3.6 ns, too much to add the
// adders after it in one cycle, so the routing gets a cycle of its own.
//   Pipeline: [a and b registered, OP_REG = 1,] the partial products registered, [registered
//   again, PP_REG = 1,] in the cycles en is high; y is their shifted sum (combinational), for
//   the caller to register.
//   Latency: 1 + OP_REG + PP_REG cycles (from a and b in a cycle with en to y).
//   Paths cut: the multipliers from the adders [and from the operands' logic, OP_REG = 1; the
//   routing out of the DSPs from the adders, PP_REG = 1].
`ifndef MASE_ASSERT_SVH `include "mase_assert.svh" `endif
module mase_split_mul #(
    /// Width of operand a (1..64).
    parameter int A_WIDTH = 25,
    /// Width of operand b (1..64).
    parameter int B_WIDTH = 25,
    /// 1: the operands are registered here (in the DSPs' input registers on ECP5); 0: they are
    /// the caller's registers.
    parameter int OP_REG = 0,
    /// 1: the partial products are registered once more (fabric registers next to the adders)
    /// before their sum; 0: the sum reads the multipliers' registers.
    parameter int PP_REG = 0
) (
    /// Clock.
    input  logic                       clk,
    /// Register the partial products of a and b.
    input  logic                       en,
    /// Operand a (unsigned).
    input  logic [        A_WIDTH-1:0] a,
    /// Operand b (unsigned).
    input  logic [        B_WIDTH-1:0] b,
    /// The product of the operands of the (1 + OP_REG + PP_REG)-th last en (unsigned, exact).
    output logic [A_WIDTH+B_WIDTH-1:0] y
);
`ifndef SYNTHESIS
  generate
    `MASE_CHECK_RANGE(A_WIDTH, 1, 64);
    `MASE_CHECK_RANGE(B_WIDTH, 1, 64);
    `MASE_CHECK_FLAG(OP_REG);
    `MASE_CHECK_FLAG(PP_REG);
  endgenerate
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
      /// The registered partial product of a's chunk i and b's chunk j (the operands registered
      /// by the caller, or here with OP_REG = 1; on ECP5 every register is the multiplier's own).
      logic [WA+WB-1:0] pp;
      mase_dsp_mul #(
          .A_WIDTH(WA),
          .B_WIDTH(WB),
          .SIGNED (0),
          .A_REG  (OP_REG),
          .B_REG  (OP_REG)
      ) u_pp (
          .clk(clk),
          .ce (en),
          .a  (a[i*C+:WA]),
          .b  (b[j*C+:WB]),
          .p  (pp)
      );
      /// The partial product the sum reads: pp, or pp registered once more (PP_REG = 1).
      logic [WA+WB-1:0] ppq;
      if (PP_REG == 1) begin : g_pp_reg
        always_ff @(posedge clk) begin
          if (en) ppq <= pp;
        end
      end else begin : g_pp_wire
        assign ppq = pp;
      end
      assign terms[(i*NB+j)*YW+:YW] = YW'(ppq) << (C * (i + j));
    end
  end

  // The sum of the terms (exact: the product fits YW bits).
  always_comb begin
    y = '0;
    for (int k = 0; k < NA * NB; k++) y = y + terms[k*YW+:YW];
  end
endmodule
