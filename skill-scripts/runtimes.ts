import { execFile } from 'node:child_process';
import { realpath } from 'node:fs/promises';
import { dirname, extname } from 'node:path';
import { promisify } from 'node:util';
import type { SkillScript } from '../contracts/skill-spec.ts';

const run = promisify(execFile);

/** The languages a skill script may be written in (declared in contracts/skill-spec.ts). */
export type Runtime = NonNullable<SkillScript['runtime']>;

const BY_EXTENSION: Record<string, Runtime> = { '.py': 'python', '.js': 'node', '.mjs': 'node', '.cjs': 'node' };

/** A script's runtime: the declared one, else the one its file extension names; undefined when neither says. */
export function runtimeOf(path: string, declared?: Runtime): Runtime | undefined {
  return declared ?? BY_EXTENSION[extname(path).toLowerCase()];
}

/** An interpreter as the sandbox needs it: its real path, the command-line flags, the directories to bind read-only. */
export type Interpreter = { path: string; flags: string[]; binds: string[] };

/**
 * The Python 3 behind a command (a pyenv shim resolves to the interpreter it runs), with the folders the sandbox
 * binds read-only: its installation prefix, a virtual environment's (whose packages then import), and the folder of
 * the executable's target. `-E -s -B`: no PYTHON* variables, no user site, no bytecode written.
 */
export async function resolvePython(command: string): Promise<Interpreter> {
  const probe = 'import json, sys; print(json.dumps([sys.executable, sys.base_prefix, sys.prefix, sys.version_info[0]]))';
  const { stdout } = await run(command, ['-c', probe], { timeout: 10_000 });
  const [executable, basePrefix, prefix, major] = JSON.parse(stdout) as [string, string, string, number];
  if (major !== 3) throw new Error(`${command} is Python ${major}, not Python 3`);
  // The executable keeps its own path (a virtual environment is recognised by it); its target's folder is bound too.
  const target = await realpath(executable);
  const binds = await Promise.all([basePrefix, prefix, dirname(executable)].map((p) => realpath(p)));
  return { path: executable, flags: ['-E', '-s', '-B'], binds: [...binds, dirname(target)] };
}

/** A Node binary and its installation folder (`<prefix>/bin/node` binds `<prefix>`). */
export async function resolveNode(binary: string): Promise<Interpreter> {
  const path = await realpath(binary);
  return { path, flags: [], binds: [dirname(dirname(path))] };
}
