// Three ROMs read into block RAMs by Yosys 0.23 synth_ecp5, each read registered once more, for
// sim/tests/bram_outreg.rs:
//  - rom1 (36 bits: the pseudo-dual-port mode) with the second register on the same enable as
//    the read, as in mase_dot_product's stage R: folds, OCEB = adv;
//  - rom2 (18 bits) read while adv is low, its second register without an enable: folds, OCEA = 1;
//  - rom3 like rom1, but its read also leaves the module unregistered (peek): stays as it is.
module outreg_small (
    input clk,
    input adv,
    input [8:0] a1,
    input [8:0] a2,
    input [8:0] a3,
    output [35:0] y1,
    output [17:0] y2,
    output [17:0] y3,
    output [17:0] peek
);
  reg [35:0] rom1[0:511];
  reg [17:0] rom2[0:511];
  reg [17:0] rom3[0:511];
  integer i;
  initial
    for (i = 0; i < 512; i = i + 1) begin
      rom1[i] = {i[8:0] * 9'd37, 9'd5 ^ i[8:0], i[8:0] * 9'd11, ~i[8:0]};
      rom2[i] = {i[8:0] ^ 9'h155, i[8:0] * 9'd3};
      rom3[i] = {i[8:0] * 9'd7, i[8:0] + 9'd100};
    end
  reg [35:0] s1, r1;
  reg [17:0] s2, r2, s3, r3;
  always @(posedge clk) begin
    if (adv) begin
      s1 <= rom1[a1];
      r1 <= s1;
    end
    if (!adv) s2 <= rom2[a2];
    r2 <= s2;
    if (adv) begin
      s3 <= rom3[a3];
      r3 <= s3;
    end
  end
  assign y1 = r1;
  assign y2 = r2;
  assign y3 = r3;
  assign peek = s3;
endmodule
