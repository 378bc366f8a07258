//! `usage`: the `kernelgate` command's help texts — `--help`, `help <command>`, `<command>
//! --help` — and its version. Options are environment variables (libtest rejects unknown
//! flags), so `help run` lists them; the README's tables say the same at more length.

/// `kernelgate --version`.
pub fn version() -> String {
    format!("kernelgate {}", env!("CARGO_PKG_VERSION"))
}

/// `kernelgate --help`: the commands.
pub const OVERVIEW: &str = "\
kernelgate: benchmark-regression tests for CUDA kernels

usage: kernelgate <command> [arguments]

commands:
  run [LIBTEST ARGS]          run the suites, as `cargo test --test perf` does
  lint                        validate every suite and baseline, compile every kernel (no GPU)
  compare [--all] OLD.json NEW.json
                              the gate between two results files (KERNELGATE_RESULTS)
  merge OUT.json IN.json...   join the results files of shards
  report RESULTS.json... --html OUT.html
                              the HTML report of results files (no GPU)
  history [FILTER | import FILES... | --check]
                              the run history in SQLite: trends in commit order, drift
  calibrate [--reps N] [--out FILE.md] [--suites DIR] [--durations LIST]
                              accuracy, false alarms, sensitivity and cost, on a GPU
  sass [FILTER] [--json] [--base REV|FOLDER]
                              the kernels' SASS and code identities; with --base, the kernels
                              whose code changed, with a diff (no GPU)
  bisect GOOD BAD TRIAL       the first commit at which a trial regressed against GOOD (GPU)
  help <command>              what a command does and takes

options: --help, --version; harness options are KERNELGATE_* variables (`kernelgate help run`)";

/// The help of one command, or `None` for an unknown one.
pub fn command(name: &str) -> Option<&'static str> {
    Some(match name {
        "run" => RUN,
        "lint" => LINT,
        "compare" => {
            "\
usage: kernelgate compare [--all] [--allow-device] OLD.json NEW.json

Applies the gate to two results files (written with KERNELGATE_RESULTS) and prints a table
of the trials that changed: a verdict other than unchanged, timed on one side only or in
another regime, or ended otherwise (passed, then failed). Each file's commit, branch, start
time and mode are read from the file. Warns when the runs differ in mode (stored against
paired) or in their suite files.

options:
  --all            list every trial, unchanged and unmeasured ones too
  --allow-device   compare files from different devices (otherwise exit 2)

Exit 0: no regression; 1: a regression; 2: bad input, or files from different devices."
        }
        "merge" => {
            "\
usage: kernelgate merge OUT.json IN.json...

Joins the results files of shards (KERNELGATE_SHARD=k/n, one per runner) into one, and
decides the gate over all of them together. Exit 0: passed; 1: a trial failed; 2: bad input."
        }
        "calibrate" => {
            "\
usage: kernelgate calibrate [--reps N] [--out FILE.md] [--durations 5us,20us,100us,1ms]
       kernelgate calibrate --suites DIR [--reps N] [--out FILE.md]

On a GPU, prints one Markdown report (docs/calibration.md says how to read it):
  accuracy      kernelgate's median beside CuPy events and Nsight Compute (where installed)
  sensitivity   kernels of each duration (--durations) made 0 (A/A), 1, 2, 3, 5% slower, each
                repetition in a fresh worker process, the regime pinned from a baseline;
                stored mode (against that baseline) and paired mode (against the unslowed
                kernel, interleaved): flagged regressed / N at max_slowdown 0.5, 1 and 2%
  cost          wall time per verdict in each mode
With --suites DIR: your suites instead. Every kernel trial timed against itself (paired A/A)
N times, each in a fresh worker: its false alarms, and the smallest slowdown detected in 95%
at the suite's max_slowdown, estimated by resampling the measured per-round ratios (an
estimate from measured noise, not a planted slowdown).

options:
  --reps N            repetitions (default 20)
  --out FILE.md       also write the report there
  --suites DIR        calibrate the suites in DIR
  --durations LIST    sensitivity kernel durations (default 5us,20us,100us,1ms; at most 1s)
KERNELGATE_DEVICE (its first ordinal) and KERNELGATE_TIMEOUT apply, KERNELGATE_SEED with
--suites. Progress goes to stderr. Exit 0: done; 2: no GPU, bad arguments or a failed measurement."
        }
        "report" => {
            "\
usage: kernelgate report RESULTS.json... --html OUT.html

Renders results files (KERNELGATE_RESULTS) as one self-contained HTML page: what needs
attention first, time against size per kernel, distributions against the baseline, memory and
resources, the device. Exit 0: written; 2: bad input."
        }
        "history" => {
            "\
usage: kernelgate history [FILTER] [--last N] [--html OUT.html] [--db FILE]
       kernelgate history import RESULTS.json... [--commit SHA] [--branch NAME]
                                 [--mode stored|paired] [--db FILE]
       kernelgate history --check [--since COMMIT|DATE] [--max-slowdown 2%] [FILTER] [--db FILE]

The run history in SQLite. Runs are read in commit order along the first-parent history of
the repository in the current directory (`git rev-list --first-parent HEAD`) where it knows
their commit, by start time otherwise: a run of an old commit imported late takes its place.
Graph and cold timings of a trial are separate trends; a switch is shown, never drift.

  (no command)     a table per trial and regime over the last runs (verdicts: · unchanged,
                   + improved, R regressed, ? inconclusive, F failed, - not compared) and the
                   trend page (--html, default beside the database)
  import           append results files (KERNELGATE_RESULTS); each keeps the commit, branch,
                   start time and mode it records
  --check          level shifts by change-point detection (E-divisive means); exit 1 when a
                   trial moved beyond its max_slowdown, naming the commits between

options:
  --db FILE            the history (default KERNELGATE_HISTORY)
  FILTER               only trials whose name contains it
  --last N             the table covers the last N runs (default 10)
  --html OUT.html      where the trend page goes
  --commit SHA         import: the commit, for files that record none (older kernelgate)
  --branch NAME        import: the branch, for files that record none
  --mode stored|paired import: the mode, overriding what the file says
  --since COMMIT|DATE  --check: from the run of that commit (a prefix) or date on
  --max-slowdown 2%    --check: one threshold for every trial instead of each suite's

Exit 0: done, no drift; 1: drift (--check); 2: bad input."
        }
        "sass" => SASS,
        "bisect" => BISECT,
        "help" => "usage: kernelgate help <command>",
        _ => return None,
    })
}

