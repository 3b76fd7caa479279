//! The CTranslate2 pipeline: the variant files loaded and resolved (`variant`), the GPU SDK
//! found (`sdk`), the pure plan (`plan`), the executor that runs it (`execute`), the release
//! and its pip index (`release`) and the machine report (`doctor`).

pub mod commands;
pub mod doctor;
pub mod execute;
pub mod plan;
pub mod release;
pub mod sdk;
pub mod variant;
