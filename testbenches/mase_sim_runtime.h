// mase_sim_runtime.h: the fixed part of the C ABI shim that mase-sim generates around a Verilated
// model (the generated part is the port table, see sim/src/shim.rs).
//
// It is force-included (-include) into every translation unit of the build, so that:
//  - VL_PRINTF output ($display, assertion messages) goes to a per-thread log the Rust side reads
//    (mase_log) instead of the process's stdout;
//  - $stop, $fatal and failed assertions (vl_stop / vl_fatal, overridden with VL_USER_STOP and
//    VL_USER_FATAL) throw MaseStop instead of aborting the process; mase_eval catches it and
//    returns 1, and the instance is marked dead.
// Everything here has hidden visibility except the mase_* entry points (MASE_EXPORT).
#ifndef MASE_SIM_RUNTIME_H
#define MASE_SIM_RUNTIME_H

#define MASE_EXPORT extern "C" __attribute__((visibility("default")))

/// Appends a formatted message to the calling thread's simulation log.
int mase_vl_printf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
#define VL_PRINTF mase_vl_printf

#endif
