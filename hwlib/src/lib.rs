//! Component registry: parameters, validation, SV mapping, ports, cost models and bit-accurate models of the RTL library.
