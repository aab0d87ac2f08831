import type { ScriptSettings } from '../config/config.ts';
import { scriptCgroups } from './memory-cgroup.ts';
import { seccompWarning } from './seccomp.ts';

/** What the sandbox can enforce on this host, as the worker says it at start: a level and a sentence each. */
export async function sandboxNotices(settings: ScriptSettings, arch: string = process.arch) {
  const notices: Array<{ level: 'info' | 'warn'; message: string }> = [];
  const seccomp = seccompWarning(arch);
  if (seccomp)
    notices.push({
      level: 'warn',
      message: settings.requireSeccomp
        ? `${seccomp}; SCRIPT_REQUIRE_SECCOMP=true, so run_skill_script refuses every script on this worker`
        : `${seccomp} (SCRIPT_REQUIRE_SECCOMP=true refuses scripts here instead)`,
    });
  const cgroups = await scriptCgroups(settings.memoryTotalBytes);
  const mib = (bytes: number) => `${bytes / 1024 / 1024} MiB`;
  notices.push(
    typeof cgroups === 'string'
      ? {
          level: 'warn',
          message: `${cgroups}: SCRIPT_MEMORY_MB limits each script's address space (${mib(settings.memoryBytes)}; Node needs about 1.5 GiB of it to start), not its resident memory, and SCRIPT_MEMORY_TOTAL_MB is not enforced`,
        }
      : {
          level: 'info',
          message: `scripts run in memory cgroups (v${cgroups.version}) under ${cgroups.parent}: ${mib(settings.memoryBytes)} resident each, ${mib(settings.memoryTotalBytes)} for all together, no swap`,
        },
  );
  return notices;
}
