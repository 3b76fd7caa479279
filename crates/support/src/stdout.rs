//! A command's result written to stdout so that a reader that went away (`xtask matrix |
//! head -n1`) is an error, which the binary turns into a quiet exit 0, instead of std's
//! panic. Use `ct2v_support::outln!(…)?` where a command would use `println!`.

/// `println!` that returns the write's `std::io::Result` instead of panicking.
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*)
    }};
}

/// `print!` that returns the write's `std::io::Result` instead of panicking.
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        write!(std::io::stdout().lock(), $($arg)*)
    }};
}
