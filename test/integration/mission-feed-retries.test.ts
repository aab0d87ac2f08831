import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { NativeConnection } from '@temporalio/worker';
import { createActivities, type MissionActivities } from '../../activities/index.ts';
import { createProgressSinks } from '../../events/progress-sinks.ts';
import { createModelClient } from '../../model/create-model-client.ts';
import { createModelTargets } from '../../model/model-targets.ts';
import { createLogger } from '../../lib/logger.ts';
import { createHealthMonitor } from '../../tools/health.ts';
import { loadAppRegistry } from '../../tools/app-registry.ts';
import { createMcpPool } from '../../tools/mcp/mcp-pool.ts';
import { createSystemTools } from '../../tools/system/index.ts';
import { createWorkers, type MissionWorkers } from '../../worker/create-workers.ts';
import { installTemporalRuntime } from '../../worker/temporal-runtime.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';

/** Runs `fn` for real, then on its first call only fails as if the worker died before reporting the result. */
function failOnceAfter<A extends unknown[], R>(fn: (...args: A) => Promise<R>, calls: { n: number }) {
  return async (...args: A): Promise<R> => {
    const result = await fn(...args);
    if (++calls.n === 1) throw new Error('lost the completion report');
    return result;
  };
}

describe('activity feed and completion memory under activity retries', () => {
  let stack: TestStack;
  let key: string;
  let workers: MissionWorkers;
  let connection: NativeConnection;
  const completeCalls = { n: 0 };
  const toolCalls = { n: 0 };

  before(async () => {
    stack = await startTestStack({ worker: false });
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'retried', tools: ['lab.lookup'], maxTurns: 3 }));
    const logger = createLogger({ level: 'error' });
    installTemporalRuntime(logger);
    const modelClient = createModelClient({ provider: 'anthropic', baseUrl: stack.model.anthropicBaseUrl, apiKey: 'test-key' });
    const real = createActivities({
      db: stack.db,
      modelClient,
      modelTargets: createModelTargets(stack.config.model, modelClient),
      registry: await loadAppRegistry(stack.config.appsDir, { logger }),
      model: stack.config.model,
      systemTools: createSystemTools(stack.config.scripts),
      embeddings: undefined,
      vectors: stack.vectors,
      logger,
      env: stack.env,
      mcp: createMcpPool({ env: stack.env, logger }),
      databaseOutageWaitSeconds: stack.config.databaseOutageWaitSeconds,
      secrets: stack.secrets,
      health: createHealthMonitor({ env: stack.env }),
      maxToolsPerMission: stack.config.maxToolsPerMission,
      missionFiles: stack.config.missionFiles,
      factory: { maxAttempts: stack.config.factory.maxAttempts, scripts: stack.config.scripts },
      approvalTimeoutS: stack.config.approvalTimeoutS,
      sessionIdleTtlS: stack.config.sessions.idleTtlS,
      compaction: stack.config.compaction,
    });
    const activities: MissionActivities = {
      ...real,
      completeMission: failOnceAfter(real.completeMission, completeCalls),
      runTool: failOnceAfter(real.runTool, toolCalls),
    };
    connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS! });
    workers = await createWorkers({
      connection,
      config: stack.config,
      activities,
      workflowBundle: { codePath: process.env.CADENZA_TEST_BUNDLE! },
      sinks: createProgressSinks(stack.notifications).sinks,
    });
    void workers.run();
  });
  after(async () => {
    await workers.shutdown();
    await connection.close();
    await stack.stop();
  });

  it('writes one memory and one feed row per event, and calls the tool once, though the tool and completion activities ran twice', async () => {
    stack.model.enqueue(
      { reply: { toolUses: [{ id: 'tu_r', name: 'lab__lookup', input: { q: 'x' } }] } },
      { reply: { text: 'Done after retries.' } },
    );
    const { id } = await stack.api.startMission(key, { skill: 'retried', objective: 'Survive retried activities.' });
    const mission = await stack.api.waitForEnd(key, id);
    assert.equal(mission.status, 'completed');
    assert.equal(completeCalls.n, 2, 'the completion activity ran twice');
    assert.equal(toolCalls.n, 2, 'the tool activity ran twice');
    assert.equal(
      stack.tools.requests.filter((r) => r.tool === 'lookup').length,
      1,
      'the retried attempt returned the stored answer: the tool itself ran once',
    );

    const feed = await stack.api.request('GET', `/api/v1/activity?missionId=${id}`, { key });
    assert.deepEqual(
      feed.body.items.map((a: { kind: string }) => a.kind),
      ['mission_end', 'tool_end', 'tool_start'],
    );
    const memories = await stack.db.selectFrom('memories').select(['content']).where('mission_id', '=', id).execute();
    assert.equal(memories.length, 1);
    assert.match(memories[0]!.content, /Done after retries/);
  });
});
