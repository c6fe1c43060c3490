// mase_sim_runtime_impl.h: definitions behind mase_sim_runtime.h (log, $stop/$fatal overrides).
// Included once, by the generated shim, after verilated.h.
#ifndef MASE_SIM_RUNTIME_IMPL_H
#define MASE_SIM_RUNTIME_IMPL_H
#include <cstdarg>
#include <cstdio>
#include <string>

/// Thrown by vl_stop / vl_fatal; caught in mase_eval.
struct MaseStop {};

/// Per-thread log of everything the model printed (bounded).
static thread_local std::string mase_log_buf;

int mase_vl_printf(const char* fmt, ...) {
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    const int n = std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (mase_log_buf.size() < (1u << 20)) mase_log_buf.append(buf);
    return n;
}

void vl_finish(const char* filename, int linenum, const char* hier) {
    (void)filename;
    (void)linenum;
    (void)hier;
    Verilated::threadContextp()->gotFinish(true);
}

void vl_stop(const char* filename, int linenum, const char* hier) {
    (void)hier;
    mase_vl_printf("%%Error: %s:%d: Verilog $stop\n", filename ? filename : "", linenum);
    throw MaseStop{};
}

void vl_fatal(const char* filename, int linenum, const char* hier, const char* msg) {
    (void)hier;
    mase_vl_printf("%%Error: %s:%d: %s\n", filename ? filename : "", linenum, msg ? msg : "");
    throw MaseStop{};
}
#endif
