// mase_reduce_tree: the maximum (OP = 0, signed) or the sum (OP = 1, modulo 2^WIDTH) of N
// values, by a free-running tree of registered pairwise steps, with a valid flag and TAG bits
// travelling beside each set of values. A reduction of many lanes in one cycle is a chain of
// log2 N compares or carry chains; one register per level leaves one of them per path.
//   Pipeline: level 0 is the input itself; level l (1..LEVELS = ceil(log2 N)) registers
//   ceil(N / 2^l) nodes, node j the result of nodes 2j and 2j+1 of level l-1 (an odd last node is
//   registered unchanged). Every level advances every cycle (no enable, no stall): what enters
//   leaves LEVELS cycles later.
//   Latency: LEVELS cycles (N = 1: none, out is in).
//   Paths cut: one compare or one adder between registers.
`ifndef MASE_ASSERT_SVH `include "mase_assert.svh" `endif
module mase_reduce_tree #(
    /// Values reduced (1..4096).
    parameter int N = 4,
    /// Bits per value (1..64; a sum wraps at WIDTH bits, so make it wide enough).
    parameter int WIDTH = 8,
    /// 0: signed maximum; 1: sum.
    parameter int OP = 0,
    /// Bits travelling with the values (flags of the set they belong to; 1..64).
    parameter int TAG = 1
) (
    /// Clock and synchronous reset (rst clears the valid flags of the levels).
    `MASE_CLOCK_PORTS,
    /// The values, value j at [j*WIDTH +: WIDTH].
    input  logic [N*WIDTH-1:0] in_data,
    /// in_data holds a set of values to reduce.
    input  logic               in_valid,
    /// Flags of the set (no reset: qualified by the valid flag).
    input  logic [    TAG-1:0] in_tag,
    /// The maximum or sum of the set.
    output logic [  WIDTH-1:0] out_data,
    /// out_data holds the result of a set (LEVELS cycles after it entered).
    output logic               out_valid,
    /// The set's flags.
    output logic [    TAG-1:0] out_tag
);
`ifndef SYNTHESIS
  generate
    if (N < 1 || N > 4096 || WIDTH < 1 || WIDTH > 64 || OP < 0 || OP > 1 || TAG < 1 || TAG > 64) begin : g_check_params
      $fatal(1, "mase_reduce_tree: N %0d, WIDTH %0d, OP %0d or TAG %0d out of range", N, WIDTH, OP, TAG);
    end
  endgenerate
`endif
  /// Registered levels: ceil(log2 N).
  localparam int LEVELS = N > 1 ? $clog2(N) : 0;

  for (genvar l = 0; l <= LEVELS; l++) begin : g_level
    /// Nodes at this level: ceil(N / 2^l).
    localparam int NN = (N + (1 << l) - 1) >> l;
    /// Node values (node j at [j*WIDTH +: WIDTH]).
    logic [NN*WIDTH-1:0] v;
    /// The level holds a set.
    logic sv;
    /// The set's flags.
    logic [TAG-1:0] st;
    if (l == 0) begin : g_leaf
      assign v  = in_data;
      assign sv = in_valid;
      assign st = in_tag;
    end else begin : g_node
      /// Nodes of the level below.
      localparam int NP = (N + (1 << (l - 1)) - 1) >> (l - 1);
      always_ff @(posedge clk) begin
        if (rst) sv <= 1'b0;
        else sv <= g_level[l-1].sv;
      end
      always_ff @(posedge clk) st <= g_level[l-1].st;
      for (genvar j = 0; j < NN; j++) begin : g_pair
        if (2 * j + 1 < NP) begin : g_two
          /// The pair's left and right nodes.
          logic signed [WIDTH-1:0] a, b;
          /// b - a, one bit wider so that it cannot overflow: its sign bit is a > b, the
          /// last sum bit of one carry chain, so a single LUT level selects after it (a
          /// compare written as a > b was mapped with its overflow correction merged into the
          /// select, several levels of wide multiplexers).
          logic signed [WIDTH:0] b_minus_a;
          assign a = g_level[l-1].v[2*j*WIDTH+:WIDTH];
          assign b = g_level[l-1].v[(2*j+1)*WIDTH+:WIDTH];
          assign b_minus_a = (WIDTH + 1)'(b) - (WIDTH + 1)'(a);
          always_ff @(posedge clk) begin
            v[j*WIDTH+:WIDTH] <= OP == 0 ? (b_minus_a[WIDTH] ? a : b) : a + b;
          end
        end else begin : g_one
          always_ff @(posedge clk) v[j*WIDTH+:WIDTH] <= g_level[l-1].v[2*j*WIDTH+:WIDTH];
        end
      end
    end
  end
  if (LEVELS == 0) begin : g_wire
    /// One value has no level to register; this sink keeps lint quiet.
    logic unused_ctl;
    assign unused_ctl = ^{clk, rst};
  end
  assign out_data  = g_level[LEVELS].v[WIDTH-1:0];
  assign out_valid = g_level[LEVELS].sv;
  assign out_tag   = g_level[LEVELS].st;
endmodule
