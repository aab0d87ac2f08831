import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { threadCpuSeconds } from './cpu.ts';
import { summarise, top, type Profile } from './profile-summary.ts';
import { fmtMs, log } from './stats.ts';

/** A profiled pass as a `why` row: what it is, and the figures. */
export type PassProfile = { label: string; value: string };

/** CLOCK_MONOTONIC in µs: the clock of a profile's timestamps (V8's, `--cpu-prof`'s), so a window can be cut out of it. */
export const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);

/**
 * V8's sampling profiler on this process's main thread (the same profiler as `--cpu-prof`, sampling every 500 µs)
 * from now until `stop()`, which writes `<dir>/<name>.cpuprofile` (`node bench/profile-summary.ts` reads it) and
 * returns the profile.
 */
export async function profileThisProcess(dir: string, name: string): Promise<{ stop(): Promise<Profile> }> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 500 });
  await session.post('Profiler.start');
  return {
    async stop() {
      const { profile } = await session.post('Profiler.stop');
      session.disconnect();
      mkdirSync(dir, { recursive: true });
      const file = join(dir, `${name}.cpuprofile`);
      writeFileSync(file, JSON.stringify(profile));
      log('profile', `${name}: ${file}`);
      return profile as unknown as Profile;
    },
  };
}

/**
 * A main thread's samples between two instants (monotonic µs; the whole profile without them), per `per` units, by
 * part of the process (profile-summary.ts's PARTS: each sample charged to the nearest frame of its stack that belongs
 * to one). The profiler samples on the wall clock: a thread that is not idle but waits for a core counts, so on a
 * loaded machine the samples add up to more than the thread's CPU; the shares still say where it was.
 */
export function describeProfile(profile: Profile, per: number, from?: number, to?: number): string {
  const s = summarise(profile, from, to);
  const parts = top(s.byPart, 9)
    .map(([p, ms]) => `${p} ${fmtMs(ms / per)} (${Math.round((ms / s.busyMs) * 100)}%)`)
    .join(' · ');
  return `main thread not idle ${fmtMs(s.busyMs / per)} (wall clock): ${parts}`;
}

/**
 * `shape.runs` runs of `runOnce` (one after another, or all at once with `together`) with the profiler on this
 * process's main thread, written to `<dir>/<name>.cpuprofile`, and the CPU of every thread of this process over them
 * by thread name: main-thread JavaScript per unit by part, and what ran on other threads (the workflow threads,
 * Temporal's core, the GC's helpers).
 */
export async function profiled(
  dir: string,
  name: string,
  shape: { runs: number; per: number; unit: string },
  runOnce: (i: number) => Promise<unknown>,
  together = false,
): Promise<PassProfile> {
  const threadsBefore = threadCpuSeconds(process.pid);
  const profiler = await profileThisProcess(dir, name);
  if (together) await Promise.all(Array.from({ length: shape.runs }, (_, i) => runOnce(i)));
  else for (let i = 0; i < shape.runs; i++) await runOnce(i);
  const profile = await profiler.stop();
  const threadsAfter = threadCpuSeconds(process.pid);
  const threads = [...threadsAfter]
    .map(([t, sec]) => [t, ((sec - (threadsBefore.get(t) ?? 0)) * 1000) / shape.per] as const)
    .filter(([, ms]) => ms >= 0.5)
    .sort((a, b) => b[1] - a[1])
    .map(([t, ms]) => `${t} ${fmtMs(ms)}`)
    .join(' · ');
  return {
    label: `CPU per ${shape.unit} by thread; the main thread's samples per ${shape.unit} by part (${join(dir, `${name}.cpuprofile`)})`,
    value: `${threads}; ${describeProfile(profile, shape.per)}`,
  };
}
