import { spawn } from 'node:child_process';
import { loadConfig } from '../config/config.ts';
import { createScriptRunner, type ScriptRunRequest } from '../skill-scripts/run-script.ts';
import { resolveNode, resolvePython } from '../skill-scripts/runtimes.ts';
import { fmtMs, formatTable, log, median, percentile, type Row } from './stats.ts';

// Start-up cost of one sandboxed script run: a script that prints `{}`, run through the whole runner (hydrate the
// bundle, bubblewrap, prlimit, interpreter, parse, clean up), against the same interpreter spawned bare. Median of
// 20 after 2 warm-ups, one run at a time. `bash scripts/run.sh node bench/script-startup.ts`.
const BENCH = 'script-startup';
const SAMPLES = 20;
const settings = loadConfig(process.env).scripts;
const runner = createScriptRunner(settings);
const programs = { python: 'print("{}")\n', node: 'console.log("{}")\n' } as const;

async function sandboxed(runtime: 'python' | 'node'): Promise<number> {
  const path = runtime === 'python' ? 'scripts/noop.py' : 'scripts/noop.mjs';
  const request: ScriptRunRequest = {
    files: [{ path, data: Buffer.from(programs[runtime]) }],
    script: { name: 'noop', path, runtime, postconditions: [] },
    args: {},
    signal: new AbortController().signal,
    onCall: async () => ({ ok: false, error: 'none' }),
  };
  const started = performance.now();
  const outcome = await runner.run(request);
  if (!outcome.ok) throw new Error(`the sandboxed run failed: ${outcome.error}`);
  return performance.now() - started;
}

async function bare(runtime: 'python' | 'node'): Promise<number> {
  const interpreter = runtime === 'python' ? await resolvePython(settings.python) : await resolveNode(settings.node ?? process.execPath);
  const started = performance.now();
  await new Promise<void>((resolve, reject) => {
    const child = spawn(interpreter.path, [...interpreter.flags, runtime === 'python' ? '-c' : '-e', programs[runtime]], {
      stdio: 'ignore',
    });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`exit ${code}`))));
  });
  return performance.now() - started;
}

/** Sandboxed and bare runs alternate, so a change in the machine's load touches both alike. */
async function measure(runtime: 'python' | 'node'): Promise<{ inSandbox: number[]; alone: number[] }> {
  for (let i = 0; i < 2; i++) {
    await sandboxed(runtime);
    await bare(runtime);
  }
  const inSandbox: number[] = [];
  const alone: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    inSandbox.push(await sandboxed(runtime));
    alone.push(await bare(runtime));
  }
  return { inSandbox, alone };
}

const rows: Row[] = [];
for (const runtime of ['python', 'node'] as const) {
  log(BENCH, `${runtime}: ${SAMPLES} sandboxed runs alternating with ${SAMPLES} bare ones`);
  const { inSandbox, alone } = await measure(runtime);
  const stat = (s: number[]) => `median ${fmtMs(median(s))} · p90 ${fmtMs(percentile(s, 90))}`;
  rows.push({ bench: BENCH, figure: `${runtime}: one sandboxed run (runner, ${SAMPLES} samples)`, value: stat(inSandbox) });
  rows.push({ bench: BENCH, figure: `${runtime}: the interpreter spawned bare`, value: stat(alone) });
  rows.push({ bench: BENCH, figure: `${runtime}: sandbox overhead (median difference)`, value: fmtMs(median(inSandbox) - median(alone)) });
}
console.log(formatTable(rows));
