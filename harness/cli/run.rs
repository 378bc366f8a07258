//! `run`: the perf binary's entry point and `kernelgate run` — reads the options and suites,
//! plans the trials, hands them to the [`Runner`] with the GPU worker pool as its executor,
//! writes the reports, and shows every trial through libtest.

use crate::config::{self, Config, Mode};
use crate::exit;
use crate::nextest::{self, Invocation};
use crate::report::results::{Results, Status};
use crate::report::{closing, terminal};
use crate::runner::{plan, Planned, Progress, Runner};
use crate::suite::Suite;
use crate::worker::client::WORKER_ENV;
use crate::worker::pool::{Started, WorkerPool};
use libtest_mimic::{Arguments, Completion, Failed, FormatSetting, Trial};
use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::time::Instant;

/// The perf binary's entry point: `tests/perf.rs` calls this and nothing else. A panic is a
/// harness error, exit 2 ([`exit::guard`]).
pub fn main() -> ExitCode {
    exit::guard(|| {
        crate::device::libraries::ensure();
        run(std::env::args(), None)
    })
}

/// How the perf binary was started, for the commands reports print: under nextest or cargo,
/// with the cargo profile it was built in (the folder above `deps`: `debug` none, `release`
/// `--release`, another `--profile NAME`), else its own path (a copied binary, as the CI bundle
/// runs it).
fn perf_launcher(program: &str) -> String {
    let nextest = std::env::var_os("NEXTEST").is_some();
    if !nextest && std::env::var_os("CARGO").is_none() {
        return crate::shell::shell_word(program);
    }
    let exe = std::env::current_exe().ok();
    let profile = exe
        .as_deref()
        .and_then(|p| p.parent())
        .filter(|deps| deps.file_name().is_some_and(|n| n == "deps"))
        .and_then(|deps| deps.parent()?.file_name()?.to_str().map(String::from));
    let flag = match (profile.as_deref(), nextest) {
        (None | Some("debug"), _) => String::new(),
        (Some("release"), false) => " --release".into(),
        (Some(name), false) => format!(" --profile {}", crate::shell::shell_word(name)),
        (Some(name), true) => format!(" --cargo-profile {}", crate::shell::shell_word(name)),
    };
    match nextest {
        true => format!("cargo nextest run{flag} --test perf --"),
        false => format!("cargo test{flag} --test perf --"),
    }
}

/// Runs the suites with libtest arguments `args` (the first is the program name), or serves
/// as the GPU worker when started as one; `launcher` is how the trials are run again
/// (`./kernelgate run`), `None`: the perf binary's ([`perf_launcher`]).
pub fn run(args: impl Iterator<Item = String>, launcher: Option<String>) -> ExitCode {
    if std::env::var_os(WORKER_ENV).is_some() {
        let cache = Config::from_env().map(|c| c.cache).ok();
        return ExitCode::from(crate::worker::serve(cache) as u8);
    }
    run_trials(args, launcher).unwrap_or_else(|code| code)
}

