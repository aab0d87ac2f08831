import { readFileSync } from 'node:fs';

/**
 * Where a `--cpu-prof` profile's time went between two instants: busy share, then self time by package (a
 * node_modules package, a node: module, a top folder of this repository, or V8's own entries such as the garbage
 * collector) and by function, and the heaviest inclusive frames.
 * Usage: node bench/profile-summary.ts <file.cpuprofile> [fromUs toUs]  (CLOCK_MONOTONIC µs, as bench/idle-watch.ts
 * prints them; without them, the whole profile).
 */
type Frame = { functionName: string; url: string; lineNumber: number };
type ProfileNode = { id: number; callFrame: Frame; children?: number[] };
type Profile = { nodes: ProfileNode[]; startTime: number; samples: number[]; timeDeltas: number[] };

const [file, fromArg, toArg] = process.argv.slice(2);
if (!file) throw new Error('usage: node bench/profile-summary.ts <file.cpuprofile> [fromUs toUs]');
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const from = fromArg ? Number(fromArg) : -Infinity;
const to = toArg ? Number(toArg) : Infinity;

const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const repo = new URL('..', import.meta.url).href;
const where = (f: Frame) => f.url.replace(repo, '');
const label = (f: Frame) => `${f.functionName || '(anonymous)'} ${where(f)}:${f.lineNumber + 1}`;
function packageOf(f: Frame): string {
  if (!f.url) return f.functionName;
  const m = /node_modules\/((@[^/]+\/)?[^/]+)/.exec(f.url);
  if (m) return m[1]!;
  return f.url.startsWith('node:') ? f.url : where(f).split('/')[0]!;
}

const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
const bySelf = new Map<string, number>();
const byPackage = new Map<string, number>();
const inclusive = new Map<string, number>();
let total = 0;
let busy = 0;
let t = profile.startTime;
for (let i = 0; i < profile.samples.length; i++) {
  t += profile.timeDeltas[i]!;
  if (t < from || t > to) continue;
  const ms = (profile.timeDeltas[i + 1] ?? 0) / 1000;
  total += ms;
  const node = nodes.get(profile.samples[i]!)!;
  if (node.callFrame.functionName === '(idle)') continue;
  busy += ms;
  add(bySelf, label(node.callFrame), ms);
  add(byPackage, packageOf(node.callFrame), ms);
  const seen = new Set<string>();
  for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
    const l = label(nodes.get(id)!.callFrame);
    if (seen.has(l)) continue;
    seen.add(l);
    add(inclusive, l, ms);
  }
}

const top = (m: Map<string, number>, n: number) =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, ms]) => `${ms.toFixed(0).padStart(7)} ms ${((ms / busy) * 100).toFixed(1).padStart(5)}%  ${k}`)
    .join('\n');
console.log(`${(total / 1000).toFixed(1)} s sampled, ${(busy / 1000).toFixed(2)} s busy (${((busy / total) * 100).toFixed(1)}% of a core)`);
console.log(`\nself time by package\n${top(byPackage, 20)}`);
console.log(`\nself time by function\n${top(bySelf, 25)}`);
console.log(`\ninclusive\n${top(inclusive, 40)}`);
