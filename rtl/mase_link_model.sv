// mase_link_model: a simulation model of the physical link between two devices: flits (data and
// valid) travel from the sender to the receiver, credit pulses from the receiver back to the
// sender, each direction delayed by exactly LATENCY cycles. It has no ready: the credits
// mase_link_tx and mase_link_rx exchange are the flow control, so the wire never stalls.
//   Latency: LATENCY cycles each way (a value driven in cycle t appears in cycle t + LATENCY).
//   II:      1 flit per cycle.
//   Paths cut: every output comes from the last stage of a register chain.
`ifndef MASE_ASSERT_SVH `include "mase_assert.svh" `endif
module mase_link_model #(
    /// Bits the link carries per cycle (1..65536).
    parameter int LINK_WIDTH = 8,
    /// Cycles a flit or credit takes from one end to the other (1..4096).
    parameter int LATENCY = 1
) (
    /// Clock and reset (the link carries nothing after reset).
    `MASE_CLOCK_PORTS,
    /// Flit sent by mase_link_tx this cycle.
    input logic [LINK_WIDTH-1:0] tx_data,
    /// `tx_data` carries a flit.
    input logic tx_valid,
    /// The flit sent LATENCY cycles ago, at mase_link_rx's input.
    output logic [LINK_WIDTH-1:0] rx_data,
    /// `rx_data` carries a flit.
    output logic rx_valid,
    /// Credit pulse sent by mase_link_rx this cycle.
    input logic rx_credit,
    /// The credit pulse sent LATENCY cycles ago, at mase_link_tx's input.
    output logic tx_credit
);
`ifndef SYNTHESIS
  generate
    `MASE_CHECK_RANGE(LINK_WIDTH, 1, 65536);
    `MASE_CHECK_RANGE(LATENCY, 1, 4096);
  endgenerate
`endif

  /// Stages (kept >= 1 so an invalid LATENCY still elaborates to its check).
  localparam int N = LATENCY > 0 ? LATENCY : 1;
  /// Word carried each cycle: {credit, valid, flit}.
  localparam int W = LINK_WIDTH + 2;

  /// The word LATENCY cycles old, driving the outputs.
  logic [W-1:0] out_q;

  if (N == 1) begin : g_register
    always_ff @(posedge clk) begin
      out_q <= {rx_credit, tx_valid, tx_data};
      if (rst) out_q[W-1-:2] <= '0;
    end
  end else begin : g_ring
    // A ring of N-1 words read and rewritten at one pointer, plus `out_q`: a word written in
    // cycle t is read into `out_q` when the pointer returns (t + N - 1) and shows in t + N. A
    // ring rather than a register chain: any LATENCY elaborates without loop unrolling.
    /// Ring depth.
    localparam int D = N - 1;
    /// Pointer width.
    localparam int AW = D > 1 ? $clog2(D) : 1;
    /// The words in flight. No reset: `filled` says which hold words sent after reset.
    logic [W-1:0] ring [D];
    /// Slot read and rewritten this cycle.
    logic [AW-1:0] ptr;
    /// Every slot has been written since reset (until then the slot read is stale).
    logic filled;

    always_ff @(posedge clk) begin
      ring[ptr] <= {rx_credit, tx_valid, tx_data};
      out_q     <= ring[ptr];
      if (!filled) out_q[W-1-:2] <= '0;
      if (rst) out_q[W-1-:2] <= '0;
    end

    always_ff @(posedge clk) begin
      if (rst) begin
        ptr    <= '0;
        filled <= 1'b0;
      end else begin
        ptr <= (ptr == AW'(D - 1)) ? '0 : ptr + 1'b1;
        if (ptr == AW'(D - 1)) filled <= 1'b1;
      end
    end
  end

  assign rx_data   = out_q[LINK_WIDTH-1:0];
  assign rx_valid  = out_q[LINK_WIDTH];
  assign tx_credit = out_q[LINK_WIDTH+1];
endmodule
