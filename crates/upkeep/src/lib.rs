//! Keeping the data current: the facts CTranslate2's own tree declares and where our data
//! drifts from them (`upstream`), a new CTranslate2 version's file made from the previous
//! one (`bump`), and pins recorded (`pin_inputs`, the `pin` command) and written into the
//! variant files and the lock (`pin`).

pub mod bump;
pub mod commands;
pub mod new_version;
pub mod pin;
pub mod pin_inputs;
pub mod pin_variant;
pub mod upstream;
