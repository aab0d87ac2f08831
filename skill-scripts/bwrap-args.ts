import { dirname } from 'node:path';
import type { ScriptSettings } from '../config/config.ts';
import type { Interpreter } from './runtimes.ts';

/** Where the hydrated bundle appears inside the sandbox (read-only, and the script's working directory). */
export const SANDBOX_BUNDLE_DIR = '/skill';
/** Where a script writes the files it returns: a writable folder the run's caller reads when it ends. */
export const SANDBOX_OUT_DIR = '/out';
/** The inherited descriptor of the callback pipe, inside the sandbox. */
export const CALLBACK_FD = 3;
/** The descriptor bubblewrap reads the seccomp filter from (outside only). */
export const SECCOMP_FD = 4;

/** How the host's top-level system folders look: merged-/usr symlinks (`/lib -> usr/lib`) or real folders. */
export type HostLayout = { links: Array<{ path: string; target: string }>; dirs: string[] };

/** One sandboxed run's command line, before it is spawned. */
export type SandboxPlan = {
  layout: HostLayout;
  interpreter: Interpreter;
  bundleDir: string;
  /** The host folder bound writable at /out. */
  outDir: string;
  scriptPath: string;
  argv: string[];
  limits: Pick<ScriptSettings, 'cpuS' | 'maxProcesses' | 'maxOpenFiles' | 'tmpfsBytes'>;
  /** RLIMIT_AS, only where no memory cgroup holds the run (see memory-cgroup.ts). */
  addressSpaceBytes: number | undefined;
  /**
   * As root, the sandbox gets no user namespace (under uid 0 the kernel never enforces RLIMIT_NPROC) and drops to
   * this unprivileged uid instead; otherwise bubblewrap maps the caller into a user namespace of its own.
   */
  dropToUid: number | undefined;
  /** Whether a seccomp filter comes on SECCOMP_FD (see seccomp.ts). */
  seccomp: boolean;
};

/**
 * The bubblewrap arguments of one run: new PID, network, IPC, UTS and cgroup namespaces, dies with its parent,
 * `/usr` and the interpreter's folders read-only, the bundle read-only at /skill, the run's out folder writable at
 * /out, a private size-capped /tmp, a read-only root, an empty environment; then the resource limits (prlimit) and
 * the interpreter. Resident memory is the run's cgroup's to limit, outside bubblewrap.
 */
export function bwrapArgs(plan: SandboxPlan): string[] {
  const { layout, interpreter, limits } = plan;
  const args = ['--die-with-parent', '--new-session'];
  args.push(...(plan.dropToUid === undefined ? ['--unshare-user', '--disable-userns', '--cap-drop', 'ALL'] : []));
  args.push('--unshare-pid', '--unshare-net', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try');
  args.push('--ro-bind', '/usr', '/usr');
  for (const link of layout.links) args.push('--symlink', link.target, link.path);
  for (const dir of layout.dirs) args.push('--ro-bind', dir, dir);
  args.push('--proc', '/proc', '--dev', '/dev');
  args.push('--perms', '1777', '--size', String(limits.tmpfsBytes), '--tmpfs', '/tmp');
  // After /tmp, so that an interpreter installed under /tmp is bound over the private tmpfs, not hidden by it.
  const binds = [...new Set(interpreter.binds)].filter((dir) => !isUnder(dir, '/usr') && !layout.dirs.some((d) => isUnder(dir, d)));
  // bubblewrap creates missing parents as 0700 root, which an unprivileged uid could not traverse.
  for (const dir of [...new Set(binds.flatMap(ancestors))].sort()) args.push('--perms', '0755', '--dir', dir);
  for (const dir of binds) args.push('--ro-bind', dir, dir);
  args.push('--ro-bind', plan.bundleDir, SANDBOX_BUNDLE_DIR, '--bind', plan.outDir, SANDBOX_OUT_DIR);
  args.push('--remount-ro', '/', '--chdir', SANDBOX_BUNDLE_DIR);
  args.push('--clearenv', '--setenv', 'PATH', '/usr/local/bin:/usr/bin:/bin', '--setenv', 'HOME', '/tmp');
  args.push('--setenv', 'TMPDIR', '/tmp', '--setenv', 'LANG', 'C.UTF-8', '--setenv', 'CADENZA_TOOL_FD', String(CALLBACK_FD));
  args.push(...(plan.seccomp ? ['--add-seccomp-fd', String(SECCOMP_FD)] : []), '--');
  if (plan.dropToUid !== undefined) {
    const id = String(plan.dropToUid);
    args.push('setpriv', `--reuid=${id}`, `--regid=${id}`, '--clear-groups', '--inh-caps=-all', '--bounding-set=-all', '--no-new-privs');
  }
  // The hard CPU limit one second past the soft one: SIGXCPU at the soft limit tells a CPU kill from others.
  args.push(
    'prlimit',
    `--cpu=${limits.cpuS}:${limits.cpuS + 1}`,
    ...(plan.addressSpaceBytes === undefined ? [] : [`--as=${plan.addressSpaceBytes}`]),
    `--nproc=${limits.maxProcesses}`,
    `--nofile=${limits.maxOpenFiles}`,
    `--fsize=${limits.tmpfsBytes}`,
    '--core=0',
    '--',
  );
  args.push(interpreter.path, ...interpreter.flags, `${SANDBOX_BUNDLE_DIR}/${plan.scriptPath}`, ...plan.argv);
  return args;
}

const isUnder = (path: string, dir: string) => path === dir || path.startsWith(`${dir}/`);

/** `/a/b/c` → `/a`, `/a/b`. */
function ancestors(path: string): string[] {
  const out: string[] = [];
  for (let dir = dirname(path); dir !== '/'; dir = dirname(dir)) out.unshift(dir);
  return out;
}
