//! `bench`'s own flags: what is timed, and how often.

use std::path::PathBuf;

use clap::Args;

use ct2v_proof::commands::bench::Options;

#[derive(Args)]
pub struct BenchFlags {
    /// Whisper size of the random model: tiny, base, small, medium
    #[arg(long, value_name = "SIZE", default_value = "base")]
    pub size: String,
    /// Threads for both sides (intra_threads and OMP_NUM_THREADS; default: all CPUs)
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Alternating rounds (one process per side per round)
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    pub rounds: u32,
    /// Timed repetitions inside each process, after one warm-up
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub repeat: u32,
    /// Tokens each greedy generate produces
    #[arg(long, value_name = "N", default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=200))]
    pub tokens: u32,
    /// Compute types to time (int16 needs a build with MKL on both sides)
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        default_value = "float32,int8"
    )]
    pub compute_types: Vec<String>,
    /// An environment variable for both sides, e.g. CT2_USE_MKL=0 (repeatable)
    #[arg(long, value_name = "KEY=VALUE")]
    pub env: Vec<String>,
    /// Install the official wheel only from the wheelhouse in the cache (no network)
    #[arg(long)]
    pub offline: bool,
    /// Where to write the JSON report (default: target/xtask/bench/…/bench-<size>.json)
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

impl BenchFlags {
    /// The options the flags say; threads default to every CPU.
    pub fn options(self) -> Options {
        Options {
            size: self.size,
            threads: self
                .threads
                .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from)),
            rounds: self.rounds,
            repeat: self.repeat,
            tokens: self.tokens,
            compute_types: self.compute_types,
            env: self.env,
            offline: self.offline,
            json: self.json,
        }
    }
}
