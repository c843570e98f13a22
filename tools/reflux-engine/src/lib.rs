//! The software CXL SSD's compression engine, outside the VM (see
//! `tools/testing/reflux/engine_abi.rs` for the interface and why it exists).
//!
//! [`window::Engine`] serves the slots of a mapped window; `main.rs` maps the VM's shared PMR
//! file and runs it until it is killed.

pub use reflux_proto::abi;
#[path = "../../testing/reflux/engine_abi.rs"]
pub mod engine_abi;
pub mod ops;
pub mod window;
