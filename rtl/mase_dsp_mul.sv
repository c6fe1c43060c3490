// mase_dsp_mul: an exact product p = a * b with registered operands and a registered product, in
// one DSP multiplier where the target allows it.
// A multiplier between two fabric registers costs a register's clock-to-out, the routing to the
// DSP, the multiplier (3.9 ns on ECP5 speed 6), the routing back and a setup: 8.7 to 10.5 ns on
// LFE5U-85F-6. Yosys 0.23's synth_ecp5 maps a product onto MULT18X18D without its registers and
// nextpnr-ecp5 does not move fabric flip-flops into it, so when MASE_TARGET_ECP5 is defined (the
// ECP5 place-and-route flow defines it) a product of operands of 2..18 bits instantiates
// MULT18X18D with its A, B and output registers: the multiplier is then a path inside the DSP.
// Otherwise (Verilator, synth_xilinx, wider or 1-bit operands) the body is behavioural. Not
// used by mase_mul: there (four lanes, constant operand, operands and product registered here)
// Yosys 0.23's synth_xilinx -flatten kept the product register of one lane only and reduced
// the design to 4 LUTs; with the caller's operand registers (A_REG = B_REG = 0, as
// mase_split_mul uses it) the counts are as with the registers written in the caller.
// mase_dot_product uses A_REG = B_REG = 1 on operands the caller registered already: on ECP5 the
// input registers then take the routing into the DSP (its caller's register may be a block
// RAM's output register, far from the DSP).
//   Pipeline: a and b registered (either optionally the caller's: A_REG, B_REG = 0), their
//   product registered, all when ce is high; no reset (the registers hold data only, the
//   caller's valid bits are reset).
//   Latency: 2 cycles (a and b in a cycle with ce -> p after the second later cycle with ce);
//   1 from an operand the caller registers.
//   Paths cut: operands to multiplier, multiplier to the product's reader.
`ifndef MASE_ASSERT_SVH `include "mase_assert.svh" `endif
module mase_dsp_mul #(
    /// Width of operand a (1..64).
    parameter int A_WIDTH = 18,
    /// Width of operand b (1..64).
    parameter int B_WIDTH = 18,
    /// 1: a, b and p are two's complement; 0: unsigned.
    parameter int SIGNED = 1,
    /// 1: a is registered here; 0: a is used as given (the caller's register, loaded on the same
    /// ce: a register with other readers, a synchronous memory read), and the latency from a is 1.
    parameter int A_REG = 1,
    /// The same for b.
    parameter int B_REG = 1
) (
    /// Clock.
    input  logic                       clk,
    /// Clock enable of all three registers (operands and product).
    input  logic                       ce,
    /// Operand a, registered at ce (A_REG = 1) or already registered (A_REG = 0).
    input  logic [        A_WIDTH-1:0] a,
    /// Operand b, registered at ce (B_REG = 1) or already registered (B_REG = 0).
    input  logic [        B_WIDTH-1:0] b,
    /// The exact product of the registered operands, registered at ce.
    output logic [A_WIDTH+B_WIDTH-1:0] p
);
`ifndef SYNTHESIS
  generate
    `MASE_CHECK_RANGE(A_WIDTH, 1, 64);
    `MASE_CHECK_RANGE(B_WIDTH, 1, 64);
    `MASE_CHECK_FLAG(SIGNED);
    `MASE_CHECK_FLAG(A_REG);
    `MASE_CHECK_FLAG(B_REG);
  endgenerate
`endif
  /// Product width.
  localparam int PW = A_WIDTH + B_WIDTH;
`ifdef MASE_TARGET_ECP5
  /// The product is one MULT18X18D (its multiplier takes 18-bit operands, signed or unsigned;
  /// 1-bit operands are left to Yosys, which maps them to logic).
  localparam bit DSP = A_WIDTH >= 2 && A_WIDTH <= 18 && B_WIDTH >= 2 && B_WIDTH <= 18;
`else
  /// No DSP primitive for this target: the behavioural body.
  localparam bit DSP = 1'b0;
