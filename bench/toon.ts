import { encode } from '@toon-format/toon';
import { countTokens } from 'gpt-tokenizer';
import { TOOL_RESULT_MAX_TOKENS } from '../contracts/embeds.ts';
import { toolResultForModel } from '../embeds/model-form.ts';
import { loadToonFixtures } from '../testkit/toon-fixtures.ts';

// What tool results cost the model, in tokens (o200k): compact JSON, TOON alone, and what Cadenza sends (the cheaper
// of the two per result; measured without the 8,000-token budget so a cut does not pass for a saving, and a result
// over it is marked). Two sets, reported apart: published example responses of
// public APIs (real shapes, by class) and the older hand-written results (synthetic). No services needed.
// `npm run bench:toon`.
const rows = loadToonFixtures().map((f) => {
  const sent = toolResultForModel(f.value, Number.MAX_SAFE_INTEGER);
  const compact = countTokens(JSON.stringify(f.value));
  return {
    ...f,
    compact,
    toon: countTokens(encode(f.value)),
    sent: countTokens(sent.text),
    format: compact > TOOL_RESULT_MAX_TOKENS ? `${sent.format}*` : sent.format,
  };
});
type Row = (typeof rows)[number];

const pct = (a: number, b: number) => `${a - b > 0 ? '+' : ''}${(((a - b) / b) * 100).toFixed(1)}%`;
const num = (n: number) => String(n).padStart(8);
const total = (rs: Row[], k: 'compact' | 'toon' | 'sent') => rs.reduce((s, r) => s + r[k], 0);

for (const set of ['real', 'synthetic'] as const) {
  const of = rows.filter((r) => r.set === set);
  console.log(
    `\n== ${set === 'real' ? 'real shapes: published API example responses (bench/fixtures/api-responses/)' : 'synthetic: hand-written results (bench/fixtures/toon/)'}`,
  );
  console.log(`${'fixture'.padEnd(36)} ${'class'.padEnd(14)}  compact     toon     sent  format     sent vs compact`);
  for (const r of of)
    console.log(
      `${r.name.padEnd(36)} ${r.class.padEnd(14)} ${[r.compact, r.toon, r.sent].map(num).join(' ')}  ${r.format.padEnd(10)} ${pct(r.sent, r.compact).padStart(7)}`,
    );
  console.log(`\n| class | fixtures | compact JSON | TOON | Cadenza sends |\n|---|---|---|---|---|`);
  const classes = [...new Set(of.map((r) => r.class))].sort();
  for (const cls of [...classes, 'all']) {
    const rs = cls === 'all' ? of : of.filter((r) => r.class === cls);
    const [c, t, s] = [total(rs, 'compact'), total(rs, 'toon'), total(rs, 'sent')];
    console.log(`| ${cls} | ${rs.length} | ${c} | ${t} (${pct(t, c)}) | ${s} (${pct(s, c)}) |`);
  }
}
console.log(`\n* over the ${TOOL_RESULT_MAX_TOKENS}-token budget: the model is sent it cut (measured here whole)`);
const over = rows.filter((r) => r.sent > r.compact);
console.log(`\nnever above compact JSON on one result: ${over.length ? `NOT met (${over.map((r) => r.name).join(', ')})` : 'met'}`);
