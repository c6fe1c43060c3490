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
    /// Clock; everything is registered on its rising edge.
    input logic clk,
    /// Synchronous active-high reset: the link carries nothing after it.
    input logic rst,
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
  initial begin
    `MASE_CHECK_RANGE(LINK_WIDTH, 1, 65536);
    `MASE_CHECK_RANGE(LATENCY, 1, 4096);
  end
`endif

  /// Register stages (kept >= 1 so an invalid LATENCY still elaborates to its check).
  localparam int N = LATENCY > 0 ? LATENCY : 1;

  /// Flit data stages; stage N-1 drives `rx_data`. No reset: `valid` says what holds a flit.
  logic [LINK_WIDTH-1:0] data_q [N];
  /// Flit valid stages.
  logic [N-1:0] valid_q;
  /// Credit stages.
  logic [N-1:0] credit_q;

  always_ff @(posedge clk) begin
    data_q[0] <= tx_data;
    for (int i = 1; i < N; i++) data_q[i] <= data_q[i-1];
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      valid_q  <= '0;
      credit_q <= '0;
    end else begin
      valid_q  <= N'({valid_q, tx_valid});
      credit_q <= N'({credit_q, rx_credit});
    end
  end

  assign rx_data   = data_q[N-1];
  assign rx_valid  = valid_q[N-1];
  assign tx_credit = credit_q[N-1];
endmodule
