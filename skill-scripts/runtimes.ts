import { execFile } from 'node:child_process';
import { realpath } from 'node:fs/promises';
import { dirname, extname } from 'node:path';
import { promisify } from 'node:util';
import type { SkillScript } from '../skills/skill-schema.ts';

const run = promisify(execFile);

/** The languages a skill script may be written in (declared in skills/skill-schema.ts). */
export type Runtime = NonNullable<SkillScript['runtime']>;

const BY_EXTENSION: Record<string, Runtime> = { '.py': 'python', '.js': 'node', '.mjs': 'node', '.cjs': 'node' };

/** A script's runtime: the declared one, else the one its file extension names; undefined when neither says. */
export function runtimeOf(path: string, declared?: Runtime): Runtime | undefined {
  return declared ?? BY_EXTENSION[extname(path).toLowerCase()];
}

/** An interpreter as the sandbox needs it: its real path, the command-line flags, the directories to bind read-only. */
export type Interpreter = { path: string; flags: string[]; binds: string[] };

/**
 * The real Python 3 behind a command (a pyenv shim resolves to the interpreter it runs): its executable and its
 * installation prefix, which the sandbox binds read-only. `-E -s -B`: no PYTHON* variables, no user site, no
 * bytecode written.
 */
export async function resolvePython(command: string): Promise<Interpreter> {
  const probe = 'import json, sys; print(json.dumps([sys.executable, sys.base_prefix, sys.version_info[0]]))';
  const { stdout } = await run(command, ['-c', probe], { timeout: 10_000 });
  const [executable, prefix, major] = JSON.parse(stdout) as [string, string, number];
  if (major !== 3) throw new Error(`${command} is Python ${major}, not Python 3`);
  const path = await realpath(executable);
  return { path, flags: ['-E', '-s', '-B'], binds: [await realpath(prefix), dirname(path)] };
}

/** A Node binary and its installation folder (`<prefix>/bin/node` binds `<prefix>`). */
export async function resolveNode(binary: string): Promise<Interpreter> {
  const path = await realpath(binary);
  return { path, flags: [], binds: [dirname(dirname(path))] };
}
