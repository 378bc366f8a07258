//! `usage`: what each `kernelgate` command does, in prose — the long descriptions clap shows
//! under `help <command>` and `<command> --help` (the usage lines and option lists come from
//! the commands' clap definitions, `cli::args`, so they cannot drift from the parser) — and the
//! version. `run`'s options are environment variables (libtest rejects unknown flags), so its
//! description lists them; the README's tables say the same at more length.

/// `kernelgate --version`.
pub fn version() -> String {
    format!("kernelgate {}", env!("CARGO_PKG_VERSION"))
}

/// A value a command's option cannot take (clap prints it beside the option).
#[derive(Debug, thiserror::Error)]
pub enum BadValue {
    /// Not a count above 0 (`--reps`, `--last`).
    #[error("`{0}` is not a positive count")]
    Count(String),
    /// Not a duration (`--durations`).
    #[error("`{0}` is not a duration up to 1 s such as 5us or 1ms")]
    Duration(String),
    /// Not a percentage (`--max-slowdown`).
    #[error("`{0}` is not a percentage (write 2%)")]
    Percent(String),
}

/// A count above 0, as an option's value.
pub fn positive_count(text: &str) -> Result<usize, BadValue> {
    text.parse()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| BadValue::Count(text.into()))
}

/// After `kernelgate --help`'s list of commands.
pub const AFTER: &str =
    "Harness options are KERNELGATE_* variables (`kernelgate help run` lists them). \
`kernelgate help <command>` says what a command does.";

/// `kernelgate compare`'s description.
pub const COMPARE: &str = "\
Applies the gate to two results files (written with KERNELGATE_RESULTS) and prints a table
of the trials that changed: every trial that failed in NEW (whether or not OLD has it), a
verdict other than unchanged, timed on one side only or in another regime, or ended otherwise.
Each file's commit, branch, start time and mode are read from the file. Warns when the runs
differ in mode (stored against paired) or in their suite files. --json prints every trial, the
counts and the exit code as JSON.

Exit: NEW's own failure class, the worst first — 2: bad input, files from different devices,
or a harness failure in NEW; 101: a trial failed correctness in NEW; 1: a regression (found
between the files, or NEW's own) or a memory or resource limit; 0: none of these.";

/// `kernelgate merge`'s description.
pub const MERGE: &str = "\
Joins the results files of one run's shards (KERNELGATE_SHARD=k/n, one per runner; each file
records its shard) into one, and exits with the merged run's code. Refuses files of different
modes or bases, commits, suite revisions or kinds of GPU; names a missing shard, a shard given
twice and a trial in two files. Exit 0: passed; 1: only performance failures (a regression, a
limit); 101: a correctness failure; 2: bad input, or a harness failure in a shard.";

/// `kernelgate calibrate`'s description.
pub const CALIBRATE: &str = "\
On a GPU, how far your suites' verdicts can be trusted, as one Markdown report
(docs/calibration.md says how to read it). Every kernel trial of the project's suites (or of
--suites DIR) is timed against itself (paired A/A) N times, each in a fresh worker and decided as
a paired run decides (re-measures and fresh-worker confirmations included): its false alarms,
and the smallest slowdown detected in 95% at the suite's max_slowdown, estimated by resampling
the measured per-round ratios (an estimate from measured noise, not a planted slowdown).
kernelgate's own benchmark (accuracy beside CuPy and Nsight Compute, planted slowdowns) is
`kernelgate-lab calibrate`, built from lab/ in kernelgate's repository.

KERNELGATE_DEVICE (its first ordinal), KERNELGATE_TIMEOUT and KERNELGATE_SEED apply. Progress goes
to stderr. Exit 0: done; 2: no GPU, bad arguments or a failed measurement.";

