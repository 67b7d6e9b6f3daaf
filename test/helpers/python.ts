// Runs a Python script for the fidelity tests that read written files back with another program
// (odfpy, openpyxl): `pythonJson(script, [path])` -> what the script printed as JSON, from the
// first of `python3` on PATH and Debian's /usr/bin/python3 that runs it (a pyenv python3 may come
// first on PATH without the modules); null when neither does, and the caller skips, saying why.
import { execFileSync } from 'node:child_process';

export function pythonJson(script: string, args: readonly string[]): unknown {
  for (const python of ['python3', '/usr/bin/python3']) {
    try {
      return JSON.parse(execFileSync(python, ['-c', script, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
    } catch {
      // try the next interpreter
    }
  }
  return null;
}