/// [`run`] in the process that runs the trials: `Err` is an exit that comes before them
/// (bad input, printed).
fn run_trials(
    args: impl Iterator<Item = String>,
    launcher: Option<String>,
) -> Result<ExitCode, ExitCode> {
    let entry = crate::report::totals::mark_entry();
    crate::project::enter();
    let args: Vec<String> = args.collect();
    let program = args.first().cloned().unwrap_or_else(|| "perf".into());
    let mut args = Arguments::from_iter(args);
    // One thread keeps each trial's figures on its own line, in order.
    args.test_threads.get_or_insert(1);
    let config = Config {
        launcher: launcher.unwrap_or_else(|| perf_launcher(&program)),
        ..Config::from_env().map_err(exit::bad_input)?
    };
    if config.mode == Mode::Bless && config::in_ci() && !config::bless_in_ci() {
        return Err(exit::bad_input("KERNELGATE_BLESS is refused when `CI` is set: baselines are recorded on purpose, by a person, and reviewed (unset CI to bless locally; a CI job made to bless, started by hand, sets KERNELGATE_BLESS_IN_CI=1 and has the result reviewed)"));
    }
    // SIGTERM (a CI time limit) or SIGINT: finish cleanly with what ran (`stop`).
    crate::stop::install();
    // Where this process will run the trials itself (not a nextest process waiting for
    // another's), its GPU workers start now: each opens its device and warms up while the
    // suites are read and compiled.
    let exact = args.exact.then_some(args.filter.as_deref()).flatten();
    let plain = matches!(
        nextest::invocation(exact, nextest::target_dir()),
        Ok(Invocation::Plain)
    );
    let started = (plain && !args.list).then(|| Started::now(&config));
    // Launch expressions read the run's GPU (`sm_count`, ...): its first device's.
    if crate::suite::device::named_in(&config.suites) {
        crate::suite::device::set_from_gpu(config.devices.first().copied().unwrap_or(0));
    }
    let suites = super::suites::load_suites(&config, "kernelgate", "; nothing was run")?;
    // The stored baselines this run reads, validated before anything runs (paired mode reads
    // none).
    let stored = match config.base {
        Some(_) => Vec::new(),
        None => super::suites::check_baselines(
            &config,
            Some(&suites),
            "kernelgate",
            "; nothing was run",
        )?,
    };
    // Paired mode: the base revision's suites, loaded and validated before anything runs.
    let preparing = Instant::now();
    let base = match &config.base {
        None => None,
        Some(_) if config.mode == Mode::Bless => {
            return Err(exit::bad_input(crate::paired::PairedError::Bless));
        }
        Some(rev) => Some(
            crate::paired::load(rev, &config.suites, &config.base_dir(), &suites)
                .map_err(exit::bad_input)?,
        ),
    };
    let base_seconds = base.as_ref().map(|_| preparing.elapsed().as_secs_f64());
    let pretty = matches!(args.format, None | Some(FormatSetting::Pretty)) && !args.quiet;
    let mut plan = plan(&suites);
    if let Some((k, n)) = config.shard {
        // Dealt by the baselines' recorded times where they have them (`shard`).
        let names: Vec<&str> = plan.iter().map(|p| p.name.as_str()).collect();
        let (mine, loads) = crate::shard::split(&names, (k, n), &crate::shard::costs(&stored));
        let (all, mut keep) = (plan.len(), mine.into_iter());
        plan.retain(|_| keep.next().unwrap_or(false));
        if let (Some(loads), false) = (loads, args.list) {
            let total: f64 = loads.iter().sum();
            eprintln!("kernelgate: shard {k}/{n}: {} of {all} trials, {:.1} s of the {total:.1} s the baselines record (dealt by recorded time)", plan.len(), loads[k as usize - 1]);
        }
        if !args.list {
            eprintln!("kernelgate: shard {k}/{n}: its verdicts are deferred: `kernelgate merge` decides every shard's trials as one family, and its exit is the gate's (this shard's exit says whether it measured, and checked correctness)");
        }
    }
    if args.list {
        // Nextest skips what `--list --ignored` prints: GPU trials where no driver loads.
        let trials = plan
            .iter()
            .map(|p| {
                Trial::test(p.name.clone(), || Ok(()))
                    .with_ignored_flag(nextest::listed_ignored(&config, p))
            })
            .collect();
        return Ok(libtest_mimic::run(&args, trials).exit_code());
    }
    let invocation = nextest::invocation(exact, nextest::target_dir()).map_err(exit::bad_input)?;
    let start = Instant::now();
    let loaded = entry.elapsed().as_secs_f64();
    // A trial carries the flag it was listed with where that decides what runs (under nextest,
    // and with `--ignored`); otherwise it runs, to say why it was ignored.
    let under_nextest = matches!(invocation, Invocation::Nextest(_));
    let flags = under_nextest || args.ignored;
    let ignored_flag = |p: &Planned| flags && nextest::listed_ignored(&config, p);
    let selects = |p: &Planned| {
        !args.is_filtered_out(
            &Trial::test(p.name.clone(), || Ok(())).with_ignored_flag(ignored_flag(p)),
        )
    };
    // On a terminal each trial as it starts; off one (a CI log) each trial as it is measured,
    // and every 10 s what is still running.
    let progress = match (pretty, std::io::stderr().is_terminal()) {
        (false, _) => Progress::Off,
        (true, true) => Progress::Terminal,
        (true, false) => Progress::Log,
    };
    // Runs the trials of the plan at `selected` with `config` ([`execute`]).
    let execute_plan = |config: &Config, selected: &[usize], progress, started| {
        let run = Run {
            plan: &plan,
            selected,
            progress,
            started,
            loaded: (loaded, base_seconds),
        };
        execute(config, (&suites, base.as_ref()), run)
    };
    let (results, ran) = match &invocation {
        Invocation::Plain => {
            let selected: Vec<usize> = (0..plan.len()).filter(|&i| selects(&plan[i])).collect();
            let ran =
                execute_plan(&config, &selected, progress, started).map_err(exit::bad_input)?;
            (ran.results.clone(), Some(ran))
        }
        Invocation::Nextest(run) => {
            // The process that runs the trials runs all of them, as `cargo test --test perf`
            // does: one family for the gate, complete reports, one bless. Each process then
            // prints its own trial's annotations.
            let config_for_run = Config {
                annotations: false,
                ..config.clone()
            };
            let all: Vec<usize> = (0..plan.len()).collect();
            let trial = args.filter.as_deref().unwrap_or_default();
            let shared = run.share(trial, nextest::wait_limit(&config, plan.len()), || {
                execute_plan(&config_for_run, &all, Progress::Off, None)
                    .map(|ran| (ran.results.clone(), ran))
            });
            let shared = shared.map_err(exit::bad_input)?;
            eprintln!("{}", shared.note);
            (shared.results, shared.ran)
        }
    };
    // The trials this process answers for: under nextest, its own; otherwise all that ran.
    let own = Results {
        trials: results
            .trials
            .iter()
            .filter(|t| plan.iter().any(|p| p.name == t.name && selects(p)))
            .cloned()
            .collect(),
        ..results.clone()
    };
    if under_nextest && config.annotations {
        for line in crate::report::annotations::render(&own) {
            println!("{line}");
        }
    }
    let inline = pretty && args.test_threads == Some(1);
    let missing = match (&results.provenance.incomplete, under_nextest) {
        (Some(why), _) => Missing::Stopped(why.clone()),
        (None, true) => Missing::Fails,
        (None, false) => Missing::NotSelected,
    };
    let trials = libtest_trials(&plan, &results, inline, &missing)
        .into_iter()
        .zip(&plan)
        .map(|(t, p)| t.with_ignored_flag(ignored_flag(p)))
        .collect();
    let conclusion = libtest_mimic::run(&args, trials);
    let report_failed = ran.as_ref().is_some_and(|r| r.report_failed);
    if let (true, Some(ran)) = (pretty, &ran) {
        for line in &ran.blessed {
            println!("kernelgate: {line}");
        }
        if config.mode == Mode::Gate {
            let warnings = [
                closing::inconclusive_warning(&results),
                closing::machine_warning(&results),
            ];
            for w in warnings.into_iter().flatten() {
                println!("{w}");
            }
        }
        if let Some(line) = closing::paired_summary(&results) {
            println!("{line}");
        }
        if let Some(line) = closing::new_trials(&results).filter(|_| config.mode == Mode::Gate) {
            println!("kernelgate: {line}");
        }
        for line in results
            .identical
            .iter()
            .flat_map(crate::report::identical::lines)
            .chain(crate::report::variants::lines(&results))
        {
            println!("kernelgate: {line}");
        }
        if let Some(totals) = &results.totals {
            for line in closing::summary(totals, start.elapsed().as_secs_f64()) {
                println!("{line}");
            }
        }
    }
    if let Some(why) = &results.provenance.incomplete {
        println!(
            "kernelgate: {why}: the trials that finished are above and in the results file, which is marked incomplete; the others have no verdict"
        );
        return Ok(exit::code(exit::BAD_INPUT));
    }
    Ok(match (own.worst_failure(), report_failed) {
        (Some(kind), _) => exit::code(kind.exit_code()),
        (None, true) => exit::code(exit::BAD_INPUT),
        (None, false) => conclusion.exit_code(),
    })
}

