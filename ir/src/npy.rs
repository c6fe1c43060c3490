//! numpy `.npy` files in and out.
