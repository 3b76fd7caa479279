//! How many compile jobs a build step runs: the host's cores, bounded by its memory, so that a
//! 4-core/16 GB runner or a many-core laptop with little memory does not swap or get killed.
//!
//! Set at run time through `CMAKE_BUILD_PARALLEL_LEVEL` (which `cmake --build` reads), not in
//! the plan: the plan and its fingerprint stay the same on every machine.

/// What a user or CI sets to choose the number themselves; it is passed on untouched.
pub(crate) const PARALLEL_ENV: &str = "CMAKE_BUILD_PARALLEL_LEVEL";

/// Memory one nvcc job may take on CTranslate2's CUDA sources: nvcc runs cicc and ptxas per
/// architecture, and heavy template files take 2.7–5 GB each (flash-attention's `MAX_JOBS`
/// advice, Dao-AILab/flash-attention PR #2079; LMCache sizes a 16 GB runner at 2 jobs × 2
/// nvcc threads, LMCache PR #4733). The low end of that range: CTranslate2's kernels are
/// lighter than flash-attention's, which the wheel leaves out.
pub(crate) const GIB_PER_NVCC_JOB: f64 = 3.0;
/// Memory one host C++ compile job may take (oneDNN's and CTranslate2's largest units).
pub(crate) const GIB_PER_CXX_JOB: f64 = 1.5;

/// The jobs for `cores` and `memory_gib`, at `gib_per_job` each: at least 1.
pub fn bounded(cores: usize, memory_gib: f64, gib_per_job: f64) -> usize {
    let by_memory = (memory_gib / gib_per_job).floor() as usize;
    cores.min(by_memory).max(1)
}

/// The jobs for this host, with how they were chosen (for the log); `None` when the user set
/// [`PARALLEL_ENV`] or the host's memory cannot be read.
pub(crate) fn for_host(gib_per_job: f64) -> Option<(usize, String)> {
    if std::env::var_os(PARALLEL_ENV).is_some() {
        return None;
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let memory = memory_gib()?;
    let jobs = bounded(cores, memory, gib_per_job);
    Some((
        jobs,
        format!(
            "{jobs} compile job(s): {cores} core(s), {memory:.1} GiB of memory at \
             {gib_per_job} GiB a job ({PARALLEL_ENV} sets it)"
        ),
    ))
}

/// The host's physical memory in GiB.
#[cfg(target_os = "linux")]
fn memory_gib() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / (1024.0 * 1024.0))
}

#[cfg(windows)]
fn memory_gib() -> Option<f64> {
    use windows_sys::Win32::System::SystemInformation::{GlobalMemoryStatusEx, MEMORYSTATUSEX};
    let mut status: MEMORYSTATUSEX = unsafe { std::mem::zeroed() };
    status.dwLength = std::mem::size_of::<MEMORYSTATUSEX>() as u32;
    // SAFETY: `status` is a MEMORYSTATUSEX with its length set, as the call requires.
    let ok = unsafe { GlobalMemoryStatusEx(&mut status) };
    (ok != 0).then(|| status.ullTotalPhys as f64 / (1024.0 * 1024.0 * 1024.0))
}

#[cfg(not(any(target_os = "linux", windows)))]
fn memory_gib() -> Option<f64> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_bounds_the_cores_and_one_job_always_runs() {
        // A hosted runner: 4 cores, 16 GB.
        assert_eq!(bounded(4, 15.6, GIB_PER_NVCC_JOB), 4);
        // A 16-core laptop with 16 GB compiling CUDA: memory decides.
        assert_eq!(bounded(16, 15.6, GIB_PER_NVCC_JOB), 5);
        assert_eq!(bounded(16, 15.6, GIB_PER_CXX_JOB), 10);
        // This project's 2-core VM.
        assert_eq!(bounded(2, 23.4, GIB_PER_CXX_JOB), 2);
        assert_eq!(bounded(8, 1.0, GIB_PER_NVCC_JOB), 1);
    }

    #[test]
    fn the_host_memory_is_read() {
        if cfg!(any(target_os = "linux", windows)) {
            let gib = memory_gib().expect("the host's memory");
            assert!(gib > 0.1 && gib < 1.0e5, "{gib}");
        }
    }
}
