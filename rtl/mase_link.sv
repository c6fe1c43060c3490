// mase_link: an inter-device link as one streaming component: mase_link_tx serialises the beats
// onto LINK_WIDTH bits per cycle, mase_link_model carries flits and credits LATENCY cycles each
// way, mase_link_rx reassembles and buffers DEPTH beats. It is the library's testable form of the
// link (the shared harness drives valid/ready streams); a multi-device system places tx and rx in
// different device tops and the model between them.
//   Latency: FLITS + LATENCY + 2 cycles from a beat taken to it valid at the output (tx 1 to the
//            first flit, FLITS - 1 more to the last, LATENCY on the link, rx 2).
//   II:      FLITS = ceil(LANES*DATA_WIDTH / LINK_WIDTH) cycles per beat when DEPTH covers the
//            credit round trip (DEPTH >= 1 + ceil((2*LATENCY + 4) / FLITS)); with fewer credits
//            DEPTH beats per FLITS + 2*LATENCY + 4 cycles.
//   Paths cut: data, valid and ready on both streams (registers in tx and rx).
`ifndef MASE_ASSERT_SVH `include "mase_assert.svh" `endif
module mase_link #(
    /// The beat, LANES lanes (1..1024) of DATA_WIDTH bits (1..64), and LINK_WIDTH, the bits the
    /// link carries per cycle (1..65536).
    `MASE_LINK_WORD_PARAMS,
    /// Cycles a flit or credit takes across the link, each way (1..4096).
    parameter int LATENCY = 1,
    /// Beats the receiver buffers = the sender's credits (1..65536).
    parameter int DEPTH = 8
) (
    /// Clock and reset (reset empties the link and restores the credits).
    /// data_in_0: beats to send, taken while the sender holds a credit (ready registered).
    /// data_out_0: beats received, from the receiver's buffer (data and valid registered).
    `MASE_STAGE_PORTS(LANES * DATA_WIDTH, LANES * DATA_WIDTH)
);
`ifndef SYNTHESIS
  generate
    `MASE_CHECK_LINK_WORD;
    `MASE_CHECK_RANGE(LATENCY, 1, 4096);
    `MASE_CHECK_RANGE(DEPTH, 1, 65536);
  endgenerate
`endif

  /// DEPTH as the sender's credit count, clamped into its range so that an invalid DEPTH is
  /// reported by the check above under its own name (not by the sender as CREDITS).
  localparam int CREDITS = DEPTH < 1 ? 1 : DEPTH > 65536 ? 65536 : DEPTH;

  /// Flit the sender drives onto the link.
  logic [LINK_WIDTH-1:0] tx_data;
  /// `tx_data` carries a flit.
  logic                  tx_valid;
  /// Credit pulse arriving at the sender.
  logic                  tx_credit;
  /// Flit arriving at the receiver.
  logic [LINK_WIDTH-1:0] rx_data;
  /// `rx_data` carries a flit.
  logic                  rx_valid;
  /// Credit pulse the receiver sends back.
  logic                  rx_credit;

  mase_link_tx #(
      .DATA_WIDTH(DATA_WIDTH),
      .LANES     (LANES),
      .LINK_WIDTH(LINK_WIDTH),
      .CREDITS   (CREDITS)
  ) u_tx (
      .clk            (clk),
      .rst            (rst),
      `MASE_PASS_STREAM(data_in_0),
      .link_data      (tx_data),
      .link_valid     (tx_valid),
      .link_credit    (tx_credit)
  );

  mase_link_model #(
      .LINK_WIDTH(LINK_WIDTH),
      .LATENCY   (LATENCY)
  ) u_model (
      .clk      (clk),
      .rst      (rst),
      .tx_data  (tx_data),
      .tx_valid (tx_valid),
      .rx_data  (rx_data),
      .rx_valid (rx_valid),
      .rx_credit(rx_credit),
      .tx_credit(tx_credit)
  );

  mase_link_rx #(
      .DATA_WIDTH(DATA_WIDTH),
      .LANES     (LANES),
      .LINK_WIDTH(LINK_WIDTH),
      .DEPTH     (DEPTH)
  ) u_rx (
      .clk             (clk),
      .rst             (rst),
      .link_data       (rx_data),
      .link_valid      (rx_valid),
      .link_credit     (rx_credit),
      `MASE_PASS_STREAM(data_out_0)
  );

  // Handshake: every stream port keeps an offered beat offered and unchanged until taken.
  `MASE_ASSERT_STREAM_STABLE(data_in_0)
  `MASE_ASSERT_STREAM_STABLE(data_out_0)
endmodule
