//! Keeping the data current: the facts CTranslate2's own tree declares and where our data
//! drifts from them (`upstream`), a new CTranslate2 version's file made from the previous
//! one (`version_file`), and pins recorded (`pin_inputs`) and written into the variant files
//! and the lock (`pin`). The commands `bump`, `pin` and `upstream` are in `commands`.

pub mod commands;
pub mod pin;
pub mod pin_inputs;
pub mod upstream;
pub mod version_file;
