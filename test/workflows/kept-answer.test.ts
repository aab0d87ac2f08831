import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { beat } from '../../activities/checkpoint.ts';
import { outlastDatabaseOutages } from '../../activities/database-outage.ts';
import { answerOnce } from '../../activities/kept-answer.ts';
import { createLogger } from '../../lib/logger.ts';
import type { ModelTurnResult } from '../../contracts/mission.ts';
import { answer, startWorkflowHarness } from './workflow-harness.ts';

const logger = createLogger({ level: 'error' });
/** What pg throws when Postgres refuses connections. */
const refused = () => Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });

describe('an answer kept in the heartbeat details reaches the next attempt', () => {
  let harness: Awaited<ReturnType<typeof startWorkflowHarness>>;
  before(async () => {
    harness = await startWorkflowHarness();
  });
  after(() => harness.teardown());

  /** A model call whose answer is kept, then whose store fails in attempt 1 (`fail`); the number of times it asked. */
  async function run(fail: () => Error, wrap: (fn: () => Promise<ModelTurnResult>) => () => Promise<ModelTurnResult>) {
    let asks = 0;
    const attempts: number[] = [];
    const callModel = wrap(async () => {
      const ctx = Context.current();
      attempts.push(ctx.info.attempt);
      beat(ctx); // the attempt's first heartbeat goes out at once; the one keeping the answer waits out the throttle
      const reply = await answerOnce(async () => (asks++, answer('kept')), logger);
      if (ctx.info.attempt === 1) throw fail();
      return reply;
    });
    await harness.run({ heartbeatThrottle: '200ms', model: callModel }, async (m) => {
      assert.equal((await m.handle.result()).text, 'kept');
    });
    return { asks, attempts };
  }

  it('is lost when the attempt fails at once: the failure report does not deliver the last heartbeat', async () => {
    const { asks, attempts } = await run(
      () => ApplicationFailure.retryable('the store failed', 'StoreFailed'),
      (fn) => fn,
    );
    assert.deepEqual(attempts, [1, 2]);
    assert.equal(asks, 2, 'if this passes with 1, the SDK now flushes the last heartbeat with a failure: the settle can go');
  });

  it('reaches the next attempt when the outage wrapper gives up at once (DATABASE_OUTAGE_WAIT_SECONDS=0): it lets the heartbeat out first', async () => {
    const { asks, attempts } = await run(refused, (fn) => outlastDatabaseOutages({ fn }, { maxWaitSeconds: 0, logger }).fn);
    assert.deepEqual(attempts, [1, 2]);
    assert.equal(asks, 1, 'the second attempt took the kept answer instead of asking again');
  });
});