`endif

  if (!DSP) begin : g_fabric
    /// The registered operands (a_r is a itself when A_REG = 0, b_r is b when B_REG = 0).
    logic [A_WIDTH-1:0] a_r;
    logic [B_WIDTH-1:0] b_r;
    /// Their exact product.
    logic [PW-1:0] prod;
    mase_delay #(
        .DEPTH(A_REG),
        .WIDTH(A_WIDTH)
    ) u_a (
        .clk(clk),
        .rst(1'b0),
        .en (ce),
        .d  (a),
        .q  (a_r)
    );
    mase_delay #(
        .DEPTH(B_REG),
        .WIDTH(B_WIDTH)
    ) u_b (
        .clk(clk),
        .rst(1'b0),
        .en (ce),
        .d  (b),
        .q  (b_r)
    );
    if (SIGNED != 0) begin : g_signed
      assign prod = PW'($signed(a_r)) * PW'($signed(b_r));
    end else begin : g_unsigned
      assign prod = PW'(a_r) * PW'(b_r);
    end
    always_ff @(posedge clk) begin
      if (ce) p <= prod;
    end
  end
`ifdef MASE_TARGET_ECP5
  else begin : g_ecp5
    /// The operands extended to the multiplier's 18 bits (sign- or zero-extended as SIGNEDA/B say).
    logic [17:0] a18, b18;
    /// The multiplier's 36-bit product; the low PW bits are the exact product.
    logic [35:0] p36;
    if (SIGNED != 0) begin : g_signed
      assign a18 = 18'($signed(a));
      assign b18 = 18'($signed(b));
    end else begin : g_unsigned
      assign a18 = 18'(a);
      assign b18 = 18'(b);
    end
    // Every register bank on CLK0 (nextpnr-ecp5 times a clocked MULT18X18D from CLK0 only), with
    // CE0 = ce and RST0 tied low: the A and B input registers and the output register load
    // exactly when the behavioural body's a_r, b_r and p do (an input register bypassed
    // when A_REG or B_REG = 0, as a_r or b_r is then the port). The signedness inputs are
    // constants.
    // The pipeline register stays bypassed (latency 2, as the behavioural body).
    MULT18X18D #(
        .REG_INPUTA_CLK  (A_REG != 0 ? "CLK0" : "NONE"),
        .REG_INPUTA_CE   ("CE0"),
        .REG_INPUTA_RST  ("RST0"),
        .REG_INPUTB_CLK  (B_REG != 0 ? "CLK0" : "NONE"),
        .REG_INPUTB_CE   ("CE0"),
        .REG_INPUTB_RST  ("RST0"),
        .REG_INPUTC_CLK  ("NONE"),
        .REG_PIPELINE_CLK("NONE"),
        .REG_OUTPUT_CLK  ("CLK0"),
        .REG_OUTPUT_CE   ("CE0"),
        .REG_OUTPUT_RST  ("RST0"),
        .GSR             ("DISABLED"),
        .RESETMODE       ("SYNC")
    ) u_mult (
        .A0(a18[0]), .A1(a18[1]), .A2(a18[2]), .A3(a18[3]), .A4(a18[4]), .A5(a18[5]),
        .A6(a18[6]), .A7(a18[7]), .A8(a18[8]), .A9(a18[9]), .A10(a18[10]), .A11(a18[11]),
        .A12(a18[12]), .A13(a18[13]), .A14(a18[14]), .A15(a18[15]), .A16(a18[16]),
        .A17(a18[17]),
        .B0(b18[0]), .B1(b18[1]), .B2(b18[2]), .B3(b18[3]), .B4(b18[4]), .B5(b18[5]),
        .B6(b18[6]), .B7(b18[7]), .B8(b18[8]), .B9(b18[9]), .B10(b18[10]), .B11(b18[11]),
        .B12(b18[12]), .B13(b18[13]), .B14(b18[14]), .B15(b18[15]), .B16(b18[16]),
        .B17(b18[17]),
        .C0(1'b0), .C1(1'b0), .C2(1'b0), .C3(1'b0), .C4(1'b0), .C5(1'b0), .C6(1'b0), .C7(1'b0),
        .C8(1'b0), .C9(1'b0), .C10(1'b0), .C11(1'b0), .C12(1'b0), .C13(1'b0), .C14(1'b0),
        .C15(1'b0), .C16(1'b0), .C17(1'b0),
        .SIGNEDA(SIGNED != 0 ? 1'b1 : 1'b0), .SIGNEDB(SIGNED != 0 ? 1'b1 : 1'b0),
        .SOURCEA(1'b0), .SOURCEB(1'b0),
        .CLK0(clk), .CLK1(1'b0), .CLK2(1'b0), .CLK3(1'b0),
        .CE0(ce), .CE1(1'b0), .CE2(1'b0), .CE3(1'b0),
        .RST0(1'b0), .RST1(1'b0), .RST2(1'b0), .RST3(1'b0),
        .P0(p36[0]), .P1(p36[1]), .P2(p36[2]), .P3(p36[3]), .P4(p36[4]), .P5(p36[5]),
        .P6(p36[6]), .P7(p36[7]), .P8(p36[8]), .P9(p36[9]), .P10(p36[10]), .P11(p36[11]),
        .P12(p36[12]), .P13(p36[13]), .P14(p36[14]), .P15(p36[15]), .P16(p36[16]),
        .P17(p36[17]), .P18(p36[18]), .P19(p36[19]), .P20(p36[20]), .P21(p36[21]),
        .P22(p36[22]), .P23(p36[23]), .P24(p36[24]), .P25(p36[25]), .P26(p36[26]),
        .P27(p36[27]), .P28(p36[28]), .P29(p36[29]), .P30(p36[30]), .P31(p36[31]),
        .P32(p36[32]), .P33(p36[33]), .P34(p36[34]), .P35(p36[35])
    );
    assign p = p36[PW-1:0];
  end
`endif
endmodule
