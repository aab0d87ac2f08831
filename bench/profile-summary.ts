import { readFileSync } from 'node:fs';

/**
 * Where a `--cpu-prof` profile's time went between two instants: busy share, then self time by package (a
 * node_modules package, a node: module, a top folder of this repository, or V8's own entries such as the garbage
 * collector) and by function, and the heaviest inclusive frames.
 * Usage: node bench/profile-summary.ts <file.cpuprofile> [fromUs toUs]  (CLOCK_MONOTONIC µs, as bench/idle-watch.ts
 * prints them; without them, the whole profile). `summarise` gives the same figures to a bench.
 */
type Frame = { functionName: string; url: string; lineNumber: number };
type ProfileNode = { id: number; callFrame: Frame; children?: number[] };
export type Profile = { nodes: ProfileNode[]; startTime: number; samples: number[]; timeDeltas: number[] };

/**
 * The parts of a Cadenza process a sample is charged to: the nearest frame on its stack (from the leaf up) whose
 * script matches, so a socket write under pg is Postgres and a JSON.parse under the model client is the model call.
 * Checked in this order at each frame.
 */
const PARTS: Array<[string, RegExp]> = [
  ['bench and fakes', /\/(bench|fake-model|testkit)\//],
  ['memory embeddings (sentence encoder)', /onnxruntime|@huggingface|\/memory\//],
  ['tokens and result forms', /gpt-tokenizer|@toon-format|\/embeds\/model-form/],
  ['Postgres (kysely, pg, db/)', /node_modules\/(kysely|pg|pg-protocol|pg-pool|pg-types)\/|\/db\//],
  ['model and tool HTTP (SDK, undici, executors)', /@anthropic-ai|openai|undici|\/model\/|\/tools\//],
  ['Temporal worker (SDK, core bridge)', /@temporalio|rxjs|protobufjs|@grpc/],
  ['HTTP API (Express, routes)', /node_modules\/(express|router|body-parser|raw-body|etag|send|finalhandler)\/|\/server\/|\/missions\//],
  ['Cadenza activities, events, notify', /\/(activities|events|notify|contracts|lib|embeds|admission|telemetry)\//],
];

/** Milliseconds sampled and busy, and busy milliseconds by package, by function (self) and by frame (inclusive). */
export type ProfileSummary = {
  totalMs: number;
  busyMs: number;
  /** Self time by the part of Cadenza its stack is in (PARTS; GC and V8's own entries apart, the rest `other`). */
  byPart: Map<string, number>;
  byPackage: Map<string, number>;
  bySelf: Map<string, number>;
  inclusive: Map<string, number>;
};

const repo = new URL('..', import.meta.url).href;
const where = (f: Frame) => f.url.replace(repo, '');
const label = (f: Frame) => `${f.functionName || '(anonymous)'} ${where(f)}:${f.lineNumber + 1}`;
function packageOf(f: Frame): string {
  if (!f.url) return f.functionName;
  const m = /node_modules\/((@[^/]+\/)?[^/]+)/.exec(f.url);
  if (m) return m[1]!;
  return f.url.startsWith('node:') ? f.url : where(f).split('/')[0]!;
}

export function summarise(profile: Profile, from = -Infinity, to = Infinity): ProfileSummary {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
  const out: ProfileSummary = { totalMs: 0, busyMs: 0, byPart: new Map(), byPackage: new Map(), bySelf: new Map(), inclusive: new Map() };
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i]!;
    if (t < from || t > to) continue;
    const ms = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    out.totalMs += ms;
    const node = nodes.get(profile.samples[i]!)!;
    if (node.callFrame.functionName === '(idle)') continue;
    out.busyMs += ms;
    add(out.bySelf, label(node.callFrame), ms);
    add(out.byPackage, packageOf(node.callFrame), ms);
    let part: string | undefined = node.callFrame.url ? undefined : `V8: ${node.callFrame.functionName}`;
    for (let id: number | undefined = node.id; part === undefined && id !== undefined; id = parent.get(id))
      part = PARTS.find(([, re]) => re.test(nodes.get(id!)!.callFrame.url))?.[0];
    if (part?.startsWith('V8: ') && !/garbage|program/.test(part)) part = undefined;
    if (part === undefined)
      for (let id = parent.get(node.id); part === undefined && id !== undefined; id = parent.get(id))
        part = PARTS.find(([, re]) => re.test(nodes.get(id!)!.callFrame.url))?.[0];
    add(out.byPart, part ?? 'other', ms);
    const seen = new Set<string>();
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const l = label(nodes.get(id)!.callFrame);
      if (seen.has(l)) continue;
      seen.add(l);
      add(out.inclusive, l, ms);
    }
  }
  return out;
}

/** The `n` largest entries, largest first. */
export const top = (m: Map<string, number>, n: number): Array<[string, number]> => [...m].sort((a, b) => b[1] - a[1]).slice(0, n);

if (import.meta.main) {
  const [file, fromArg, toArg] = process.argv.slice(2);
  if (!file) throw new Error('usage: node bench/profile-summary.ts <file.cpuprofile> [fromUs toUs]');
  const s = summarise(
    JSON.parse(readFileSync(file, 'utf8')) as Profile,
    fromArg ? Number(fromArg) : -Infinity,
    toArg ? Number(toArg) : Infinity,
  );
  const list = (m: Map<string, number>, n: number) =>
    top(m, n)
      .map(([k, ms]) => `${ms.toFixed(0).padStart(7)} ms ${((ms / s.busyMs) * 100).toFixed(1).padStart(5)}%  ${k}`)
      .join('\n');
  console.log(
    `${(s.totalMs / 1000).toFixed(1)} s sampled, ${(s.busyMs / 1000).toFixed(2)} s busy (${((s.busyMs / s.totalMs) * 100).toFixed(1)}% of a core)`,
  );
  console.log(`\nself time by part\n${list(s.byPart, 20)}`);
  console.log(`\nself time by package\n${list(s.byPackage, 20)}`);
  console.log(`\nself time by function\n${list(s.bySelf, 25)}`);
  console.log(`\ninclusive\n${list(s.inclusive, 40)}`);
}
