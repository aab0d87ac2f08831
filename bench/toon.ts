import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { encode } from '@toon-format/toon';
import { countTokens } from 'gpt-tokenizer';
import { toolResultForModel } from '../embeds/model-form.ts';

// What tool results cost the model, in tokens (o200k), over realistic fixture results (bench/fixtures/toon/): pretty
// JSON, compact JSON, TOON alone, and what Cadenza sends (the cheaper of TOON and compact JSON per result). No
// services needed. `npm run bench:toon`.
const dir = fileURLToPath(new URL('./fixtures/toon', import.meta.url));
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.json'))
  .sort();
const rows = files.map((file) => {
  const value: unknown = JSON.parse(readFileSync(join(dir, file), 'utf8'));
  const sent = toolResultForModel(value);
  return {
    name: basename(file, '.json'),
    uniform: isUniform(value),
    pretty: countTokens(JSON.stringify(value, null, 2)),
    compact: countTokens(JSON.stringify(value)),
    toon: countTokens(encode(value)),
    sent: countTokens(sent.text),
    format: sent.format,
  };
});

const pct = (a: number, b: number) => `${(((a - b) / b) * 100).toFixed(1).padStart(6)}%`;
console.log(`${'fixture'.padEnd(26)} shape      pretty  compact     toon     sent  format  sent vs compact`);
for (const r of rows) {
  console.log(
    `${r.name.padEnd(26)} ${(r.uniform ? 'uniform' : 'irregular').padEnd(9)} ${[r.pretty, r.compact, r.toon, r.sent].map((n) => String(n).padStart(8)).join(' ')}  ${r.format.padEnd(6)}  ${pct(r.sent, r.compact)}`,
  );
}
const sum = (k: 'pretty' | 'compact' | 'toon' | 'sent', only?: boolean) =>
  rows.filter((r) => only === undefined || r.uniform === only).reduce((s, r) => s + r[k], 0);
const irregular = rows.filter((r) => !r.uniform).length;
console.log(`\n${rows.length} results (${rows.length - irregular} uniform, ${irregular} irregular or nested)`);
for (const [label, only] of [
  ['all', undefined],
  ['uniform', true],
  ['irregular', false],
] as const) {
  console.log(
    `${label.padEnd(10)} pretty ${sum('pretty', only)}  compact ${sum('compact', only)}  toon ${sum('toon', only)} (${pct(sum('toon', only), sum('compact', only)).trim()})  sent ${sum('sent', only)} (${pct(sum('sent', only), sum('compact', only)).trim()} vs compact JSON)`,
  );
}
const worst = rows.reduce((w, r) => (r.sent - r.compact > w.sent - w.compact ? r : w));
console.log(
  `goal: sent ≥15% below compact JSON overall: ${sum('sent') <= sum('compact') * 0.85 ? 'met' : 'NOT met'}; ` +
    `never above compact JSON on one result: ${worst.sent <= worst.compact ? 'met' : `NOT met (${worst.name})`}`,
);

/** A result whose bulk is one list of objects sharing their keys: the shape TOON tabulates. */
function isUniform(value: unknown): boolean {
  const lists: unknown[][] = [];
  const visit = (v: unknown) => {
    if (Array.isArray(v)) lists.push(v);
    else if (typeof v === 'object' && v !== null) Object.values(v).forEach(visit);
  };
  visit(value);
  const biggest = lists.sort((a, b) => JSON.stringify(b).length - JSON.stringify(a).length)[0];
  if (!biggest || biggest.length < 3 || JSON.stringify(biggest).length < JSON.stringify(value).length / 2) return false;
  const keys = (o: unknown) =>
    typeof o === 'object' && o !== null && !Array.isArray(o) && Object.values(o).every((x) => typeof x !== 'object' || x === null)
      ? Object.keys(o).sort().join(',')
      : undefined;
  const first = keys(biggest[0]);
  return first !== undefined && biggest.every((o) => keys(o) === first);
}
