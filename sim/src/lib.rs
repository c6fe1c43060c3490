//! Verilator build cache, generated C ABI shim and a stream harness (drivers, monitors, scoreboards).
