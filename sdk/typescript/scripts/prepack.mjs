// Run by `npm pack` and `npm publish` (the prepack script): a clean build of
// the package, and the repository's LICENSE beside package.json, so that a
// tarball never ships without its code (issue 24: a pack before a build gave
// a package.json alone) or without its license.
import { execFileSync } from "node:child_process";
import { copyFileSync, rmSync } from "node:fs";

rmSync("dist", { recursive: true, force: true });
execFileSync(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "tsconfig.build.json"], { stdio: "inherit" });
copyFileSync("../../LICENSE", "LICENSE");
