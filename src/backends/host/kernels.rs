//! Host kernels: none through this backend. Codelets run their Rust host function
//! directly (`codelet`), so the host keeps the `Device::launch` default.
