import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import type { ApiResponse } from '../../testkit/api-client.ts';
import { insertUnderLimits } from '../../admission/admission.ts';
import { settleStaleStarts } from '../../admission/start-settler.ts';
import { findOwnedSkillByName } from '../../db/skills.ts';
import { missionLimits } from '../../missions/mission-limits.ts';
import { newMissionRow } from '../../missions/start-mission.ts';

/**
 * Issue 36's overloaded run answered some `POST /missions` with 500. A start that meets a busy database (its user's
 * start lock held by other starts, every pooled connection in use) or races another start with the same idempotency
 * key is not a bug: it answers 503 with Retry-After (and records nothing) or the mission, never 500 and never a hang.
 */
describe('POST /missions while the database is busy', () => {
  let stack: TestStack;
  const owner = { tenantId: 'acme', userId: 'busy-user' };
  let key: string;
  before(async () => {
    // A start rate makes every start of a user take the user's start lock (admission/admission.ts).
    stack = await startTestStack({ env: { MAX_STARTS_PER_MINUTE_PER_USER: '1000' } });
    key = await stack.api.newKey(undefined, owner);
    await stack.api.createSkill(key, skillMd({ name: 'busy', maxTurns: 1 }));
    stack.model.setHandler(() => ({ reply: { text: 'done' } }));
  });
  after(() => stack.stop());

  const start = (body: Record<string, unknown> = {}) =>
    stack.api.request('POST', '/api/v1/missions', {
      key,
      body: { skill: 'busy', objective: 'Start while busy.', workspaceCode: 'ws', ...body },
    });
  /** The answer, or 'no answer' when none came within `ms`. */
  const within = (ms: number, res: Promise<ApiResponse>) =>
    Promise.race([res, new Promise<'no answer'>((ok) => setTimeout(() => ok('no answer'), ms))]);
  const missionRows = () => stack.db.selectFrom('missions').select(['id', 'status']).where('user_id', '=', owner.userId).execute();

  it('answers 503 with Retry-After when the user’s start lock stays held, records nothing, and starts once it is free', async () => {
    const holder = new pg.Client({ connectionString: stack.env.DATABASE_URL });
    await holder.connect();
    try {
      // What hundreds of this user's starts queued on the same lock look like to the next one.
      await holder.query('begin');
      await holder.query('select pg_advisory_xact_lock(hashtext($1))', [`cadenza-starts:${owner.tenantId}/${owner.userId}`]);
      const before = (await missionRows()).length;
      const answer = await within(20_000, start());
      assert.notEqual(answer, 'no answer', 'the start must not wait on the lock for as long as it is held');
      const res = answer as ApiResponse;
      assert.equal(res.status, 503, JSON.stringify(res.body));
      assert.equal(res.body.error.code, 'unavailable');
      assert.match(res.body.error.message, /busy; retry/);
      assert.match(res.headers.get('retry-after') ?? '', /^\d+$/);
      assert.equal((await missionRows()).length, before, 'a refused start records no mission');
    } finally {
      await holder.query('commit').catch(() => {});
      await holder.end();
    }
    const again = await start();
    assert.equal(again.status, 202, JSON.stringify(again.body));
    assert.equal((await stack.api.waitForEnd(key, again.body.id)).status, 'completed');
  });

  it('answers 503 with Retry-After when every pooled connection stays in use', async () => {
    let release!: () => void;
    const released = new Promise<void>((ok) => (release = ok));
    // The stack's pool (API and worker share it: 10 connections), every connection checked out by this test.
    const held = Array.from({ length: 10 }, () => stack.db.connection().execute(() => released));
    try {
      const res = await start();
      assert.equal(res.status, 503, JSON.stringify(res.body));
      assert.match(res.body.error.message, /database is busy; retry/);
      assert.match(res.headers.get('retry-after') ?? '', /^\d+$/);
    } finally {
      release();
      await Promise.all(held);
    }
  });

  it('does not let the start settler fail a start that waited for its user’s start lock before its workflow could start', async () => {
    // A start recorded after 3 s behind its user's lock, its workflow not started yet (the API request is still on
    // its way to Temporal), meets a settler round that takes rows `starting` for 1 s or more (START_SETTLE_SECONDS=2):
    // the wait behind the lock must not count as the row's age, or the round fails a mission its request then starts.
    const holder = new pg.Client({ connectionString: stack.env.DATABASE_URL });
    await holder.connect();
    const found = (await findOwnedSkillByName(stack.db, owner, 'busy'))!;
    const row = newMissionRow(owner, found, missionLimits(stack.config, found.version.spec, {}), {
      id: crypto.randomUUID(),
      objective: 'Recorded behind the lock.',
      workspaceCode: 'ws',
    });
    let inserted;
    try {
      await holder.query('begin');
      await holder.query('select pg_advisory_xact_lock(hashtext($1))', [`cadenza-starts:${owner.tenantId}/${owner.userId}`]);
      const insert = insertUnderLimits(stack, row);
      await new Promise((ok) => setTimeout(ok, 3_000));
      await holder.query('commit');
      inserted = await insert;
    } finally {
      await holder.end();
    }
    assert.equal(inserted.row.status, 'starting');
    const settler = { ...stack, config: { ...stack.config, admission: { ...stack.config.admission, startSettleS: 2 } } };
    assert.deepEqual(await settleStaleStarts(settler), { running: 0, failed: 0 }, 'the fresh row is not the settler’s');
    const now = await stack.db.selectFrom('missions').select(['status', 'error']).where('id', '=', row.id).executeTakeFirstOrThrow();
    assert.deepEqual(now, { status: 'starting', error: null });
  });

  it('gives every racing start with the same idempotency key the one mission (202), never a 500', async () => {
    const answers = await Promise.all(Array.from({ length: 8 }, () => start({ idempotencyKey: 'raced-key' })));
    assert.deepEqual(
      answers.map((a) => a.status),
      Array(8).fill(202),
      JSON.stringify(answers.map((a) => a.body)),
    );
    assert.equal(new Set(answers.map((a) => a.body.id)).size, 1, 'one mission for the key');
    assert.equal((await stack.api.waitForEnd(key, answers[0]!.body.id)).status, 'completed');
  });
});
