import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql, type Kysely } from 'kysely';
import { LEXICAL_EXACT_UP_TO } from '../../db/memory-candidates.ts';
import type { Database } from '../../db/schema.ts';
import { createSkill } from '../../db/skills.ts';
import { rankMemories, retrieveMemories } from '../../memory/retrieve.ts';
import { chooseVectorSearch, type VectorSearch } from '../../memory/vector-search.ts';
import { discoverSkills } from '../../skills/discover-skills.ts';
import { parseSkillMd } from '../../skills/skill-md.ts';
import { newVersion } from '../../skills/skill-version.ts';
import { createTestDatabase } from '../../testkit/test-database.ts';

const MINE = { tenantId: 'acme', userId: 'mine' };
const THEIRS = { tenantId: 'acme', userId: 'theirs' };
const FILLER = ['invoice', 'budget', 'meeting', 'slides', 'garden', 'piano', 'train', 'coffee', 'report', 'deadline', 'paint', 'bike'];
const filler = (i: number) => `Note ${i}: ${FILLER[i % 12]} ${FILLER[(i * 7) % 12]} ${FILLER[(i * 5 + 3) % 12]} for week ${i % 52}.`;
const ANSWER = 'High tide at Brest harbour: 14:05 today.';

describe(`lexical search past ${LEXICAL_EXACT_UP_TO} rows of one owner (full-text and pg_trgm GIN indexes)`, () => {
  let db: Kysely<Database>;
  let vectors: VectorSearch;
  let drop: () => Promise<void>;
  before(async () => {
    ({ db, drop } = await createTestDatabase());
    vectors = await chooseVectorSearch(db);
    const memory = (owner: typeof MINE, content: string) => ({
      id: randomUUID(),
      tenant_id: owner.tenantId,
      user_id: owner.userId,
      workspace_code: null,
      content,
      source: 'user',
    });
    // Another user's memories match the query better than the owner's: none of them may come back.
    await db
      .insertInto('memories')
      .values(Array.from({ length: 300 }, (_, i) => memory(THEIRS, `Brest harbour tide ${i}: Brest, Brest harbour.`)))
      .execute();
    for (let i = 0; i < 20_000; i += 2000)
      await db
        .insertInto('memories')
        .values(Array.from({ length: 2000 }, (_, j) => memory(THEIRS, filler(i + j))))
        .execute();
    for (let i = 0; i < 3000; i += 500)
      await db
        .insertInto('memories')
        .values(Array.from({ length: 500 }, (_, j) => memory(MINE, filler(i + j))))
        .execute();
    await db.insertInto('memories').values(memory(MINE, ANSWER)).execute();
    await sql`analyze memories`.execute(db);
  });
  after(() => drop());

  it('finds the owner’s memory by a word in it among 3,000, and never another user’s', async () => {
    const found = await retrieveMemories({ db, vectors }, { owner: MINE }, 'when is the tide in Brest?', 3);
    assert.equal(found[0]?.content, ANSWER);
    assert.deepEqual(
      found.filter((m) => m.user_id !== MINE.userId),
      [],
    );
  });

  it('finds it by a misspelt word (trigram only), and counts the owner’s memories alone', async () => {
    const ranked = await rankMemories({ db, vectors }, { owner: MINE }, 'Brestt');
    assert.deepEqual(ranked.keyword, []);
    assert.equal(ranked.rows.get(ranked.trigram[0]!)?.content, ANSWER);
    assert.ok([...ranked.rows.values()].every((m) => m.user_id === MINE.userId));
    assert.deepEqual(ranked.totals, { saved: 3001, missions: 0 });
  });

  describe('discovery', () => {
    before(async () => {
      const skill = async (owner: typeof MINE, name: string, description: string, trigger: string) => {
        const md = `---\nname: ${name}\ndescription: ${description}\nmetadata:\n  cadenza-triggers: "${trigger}"\n---\nDo it.\n`;
        const parsed = parseSkillMd(md, { folder: name });
        if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
        await createSkill(db, owner, { ...newVersion(md, parsed.skill), source: 'authored', status: 'active' });
      };
      await skill(THEIRS, 'sea-tides', 'Tide times at a port.', 'when is the tide at the port');
      for (let i = 0; i < 1100; i++)
        await skill(
          MINE,
          `chore-${i}`,
          `Handles ${FILLER[i % 12]} and ${FILLER[(i * 7) % 12]} chores.`,
          `${FILLER[(i * 5) % 12]} batch ${i}`,
        );
      await skill(MINE, 'harbour-times', 'Water levels at a harbour.', 'tide tables for a port');
      await sql`analyze skill_chunks`.execute(db);
      await sql`analyze skills`.execute(db);
    });
    const deps = () => ({ db, vectors, tuning: { minScore: 0.15, margin: 0.05, embeddingWeight: 0 } });

    it('discovers the owner’s skill by a word of its trigger among 2,200 chunks, never another user’s', async () => {
      const { items } = await discoverSkills(deps(), MINE, 'when is the tide at the port?');
      assert.equal(items[0]?.name, 'harbour-times');
      assert.ok(!items.some((s) => s.name === 'sea-tides'));
    });

    it('puts a skill named in the message first among 1,100', async () => {
      const { items } = await discoverSkills(deps(), MINE, 'please run Chore 731 for me');
      assert.equal(items[0]?.name, 'chore-731');
      assert.equal(items[0]?.reason, 'named');
    });
  });
});