/// What running the trials produced, in the process that ran them.
struct Ran {
    /// Every selected trial's record, with where the run came from.
    results: Results,
    /// What blessing wrote.
    blessed: Vec<String>,
    /// A report file could not be written (each problem was printed).
    report_failed: bool,
}

/// What [`execute`] runs: the trials of `plan` at `selected`, on the workers `started` early
/// where there are any; `loaded` is how long reading the options and suites took, and of that
/// preparing the base revision (paired mode).
struct Run<'p> {
    plan: &'p [Planned],
    selected: &'p [usize],
    progress: Progress,
    started: Option<Started>,
    loaded: (f64, Option<f64>),
}

/// Runs the trials of `run` on the GPU worker pool, judges and (when asked) blesses them, and
/// writes the reports; or says why the run cannot start.
fn execute(
    config: &Config,
    (suites, base): (&[Suite], Option<&crate::paired::Base>),
    run: Run,
) -> Result<Ran, crate::worker::pool::MixedGpus> {
    let mut pool = WorkerPool::new(config, suites, base.map_or(&[][..], |b| &b.suites));
    if let Some(started) = run.started {
        pool = pool.adopt(started);
    }
    pool.same_kind_of_gpu()?;
    let runner = Runner {
        config,
        suites,
        executor: &pool,
        progress: run.progress,
        base,
        stop: crate::stop::process(),
    };
    let started = crate::baseline::now_rfc3339();
    let mut report = runner.run(run.plan, run.selected);
    report.results = report.results.with_rooflines();
    let files: Vec<(&str, &std::path::Path)> = suites
        .iter()
        .map(|s| (s.name.as_str(), s.path.as_path()))
        .collect();
    report.results.provenance =
        crate::report::provenance::Provenance::here(started, &config.suites, &files);
    report.results.provenance.shard = config
        .shard
        .map(|(index, count)| crate::report::provenance::Shard { index, count });
    report.results.provenance.incomplete = crate::stop::process().requested().map(|signal| {
        format!(
            "stopped by {signal} after {} of {} trial(s)",
            report.results.trials.len(),
            run.selected.len()
        )
    });
    if let Some(t) = report.results.totals.as_mut() {
        (t.load_seconds, t.base_seconds) = run.loaded;
    }
    if config.mode == Mode::Gate {
        crate::report::added::mark_added(&mut report.results);
    }
    let report_failed = !write_reports(config, &mut report.results);
    Ok(Ran {
        results: report.results,
        blessed: report.blessed,
        report_failed,
    })
}