const RUN: &str = "\
usage: kernelgate run [FILTER] [--list] [--exact] [--ignored] [--format json] [-- ...]
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
  KERNELGATE_DEVICE=0[,1...]     GPU ordinals to spread the trials over
  KERNELGATE_SHARD=k/n           run a stable k-th of n parts of the trials
  KERNELGATE_REQUIRE_GPU=1       no GPU fails the run (set it in CI)
  KERNELGATE_REQUIRE_NVRTC=1     no NVRTC fails the compile trials
  KERNELGATE_REQUIRE_BASELINE=1  a trial without a comparable baseline fails
  KERNELGATE_STRICT=1            a trial still inconclusive after re-measuring fails
  KERNELGATE_STRICT_TIME=1       a slowdown attributed to the machine (machine-slower) fails too
  KERNELGATE_COUNTERS=auto|all|0 which trials read hardware counters (auto: bless, re-measures,
                                 confirmations, suites with a counter gate)
  KERNELGATE_REQUIRE_COUNTERS=1  counters that cannot be read (no CUPTI, no permission) exit 2
  KERNELGATE_ARCH=sm_90          NVRTC target when no GPU says which (a list for `sass`)
  KERNELGATE_CUDA_INCLUDE=DIRS   CUDA headers (cuda_fp16.h, cub/) when not found by itself
  KERNELGATE_CACHE=DIR           compile cache (default target/kernelgate-cache)
  KERNELGATE_TIMEOUT=SECONDS     per trial, before its worker is stopped (default 120)
  KERNELGATE_SEED=N              override every suite's first input seed
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
An unknown KERNELGATE_* variable is an error naming the closest known one.

exit codes: 0 passed; 1 performance (a regression or a limit); 101 correctness (a wrong output,
a fault, a time-out); 2 infrastructure or bad input (suite file, variable, arguments).";

const SASS: &str = "\
usage: kernelgate sass [FILTER] [--json]
       kernelgate sass --base REV|FOLDER [FILTER]

Without a GPU: compiles the suites' kernels with NVRTC (through the compile cache) and prints
the SASS of every kernel whose suite::kernel name contains FILTER, addresses and encodings
stripped, branch targets as labels, with its code identity (a hash of the machine code, the
constant data and the attributes it runs with; docs/sass.md) and its registers, shared, local
and stack bytes.

options:
  --json               the code identities as JSON instead of the SASS (no nvdisasm needed)
  --base REV|FOLDER    compare with a git revision (extracted with git archive, the working
                       tree untouched) or a folder of the base's suites: list the kernels
                       whose code identity differs, each with its resource changes, its
                       instruction-mix deltas by class and a diff of its SASS; new and gone
                       kernels named, unchanged ones counted
KERNELGATE_SUITES, KERNELGATE_CACHE and KERNELGATE_ARCH apply; KERNELGATE_ARCH may be a list
(sm_90,sm_100): each architecture in turn. Needs NVRTC, and nvdisasm (PATH, $CUDA_HOME/bin,
/usr/local/cuda/bin, or the PyPI wheel nvidia-cuda-nvdisasm under target/cuda-tools).

exit codes: 0 done; 1 a kernel does not compile; 2 bad input (no NVRTC or nvdisasm, an
unusable base or module).";

const BISECT: &str = "\
usage: kernelgate bisect GOOD BAD TRIAL

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

const LINT: &str = "\
usage: kernelgate lint

Validates every suite file (errors at file:line:col) and every stored baseline file, and,
where NVRTC can be loaded, compiles every kernel for KERNELGATE_ARCH and applies
fp64 = \"forbid\". Needs no GPU.

exit codes: 0 all valid; 1 a kernel does not compile or breaks fp64 = \"forbid\"; 2 bad input.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_of_the_overview_has_help_and_run_lists_every_variable() {
        for name in [
            "run",
            "lint",
            "compare",
            "merge",
            "report",
            "history",
            "calibrate",
            "sass",
            "bisect",
            "help",
        ] {
            assert!(OVERVIEW.contains(&format!("  {name}")), "{name}");
            assert!(command(name).is_some(), "{name}");
        }
        assert_eq!(command("frobnicate"), None);
        // Every variable a user sets is listed (the worker's and CI's own are not options).
        for v in crate::config::KNOWN {
            if !["KERNELGATE_WORKER", "KERNELGATE_REPORTS"].contains(v) {
                assert!(
                    RUN.contains(&format!("{v}=")),
                    "{v} missing from `help run`"
                );
            }
        }
        assert!(version().starts_with("kernelgate 0."));
        let history = command("history").unwrap();
        for option in [
            "--last", "--commit", "--branch", "--mode", "--since", "--db", "--html",
        ] {
            assert!(history.contains(option), "`help history` omits {option}");
        }
        let compare = command("compare").unwrap();
        assert!(compare.contains("--all") && compare.contains("--allow-device"));
    }
}
