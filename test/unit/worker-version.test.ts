import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../../config/config.ts';
import { workerVersion } from '../../worker/worker-version.ts';

test('worker versioning is off without a deployment, and a build id alone is refused naming both variables', () => {
  assert.equal(loadConfig({}).temporal.deployment, undefined);
  assert.throws(
    () => loadConfig({ TEMPORAL_WORKER_BUILD_ID: 'b1' }),
    (err: Error) => err instanceof ConfigError && /TEMPORAL_WORKER_BUILD_ID: needs TEMPORAL_WORKER_DEPLOYMENT/.test(err.message),
  );
  assert.throws(() => loadConfig({ TEMPORAL_WORKER_DEPLOYMENT: 'cadenza.prod' }), /TEMPORAL_WORKER_DEPLOYMENT/);
  assert.throws(
    () => loadConfig({ TEMPORAL_WORKER_DEPLOYMENT: 'cadenza', TEMPORAL_WORKER_PROMOTE: 'sometimes' }),
    /TEMPORAL_WORKER_PROMOTE/,
  );
  assert.deepEqual(loadConfig({ TEMPORAL_WORKER_DEPLOYMENT: 'cadenza' }).temporal.deployment, {
    name: 'cadenza',
    buildId: undefined,
    promote: 'first',
  });
});

test('without an explicit build id, the id follows the workflow code: same code, same id; other code, another id', async () => {
  const deployment = { name: 'cadenza', buildId: undefined, promote: 'first' as const };
  const a = await workerVersion(deployment, { code: 'workflow code A' });
  const again = await workerVersion(deployment, { code: 'workflow code A' });
  const b = await workerVersion(deployment, { code: 'workflow code B' });
  assert.match(a!.buildId, /^wf-[0-9a-f]{12}$/);
  assert.equal(a!.buildId, again!.buildId);
  assert.notEqual(a!.buildId, b!.buildId);
  assert.deepEqual(await workerVersion({ ...deployment, buildId: '2026.12.04' }, { code: 'x' }), {
    deploymentName: 'cadenza',
    buildId: '2026.12.04',
  });
  assert.equal(await workerVersion(undefined, { code: 'x' }), undefined);
});
