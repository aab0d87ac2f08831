import type { RecordedRequest } from '../fake-model/fake-model-types.ts';
import { startBenchStack } from './bench-kit.ts';
import type { Row } from './stats.ts';

const BENCH = 'prompt-cache';
const TURNS = 10;
/** ~6 KB of procedure and ~2 KB per tool result, as issue 32 sets the figure. */
const PROCEDURE = Array.from(
  { length: 75 },
  (_, i) => `${i + 1}. Check section ${i + 1} of the ledger against its source; note gaps.`,
).join('\n');
const RESULT_LINES = Array.from({ length: 50 }, (_, i) => `line ${i}: balance matches the source ledger`);

/**
 * Input tokens of a 10-turn mission (each turn one `lab.lookup` whose result is ~2 KB, then an answer) with
 * Anthropic prompt caching on and off (MODEL_PROMPT_CACHING), as the fake model reports them: it caches and reads
 * prefixes by the provider's documented rules (breakpoints, the 1,024-token minimum), counting 4 characters a token.
 */
export async function run(): Promise<Row[]> {
  const on = await mission('true');
  const off = await mission('false');
  const later = (rs: RecordedRequest[]) => rs.slice(1);
  const input = (rs: RecordedRequest[]) => rs.reduce((n, r) => n + Math.ceil(JSON.stringify(r.body).length / 4), 0);
  const read = (rs: RecordedRequest[]) => rs.reduce((n, r) => n + (r.cache?.readTokens ?? 0), 0);
  const written = (rs: RecordedRequest[]) => rs.reduce((n, r) => n + (r.cache?.creationTokens ?? 0), 0);
  const full = (rs: RecordedRequest[]) => input(rs) - read(rs) - written(rs);
  const share = read(later(on)) / input(later(on));
  return [
    {
      bench: BENCH,
      figure: `input tokens read from the cache, turns 2–${TURNS} (caching on; goal ≥ 70%)`,
      value: `${(share * 100).toFixed(1)}% (${read(later(on))} of ${input(later(on))})`,
    },
    {
      bench: BENCH,
      figure: `input tokens billed at the full rate, ${TURNS} turns: on / off`,
      value: `${full(on)} / ${full(off)} (${((full(on) / full(off)) * 100).toFixed(1)}%); written to the cache: ${written(on)}`,
    },
  ];
}

async function mission(caching: 'true' | 'false'): Promise<RecordedRequest[]> {
  const { stack, key } = await startBenchStack({ name: 'ledger', tools: [], maxTurns: TURNS }, { MODEL_PROMPT_CACHING: caching });
  try {
    await stack.api.createSkill(
      key,
      [
        '---',
        'name: auditor',
        'description: Audits a ledger.',
        'allowed-tools: lab.lookup',
        'metadata:',
        `  cadenza-max-turns: "${TURNS}"`,
        '---',
        PROCEDURE,
        '',
      ].join('\n'),
    );
    stack.tools.on('lookup', (input) => ({ body: { section: input.q, lines: RESULT_LINES } }));
    let calls = 0;
    stack.model.setHandler(() =>
      ++calls < TURNS
        ? { reply: { toolUses: [{ id: `tu_${calls}`, name: 'lab__lookup', input: { q: `section ${calls}` } }] } }
        : { reply: { text: 'The ledger checks out.' } },
    );
    const { id } = await stack.api.startMission(key, { skill: 'auditor', objective: 'Check the ledger.' });
    await stack.api.waitForEnd(key, id);
    return [...stack.model.requests];
  } finally {
    await stack.stop();
  }
}
