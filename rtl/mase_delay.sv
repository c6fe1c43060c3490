// mase_delay: a chain of DEPTH registers of WIDTH bits that all load in the cycles en is high,
// so q is d as it was DEPTH enabled cycles ago. For what travels beside a pipeline's datapath
// unchanged (valid flags, a row's statistics, operands needed a few stages later): one chain
// instead of a register written out per stage, and its length one parameter the pipeline's
// schedule sets.
//   Pipeline: DEPTH register stages (DEPTH = 0: q is d, no register).
//   Latency: DEPTH enabled cycles.
//   Paths cut: each stage is a register; nothing but the load enable sits between stages.
`ifndef MASE_ASSERT_SVH `include "mase_assert.svh" `endif
module mase_delay #(
    /// Registers in the chain (0..1024; 0 makes q a wire from d).
    parameter int DEPTH = 1,
    /// Bits per register (1..65536).
    parameter int WIDTH = 1,
    /// 1: rst clears every register (valid flags, which must not show a beat after reset);
    /// 0: no reset (data qualified by a valid flag: fewer control nets).
    parameter int RESET = 0
) (
    /// Clock and synchronous reset (rst clears the registers when RESET = 1).
    `MASE_CLOCK_PORTS,
    /// Load enable: every register takes its predecessor's value (the first one d).
    input  logic             en,
    /// The value entering the chain.
    input  logic [WIDTH-1:0] d,
    /// The value that entered DEPTH enabled cycles ago.
    output logic [WIDTH-1:0] q
);
`ifndef SYNTHESIS
  generate
    `MASE_CHECK_RANGE(DEPTH, 0, 1024);
    `MASE_CHECK_RANGE(WIDTH, 1, 65536);
    `MASE_CHECK_FLAG(RESET);
  endgenerate
`endif
  if (DEPTH == 0) begin : g_wire
    assign q = d;
    /// A wire has no register to clock, reset or enable; this sink keeps lint quiet.
    logic unused_ctl;
    assign unused_ctl = ^{clk, rst, en};
  end else begin : g_chain
    /// The registers, stage s (1..DEPTH) at [(s-1)*WIDTH +: WIDTH] (a vector, not an array, so
    /// that no tool takes it for a memory).
    logic [DEPTH*WIDTH-1:0] r;
    always_ff @(posedge clk) begin
      if (RESET != 0 && rst) r <= '0;
      else if (en) r <= (DEPTH * WIDTH)'({r, d});
    end
    assign q = r[(DEPTH-1)*WIDTH+:WIDTH];
  end
endmodule
