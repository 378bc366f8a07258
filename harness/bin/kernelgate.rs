//! `kernelgate`: the command-line tool; see [`kernelgate::cli`].

fn main() -> std::process::ExitCode {
    kernelgate::cli::main()
}
