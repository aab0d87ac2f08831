import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../../cli/cadenza.ts', import.meta.url));

/**
 * The environment of a CLI run against a test stack with `key`: no admin key, and an empty config home of the test's
 * own, so no config file of the machine is read.
 */
export function cliEnv(url: string, key: string): Record<string, string> {
  const configHome = mkdtempSync(join(tmpdir(), 'cadenza-cli-config-'));
  return { CADENZA_URL: url, CADENZA_API_KEY: key, CADENZA_ADMIN_KEY: '', XDG_CONFIG_HOME: configHome };
}

/** A run of the real `cadenza` binary: its exit status and everything it printed. */
export type CliRun = { code: number | null; stdout: string; stderr: string };

/** Runs `cadenza <args>` to its end, without a terminal (as a script would); `input` is piped to its stdin. */
export function runCli(args: string[], env: Record<string, string>, cwd?: string, input?: string): Promise<CliRun> {
  return new Promise((ok, fail) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { ...process.env, ...env },
      stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      ...(cwd ? { cwd } : {}),
    });
    if (input !== undefined) child.stdin!.end(input);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', fail);
    child.on('close', (code) => ok({ code, stdout, stderr }));
  });
}

const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/**
 * Runs `cadenza <args>` under a pseudo-terminal (util-linux `script`), as a person at a terminal would: `output()` is
 * what the terminal showed so far, `type()` sends keys, `done` settles with the exit status.
 */
export function runCliInTerminal(args: string[], env: Record<string, string>) {
  // `exec`: script runs the command through $SHELL -c, and a shell that stays as the parent (dash, the /bin/sh script
  // uses when SHELL is unset, as under CI) dies of the Ctrl-C the CLI handles, turning its exit status into 130.
  const command = `exec ${[process.execPath, CLI, ...args].map(quote).join(' ')}`;
  // -e: script exits with the child's status; -f: flush every write; -q: no banner. The log file is thrown away.
  const child: ChildProcess = spawn('script', ['-qefc', command, '/dev/null'], {
    env: { ...process.env, ...env, TERM: 'xterm', COLUMNS: '120', LINES: '40' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const done = new Promise<number | null>((ok, fail) => {
    child.on('error', fail);
    child.on('close', (code) => ok(code));
  });
  return {
    output: () => output,
    type: (keys: string) => child.stdin!.write(keys),
    done,
    kill: () => child.kill('SIGKILL'),
  };
}
