// harness_speed_main.cpp: the plain C++ baseline of the harness-speed bench
// (sim/examples/harness_speed.rs). It dlopens a mase-sim shared library and drives a component
// with one input and one output stream (ports: clk, rst, data_in_0, _valid, _ready, data_out_0,
// _valid, _ready; data ports of at most 32 bits) through the same C ABI the Rust harness uses:
// valid and ready always high, a new input beat every accepted cycle, outputs folded into a
// checksum. Prints "cycles beats seconds checksum".
// Usage: harness_speed_main <lib.so> <cycles> <in_width> <out_width>
#include <dlfcn.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

using NewFn = void* (*)();
using FreeFn = void (*)(void*);
using EvalFn = int (*)(void*);
using PortFn = void* (*)(void*, int);

/// Writes a port of at most 32 bits (Verilator stores 1..8 bits in uint8_t, ..16 in uint16_t).
static inline void put(void* p, int width, uint32_t v) {
    if (width <= 8) *static_cast<uint8_t*>(p) = static_cast<uint8_t>(v);
    else if (width <= 16) *static_cast<uint16_t*>(p) = static_cast<uint16_t>(v);
    else *static_cast<uint32_t*>(p) = v;
}

/// Reads a port of at most 32 bits.
static inline uint32_t take(const void* p, int width) {
    if (width <= 8) return *static_cast<const uint8_t*>(p);
    if (width <= 16) return *static_cast<const uint16_t*>(p);
    return *static_cast<const uint32_t*>(p);
}

int main(int argc, char** argv) {
    if (argc != 5) {
        std::fprintf(stderr, "usage: %s <lib.so> <cycles> <in_width> <out_width>\n", argv[0]);
        return 2;
    }
    void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        std::fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
    auto mnew = reinterpret_cast<NewFn>(dlsym(lib, "mase_new"));
    auto mfree = reinterpret_cast<FreeFn>(dlsym(lib, "mase_free"));
    auto eval = reinterpret_cast<EvalFn>(dlsym(lib, "mase_eval"));
    auto port = reinterpret_cast<PortFn>(dlsym(lib, "mase_port"));
    const uint64_t cycles = std::strtoull(argv[2], nullptr, 10);
    const int win = std::atoi(argv[3]);
    const int wout = std::atoi(argv[4]);
    const uint32_t in_mask = win >= 32 ? 0xffffffffu : ((1u << win) - 1);
    void* h = mnew();
    auto* clk = static_cast<uint8_t*>(port(h, 0));
    auto* rst = static_cast<uint8_t*>(port(h, 1));
    void* din = port(h, 2);
    auto* din_v = static_cast<uint8_t*>(port(h, 3));
    auto* din_r = static_cast<uint8_t*>(port(h, 4));
    void* dout = port(h, 5);
    auto* dout_v = static_cast<uint8_t*>(port(h, 6));
    auto* dout_r = static_cast<uint8_t*>(port(h, 7));
    *rst = 1;
    for (int i = 0; i < 3; i++) {
        *clk = 0;
        eval(h);
        *clk = 1;
        eval(h);
    }
    *rst = 0;
    *clk = 0;
    uint64_t beats = 0, sum = 0;
    uint32_t next = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (uint64_t c = 0; c < cycles; c++) {
        put(din, win, next & in_mask);
        *din_v = 1;
        *dout_r = 1;
        if (eval(h)) return 1;
        if (*din_r) next = next * 1664525u + 1013904223u;
        if (*dout_v) {
            sum = sum * 31 + take(dout, wout);
            beats++;
        }
        *clk = 1;
        if (eval(h)) return 1;
        *clk = 0;
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%llu %llu %.6f %llu\n", static_cast<unsigned long long>(cycles),
                static_cast<unsigned long long>(beats), s, static_cast<unsigned long long>(sum));
    mfree(h);
    return 0;
}