/// What a planned trial without a record means.
#[derive(Clone)]
enum Missing {
    /// It was not selected (a filter): it passes unseen.
    NotSelected,
    /// Under nextest every trial ran, so one without a record fails.
    Fails,
    /// The run was stopped before it finished: ignored, with why.
    Stopped(String),
}

/// One libtest trial per planned trial, in list order; selected ones report their record.
fn libtest_trials(
    plan: &[Planned],
    results: &Results,
    inline: bool,
    missing: &Missing,
) -> Vec<Trial> {
    let device = results.device_info.clone();
    plan.iter()
        .map(|trial| {
            let record = results
                .trials
                .iter()
                .find(|r| r.name == trial.name)
                .cloned();
            let device = device.clone();
            let missing = missing.clone();
            Trial::ignorable_test(trial.name.clone(), move || {
                let Some(r) = record else {
                    return match &missing {
                        Missing::Fails => Err(Failed::from(
                            "not among the trials this nextest run ran (did the suites change during the run?)",
                        )),
                        Missing::Stopped(why) => Ok(Completion::ignored_with(format!("not run: the run was {why}"))),
                        Missing::NotSelected => Ok(Completion::Completed),
                    };
                };
                let line = terminal::line(&r, device.as_ref());
                if inline && !line.is_empty() {
                    let mut out = std::io::stdout().lock();
                    let _ = write!(out, "{line}  ");
                    let _ = out.flush();
                }
                match r.status {
                    Status::Passed => Ok(Completion::Completed),
                    Status::Ignored => Ok(Completion::ignored_with(
                        r.ignored.clone().unwrap_or_default(),
                    )),
                    Status::Failed => Err(Failed::from(terminal::failure(&r))),
                }
            })
        })
        .collect()
}

/// Writes the JUnit XML, Markdown summary, HTML report and history asked for, prints GitHub
/// annotations, then writes the results file with how long the others took (and the run's
/// wall time so far) in its totals; false when a file could not be written (each problem is
/// printed).
pub fn write_reports(config: &Config, results: &mut Results) -> bool {
    let at = Instant::now();
    let mut ok = write_other_reports(config, results);
    if let Some(t) = results.totals.as_mut() {
        t.report_seconds = at.elapsed().as_secs_f64();
        t.wall_seconds = Some(crate::report::totals::since_entry());
    }
    if let Some(path) = &config.results {
        if let Err(e) = results.save(path) {
            eprintln!("error: cannot write the results file: {e}");
            ok = false;
        }
    }
    ok
}

/// Every report but the results file; false when one could not be written.
fn write_other_reports(config: &Config, results: &Results) -> bool {
    use crate::report::{annotations, junit, markdown};
    let mut ok = true;
    // Each writer's own typed error, printed.
    fn check<E: std::fmt::Display>(ok: &mut bool, what: &str, r: Result<(), E>) {
        if let Err(e) = r {
            eprintln!("error: cannot write the {what}: {e}");
            *ok = false;
        }
    }
    if let Some(path) = &config.junit {
        let written = crate::baseline::write_atomically(path, junit::render(results).as_bytes());
        check(&mut ok, "JUnit report", written);
    }
    let summary = (config.markdown.is_some() || config.step_summary.is_some())
        .then(|| markdown::render(results));
    if let (Some(path), Some(text)) = (&config.markdown, &summary) {
        let written = crate::baseline::write_atomically(path, text.as_bytes());
        check(&mut ok, "Markdown summary", written);
    }
    if let (Some(path), Some(text)) = (&config.step_summary, &summary) {
        let appended = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut f| f.write_all(text.as_bytes()))
            .map_err(|e| format!("`{}`: {e}", path.display()));
        check(&mut ok, "GitHub step summary", appended);
    }
    if let Some(path) = &config.html {
        check(&mut ok, "HTML report", crate::html::write(path, results));
    }
    if let Some(path) = &config.history {
        let appended = crate::history::append(path, results);
        check(&mut ok, "run history", appended);
    }
    if config.annotations {
        for line in annotations::render(results) {
            println!("{line}");
        }
    }
    ok
}
