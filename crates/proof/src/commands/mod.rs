//! One file per command, named as the binary's `xtask/src/cmd/`: the command's request (what
//! its flags ask for), the call into the stages below, and all of its output, through the
//! [`Reporter`](ct2v_support::report::Reporter) it hands down. The stages print nothing.

pub mod bench;
pub mod smoke;
pub mod verify;
pub mod verify_release;
