import type { ScriptSettings } from '../config/config.ts';
import type { ZipFile } from '../skills/zip-reader.ts';
import type { ScriptCallHandler } from './callback-pipe.ts';
import type { RunnableScript } from './declared-scripts.ts';
import { hydrateBundle } from './hydrate.ts';
import { readOutFiles, type OutFile } from './out-files.ts';
import { checkPostconditions } from './postconditions.ts';
import { resolveNode, resolvePython, type Interpreter, type Runtime } from './runtimes.ts';
import { createSandbox, type SandboxResult } from './sandbox.ts';

/** A script's outcome as the model sees it: a result, or an error it can act on. */
export type ScriptOutcome = { ok: true; result: unknown } | { ok: false; error: string };

/** One run: the version's bundle files, the script, its arguments, the call's abort signal and callback handler. */
export type ScriptRunRequest = { files: ZipFile[]; script: RunnableScript; args: unknown; signal: AbortSignal; onCall: ScriptCallHandler };

/**
 * Runs skill scripts: hydrates the bundle into a private folder, runs the script in the sandbox with `args` as JSON
 * on stdin (and, for a list, as argv), reads JSON on stdout as the result (other text as text) and the files it wrote
 * under /out as the result's `files`, checks the postconditions, removes the folder. A cancelled run throws the signal's reason once its processes are gone.
 */
export function createScriptRunner(settings: ScriptSettings) {
  const sandbox = createSandbox(settings);
  const interpreters = new Map<Runtime, Promise<Interpreter>>();
  const interpreter = (runtime: Runtime) => {
    let found = interpreters.get(runtime);
    if (!found) {
      found = runtime === 'python' ? resolvePython(settings.python) : resolveNode(settings.node ?? process.execPath);
      // A failed look-up is not cached: the interpreter may be installed later.
      found.catch(() => interpreters.delete(runtime));
      interpreters.set(runtime, found);
    }
    return found;
  };

  return {
    async run({ files, script, args, signal, onCall }: ScriptRunRequest): Promise<ScriptOutcome> {
      let found: Interpreter;
      try {
        found = await interpreter(script.runtime);
      } catch (err) {
        return {
          ok: false,
          error: `${script.name} was not run: no ${script.runtime} interpreter (${(err as Error).message.split('\n')[0]})`,
        };
      }
      const hydrated = await hydrateBundle(files);
      let result: SandboxResult;
      let out: OutFile[] | string = [];
      try {
        const argv = Array.isArray(args) ? args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))) : [];
        result = await sandbox.run({
          interpreter: found,
          bundleDir: hydrated.bundleDir,
          outDir: hydrated.outDir,
          scriptPath: script.path,
          argv,
          stdin: JSON.stringify(args ?? {}),
          signal,
          onCall,
        });
        if (result.end === 'exited' && result.code === 0) out = await readOutFiles(hydrated.outDir);
      } finally {
        await hydrated.remove();
      }
      if (result.end === 'cancelled') throw signal.reason;
      if (typeof out === 'string') return { ok: false, error: `${script.name}: ${out}` };
      const outcome = interpret(script, result, settings);
      // The files travel as a tool result's `files` do: the tool activity stores them and keeps their references.
      return outcome.ok && out.length > 0 ? { ok: true, result: { ...(outcome.result as object), files: out } } : outcome;
    },
  };
}

function interpret(script: RunnableScript, result: SandboxResult, settings: ScriptSettings): ScriptOutcome {
  const stderr = 'stderr' in result && result.stderr.trim() !== '' ? `; stderr: ${result.stderr.trim().slice(-2000)}` : '';
  switch (result.end) {
    case 'unavailable':
      return { ok: false, error: `${script.name} was not run: ${result.reason}` };
    case 'timeout':
      return { ok: false, error: `${script.name} timed out after ${settings.timeoutS} s (SCRIPT_TIMEOUT_S) and was killed${stderr}` };
    case 'output_limit':
      return {
        ok: false,
        error: `${script.name} printed more than ${settings.maxOutputBytes / 1024} KiB (SCRIPT_MAX_OUTPUT_KB) and was killed`,
      };
    case 'memory_limit': {
      const limit =
        result.over === 'own'
          ? `its memory limit of ${settings.memoryBytes / 1024 / 1024} MiB (SCRIPT_MEMORY_MB)`
          : `the ${settings.memoryTotalBytes / 1024 / 1024} MiB all running scripts share (SCRIPT_MEMORY_TOTAL_MB)`;
      return { ok: false, error: `${script.name} was killed: it went over ${limit}${stderr}` };
    }
    case 'killed': {
      const why =
        result.signal === 'SIGXCPU'
          ? `it used its ${settings.cpuS} CPU seconds (SCRIPT_CPU_S)`
          : result.signal === 'SIGXFSZ'
            ? `it wrote a file over ${settings.tmpfsBytes / 1024 / 1024} MiB (SCRIPT_TMPFS_MB)`
            : 'a limit of its sandbox was reached or it crashed';
      return { ok: false, error: `${script.name} was killed by ${result.signal}: ${why}${stderr}` };
    }
    case 'cancelled':
    case 'exited':
      break;
  }
  if (result.end !== 'exited' || result.code !== 0) {
    const code = result.end === 'exited' ? result.code : 'none';
    return { ok: false, error: `${script.name} exited with code ${code}${stderr}` };
  }
  const text = result.stdout.trim();
  let output: unknown = text;
  let isJson = false;
  try {
    output = JSON.parse(text);
    isJson = true;
  } catch {
    // Not JSON: the text is the result.
  }
  const base = { script: script.name, output, durationMs: result.durationMs };
  if (script.postconditions.length === 0) return { ok: true, result: base };
  const postconditions = checkPostconditions(script.postconditions, output, isJson);
  const failed = postconditions.filter((c) => c.status === 'failed');
  if (failed.length === 0) return { ok: true, result: { ...base, postconditions } };
  const listing = failed.map((c) => `${c.expression} (${c.reason})`).join('; ');
  return {
    ok: false,
    error: `${script.name} ran but ${failed.length} postcondition(s) failed: ${listing}; all: ${JSON.stringify(postconditions)}; output: ${text.slice(0, 2000)}`,
  };
}
