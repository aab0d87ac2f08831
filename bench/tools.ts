import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../config/config.ts';
import { createDatabase } from '../db/database.ts';
import { migrateToLatest } from '../db/migrator.ts';
import { TOOL_RANK_WEIGHT } from '../tools/tool-ranking.ts';
import { evaluatePreselection, loadPreselectionSet, measureMatches, type PreselectionFigures } from '../testkit/tools-eval.ts';

// Tool preselection on the labelled set (test/fixtures/tool-preselection): how often the tool an objective needs is
// kept when only the top MAX_TOOLS_PER_MISSION (and fewer) are offered. The rank weight is chosen on the `tune` half
// and reported on both; PGlite in a temporary folder, no server. `npm run bench:tools`.
const config = loadConfig(process.env);
const limits = [...new Set([1, 3, 5, 10, config.maxToolsPerMission])].sort((a, b) => a - b);
const dir = mkdtempSync(join(tmpdir(), 'cadenza-tools-bench-'));
const { db } = await createDatabase({ dataDir: dir });
try {
  await migrateToLatest(db);
  const set = await loadPreselectionSet();
  const tune = set.objectives.filter((o) => o.split === 'tune');
  const heldOut = set.objectives.filter((o) => o.split === 'held_out');
  const tuneMatches = await measureMatches(db, set.texts, tune);
  const heldMatches = await measureMatches(db, set.texts, heldOut);
  const line = (label: string, f: PreselectionFigures) =>
    `${label.padEnd(22)} n=${String(f.n).padStart(2)}  ` +
    limits.map((k) => `kept@${k} ${f.keptAt[k]!.toFixed(3)}`).join('  ') +
    `  MRR ${f.mrr.toFixed(3)}`;

  console.log(
    `tool preselection: ${set.names.length} tools in ${set.apps} apps, ${set.objectives.length} labelled objectives (${tune.length} tune, ${heldOut.length} held out)`,
  );
  console.log('ranking: full-text rank (ts_rank_cd) + trigram similarity in Postgres (PGlite), score = w·r/(r+1) + (1−w)·trigram');
  console.log('\ntuning the weight w on the tune half (kept@5, then MRR):');
  let best = { weight: 0, f: evaluatePreselection(set.names, tuneMatches, tune, 0, limits, Infinity) };
  for (let i = 0; i <= 10; i++) {
    const weight = i / 10;
    const f = evaluatePreselection(set.names, tuneMatches, tune, weight, limits, Infinity);
    console.log(line(`  w=${weight.toFixed(1)}`, f));
    if (f.keptAt[5]! > best.f.keptAt[5]! || (f.keptAt[5] === best.f.keptAt[5] && f.mrr > best.f.mrr)) best = { weight, f };
  }
  console.log(`best on tune: w=${best.weight.toFixed(1)}; shipped TOOL_RANK_WEIGHT=${TOOL_RANK_WEIGHT}`);
  console.log(`\nwith the shipped weight (MAX_TOOLS_PER_MISSION=${config.maxToolsPerMission}):`);
  const tuneF = evaluatePreselection(set.names, tuneMatches, tune, TOOL_RANK_WEIGHT, limits, 5);
  const heldF = evaluatePreselection(set.names, heldMatches, heldOut, TOOL_RANK_WEIGHT, limits, 5);
  console.log(line('tune (in-sample)', tuneF));
  console.log(line('held out', heldF));
  console.log(
    `\nheld-out figure: the needed tool is kept in ${(heldF.keptAt[config.maxToolsPerMission]! * 100).toFixed(1)}% of objectives at MAX_TOOLS_PER_MISSION=${config.maxToolsPerMission}, ${(heldF.keptAt[5]! * 100).toFixed(1)}% at 5`,
  );
  for (const m of [...tuneF.misses.map((x) => `tune: ${x}`), ...heldF.misses.map((x) => `held out: ${x}`)])
    console.log(`  outside the top 5 — ${m}`);
} finally {
  await db.destroy();
  rmSync(dir, { recursive: true, force: true });
}