/// `kernelgate report`'s description.
pub const REPORT: &str = "\
Renders results files (KERNELGATE_RESULTS; several are one run's shards, joined as merge joins
them) as one self-contained HTML page (--html): what needs attention first, time against size
per kernel, distributions against the baseline, memory and resources, the device; and as the
run's Markdown summary (--markdown FILE, or - for standard output: a pull-request comment).
Exit 0: written; 2: bad input.";

/// `kernelgate history`'s description.
pub const HISTORY: &str = "\
The run history in SQLite (--db FILE, or KERNELGATE_HISTORY). Runs are read in commit order
along the first-parent history of the repository in the current directory
(`git rev-list --first-parent HEAD`) where it knows their commit, by start time otherwise: a
run of an old commit imported late takes its place. Graph and cold timings of a trial are
separate trends; a switch is shown, never drift.

  (no command)     a table per trial and regime over the last runs (verdicts: · unchanged,
                   + improved, R regressed, ? inconclusive, F failed, - not compared) and the
                   trend page (--html, default beside the database)
  import           append results files (KERNELGATE_RESULTS); each keeps the commit, branch,
                   start time and mode it records; a run already stored is refused
  --check          each trend's latest run against its trailing runs by the gate's own rule
                   (pooled samples, max_slowdown widened by their spread, one Benjamini-
                   Hochberg family over every trend); exit 1 when one regressed, naming its
                   first slow run. Level shifts (E-divisive means) are shown in the table.

Exit 0: done, no regression; 1: a regression (--check); 2: bad input.";

/// `kernelgate history import`'s description.
pub const HISTORY_IMPORT: &str = "\
Appends results files (KERNELGATE_RESULTS) to the history; each keeps the commit, branch,
start time and mode it records (--commit, --branch and --mode fill in for files that record
none). A run the history holds already, or one given twice, is refused naming it, and nothing
is imported.";

/// `kernelgate run`'s description: what it does, its libtest arguments and every variable.
pub const RUN: &str = "\
kernelgate run [FILTER] [--list] [--exact] [--ignored] [--format json] [-- ...]
cargo test --test perf -- [the same]

Runs every suite: compile, check correctness against the reference kernel, time, compare with
the stored baseline. Trials are named suite::kernel::case; FILTER selects by substring.

