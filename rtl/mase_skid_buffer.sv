// mase_skid_buffer: full-throughput register slice for a valid/ready stream.
//
// Two entries (a main register and a skid register). The output data and valid come straight
// from registers and the input ready is a register, so the slice cuts the data, valid AND ready
// combinational paths between producer and consumer.
//   Latency: 1 cycle (input beat accepted at edge t is valid at the output after edge t).
//   II:      1 beat per cycle with no back-pressure.
//   Paths cut: data, valid, ready.
// The data word is opaque: LANES lanes of DATA_WIDTH bits, lane i at [i*DATA_WIDTH +: DATA_WIDTH].
`ifndef MASE_ASSERT_SVH `include "mase_assert.svh" `endif
module mase_skid_buffer #(
    /// The word: LANES lanes (1..1024) of DATA_WIDTH bits (1..64).
    `MASE_WORD_PARAMS
) (
    /// Clock and reset (reset empties the slice).
    /// data_in_0: input beats (flat packed lanes), taken while the skid register is empty
    /// (registered).
    /// data_out_0: output beats (data and valid registered).
    `MASE_STAGE_PORTS(LANES * DATA_WIDTH, LANES * DATA_WIDTH)
);
`ifndef SYNTHESIS
  generate
    `MASE_CHECK_WORD;
  endgenerate
`endif

  /// Skid register: holds the beat that arrived while the output was stalled.
  logic [LANES*DATA_WIDTH-1:0] skid_data;
  /// Skid register occupied.
  logic                        skid_valid;

  assign data_in_0_ready = !skid_valid;

  always_ff @(posedge clk) begin
    if (rst) begin
      data_out_0_valid <= 1'b0;
      skid_valid       <= 1'b0;
    end else if (!data_out_0_valid || data_out_0_ready) begin
      // Output register free (or drained this cycle): refill from the skid, else from the input.
      if (skid_valid) begin
        data_out_0_valid <= 1'b1;
        skid_valid       <= 1'b0;
      end else begin
        data_out_0_valid <= data_in_0_valid;
      end
    end else if (data_in_0_valid && !skid_valid) begin
      // Output stalled and a beat arrives: park it in the skid register.
      skid_valid <= 1'b1;
    end
  end

  // Data registers carry no reset (cheaper; validity is tracked by the valid flags).
  always_ff @(posedge clk) begin
    if (!data_out_0_valid || data_out_0_ready) begin
      data_out_0 <= skid_valid ? skid_data : data_in_0;
    end
    if (data_in_0_valid && data_in_0_ready && data_out_0_valid && !data_out_0_ready) begin
      skid_data <= data_in_0;
    end
  end

  // Handshake: every stream port keeps an offered beat offered and unchanged until taken.
  `MASE_ASSERT_STREAM_STABLE(data_in_0)
  `MASE_ASSERT_STREAM_STABLE(data_out_0)
endmodule