options (environment variables):
  KERNELGATE_SUITES=DIR          suite files (default suites)
  KERNELGATE_BASELINES=DIR       stored baselines (default baselines)
  KERNELGATE_BASE=REV            paired mode: time every trial against its version at git REV
                                 (or a folder of the base's suites), interleaved, not baselines;
                                 trials whose code is identical at REV are skipped, not timed
  KERNELGATE_TIME_IDENTICAL=1    paired mode: time identical-code trials anyway (an A/A test)
  KERNELGATE_BLESS=1             record the trials that ran and passed as the new baselines
  KERNELGATE_BLESS=add           add this run to the baselines (another GPU or host), keeping the spread
  KERNELGATE_BLESS_IN_CI=1       bless though CI is set (a CI job made to bless, started by hand)
  KERNELGATE_DEVICE=0[,1...]     GPU ordinals to spread the trials over
  KERNELGATE_SHARD=k/n           run the k-th of n parts of the trials, dealt by the baselines'
                                 recorded times (or the CI's parallel-job variables)
  KERNELGATE_REQUIRE_GPU=1       no GPU fails the run (set it in CI)
  KERNELGATE_REQUIRE_NVRTC=1     no NVRTC fails the compile trials
  KERNELGATE_REQUIRE_BASELINE=1  a trial without a comparable baseline fails
  KERNELGATE_STRICT=1            a trial still inconclusive after re-measuring fails
  KERNELGATE_STRICT_TIME=1       a slowdown attributed to the machine (machine-slower) fails too
  KERNELGATE_COUNTERS=auto|all|0 which trials read hardware counters (auto: bless, re-measures not unchanged,
                                 confirmations, suites with a counter gate)
  KERNELGATE_REQUIRE_COUNTERS=1  counters that cannot be read (no CUPTI, no permission) exit 2
  KERNELGATE_ARCH=sm_90          NVRTC target when no GPU says which (a list for `sass`)
  KERNELGATE_CUDA_INCLUDE=DIRS   CUDA headers (cuda_fp16.h, cub/) when not found by itself
  KERNELGATE_NVCC=PATH           nvcc for sources with host code (default: PATH, CUDA_HOME, the
                                 nvidia-cuda-nvcc wheel beside NVRTC)
  KERNELGATE_CACHE=DIR           compile cache (default target/kernelgate-cache)
  KERNELGATE_TIMEOUT=SECONDS     per trial, before its worker is stopped (default 120, at most 86400)
  KERNELGATE_LOCK_DIR=DIR        where the per-GPU locks live (default: the temp folder; share
                                 it between containers that share a GPU)
  KERNELGATE_SEED=N              override every suite's first input seed
  KERNELGATE_PROFILE=1           profile inside sampling (prepare, flush, launch, sync, readback)
  KERNELGATE_RESULTS=FILE.json   write the whole run as JSON
  KERNELGATE_JUNIT=FILE.xml      write JUnit XML
  KERNELGATE_MARKDOWN=FILE.md    write the Markdown summary
  KERNELGATE_ANNOTATIONS=1       print ::error annotations (on by itself in GitHub Actions)
  KERNELGATE_ALLOW_EMPTY=1       a suites folder without suites passes instead of exit 2
  KERNELGATE_DUMP=DIR            write a failing trial's inputs and outputs as .npy
  KERNELGATE_HTML=FILE.html      write the HTML report
  KERNELGATE_HISTORY=FILE.sqlite append the run to the SQLite history
  KERNELGATE_COMMIT=SHA          the commit results and history record (default: CI's, then git's)
  KERNELGATE_BRANCH=NAME         the branch they record (default: CI's, then git's)
  KERNELGATE_DIRTY=1|0           whether the work tree had changes (default: git status)
An unknown KERNELGATE_* variable is an error naming the closest known one. A project file
(kernelgate.toml, found from the working directory up) may give defaults for the settings that
are not chosen per run; a variable that is set wins (docs/project.md).

exit codes: 0 passed; 1 performance (a regression or a limit); 101 correctness (a wrong output,
a fault, a time-out); 2 infrastructure or bad input (suite file, variable, arguments).";

/// `kernelgate baselines`'s description.
pub const BASELINES: &str = "\
kernelgate baselines join OUT IN...

Joins the baselines folders of several runners, each blessed in its own processes with
KERNELGATE_BLESS=add (the CI bless job uploads one per runner), into the folder OUT, which may
be one of them. Per device and suite every trial keeps every run of every folder once (runs the
folders share, such as the committed baseline both started from, count once) and every counter
read; each entry is re-pooled from its runs. A trial blessed on other code in two folders is an
error naming both; runs beyond the 12 an entry keeps are dropped oldest first, with a warning.

exit codes: 0 written; 2 an unusable input file, other code in two folders, or OUT not writable.";

/// `kernelgate init`'s description.
pub const INIT: &str = "\
Sets kernelgate up in an existing repository, beside its kernels where they are: writes the
project file kernelgate.toml (the suites folder, the baselines folder, the folders suites may
read sources from), the baselines folder, and the CI workflows .github/workflows/kernelgate.yml and kernelgate-comment.yml.
With --kernel PATH --entry NAME, a first suite over that existing source file, in place: one
buffer per pointer parameter, the kernel as its own reference (add your faster version and
move `reference = true` to the one you trust). Never overwrites a file: what exists is kept
and named. Prints the next three commands.

exit codes: 0 written; 2 bad input (no such file or entry, a file that exists).";

/// `kernelgate sass`'s description.
pub const SASS: &str = "\
Without a GPU: compiles the suites' kernels with NVRTC (through the compile cache) and prints
the SASS of every kernel whose suite::kernel name contains FILTER, addresses and encodings
stripped, branch targets as labels, with its code identity (a hash of the machine code, the
constant data and the attributes it runs with; docs/sass.md) and its registers, shared, local
and stack bytes.

With --base, a git revision (extracted with git archive, the working tree untouched) or a
folder of the base's suites: the kernels whose code identity differs are listed, each with its
resource changes, its instruction-mix deltas by class and a diff of its SASS; new and gone
kernels named, unchanged ones counted.

KERNELGATE_SUITES, KERNELGATE_CACHE and KERNELGATE_ARCH apply; KERNELGATE_ARCH may be a list
(sm_90,sm_100): each architecture in turn. Needs NVRTC, and nvdisasm (PATH, $CUDA_HOME/bin,
/usr/local/cuda/bin, or the PyPI wheel nvidia-cuda-nvdisasm under target/cuda-tools).

exit codes: 0 done; 1 a kernel does not compile; 2 bad input (no NVRTC or nvdisasm, an
unusable base or module).";

/// `kernelgate bisect`'s description.
pub const BISECT: &str = "\
Finds the first commit after GOOD, up to BAD along first parents, at which TRIAL (a name as
`kernelgate run -- --list` prints it) regressed against GOOD. Each probed commit's suites are
taken out of git (git archive, the working tree untouched) and the trial is timed in paired
mode against GOOD's, interleaved in one GPU worker, judged by the paired gate. A commit whose
trial identity (its kernels' code, launches, inputs and settings; docs/sass.md) equals GOOD's
or an already probed commit's is decided without timing; a commit that stays inconclusive
after one re-measure, or whose suites do not load or compile, is skipped and listed. Prints
the commit, its change with its 95% interval, what changed in the trial since its parent, and
its SASS diff against its parent (when nvdisasm is found).

Every commit is run by this kernelgate: a regression of the harness or the driver is out of
its reach. KERNELGATE_SUITES, KERNELGATE_CACHE, KERNELGATE_DEVICE, KERNELGATE_SEED and
KERNELGATE_TIMEOUT apply; KERNELGATE_BASE and KERNELGATE_BLESS are refused.

exit codes: 0 the first regressed commit found; 1 not pinned down (BAD did not regress
against GOOD, or skipped commits hide which it is: the candidates are listed); 2 bad input
(a revision git does not know, GOOD not an ancestor of BAD, the trial missing or broken at
either end) or no GPU to time on.";

/// `kernelgate lint`'s description.
pub const LINT: &str = "\
Validates every suite file (errors at file:line:col) and every stored baseline file, and,
where NVRTC can be loaded, compiles every kernel for KERNELGATE_ARCH and applies
fp64 = \"forbid\". Needs no GPU. With FILE arguments, checks those files instead, each with
the validator kernelgate applies where it reads it: a suite (.toml), a golden or input .npy, a
results or baseline file (.json), a run history (SQLite). With --launches [FILTER], prints
each case's launches as the suites resolve them (grid, block, dynamic shared memory,
arguments) for the trials whose name contains FILTER: what a run would launch, without a GPU.

exit codes: 0 all valid; 1 a kernel does not compile, breaks fp64 = \"forbid\", or is launched
with more than its compiled code can run on KERNELGATE_ARCH (a block over __launch_bounds__,
registers or shared memory over the block's limit); 2 bad input.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_lists_every_variable() {
        // Every variable a user sets is listed (the worker's and CI's own are not options).
        for v in crate::config::KNOWN {
            if ![
                "KERNELGATE_WORKER",
                "KERNELGATE_WORKER_PROGRAM",
                "KERNELGATE_REPORTS",
            ]
            .contains(v)
            {
                assert!(
                    RUN.contains(&format!("{v}=")),
                    "{v} missing from `help run`"
                );
            }
        }
        assert!(version().starts_with("kernelgate 0."));
    }
}
