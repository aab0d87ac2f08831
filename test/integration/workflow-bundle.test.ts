import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildWorkflowBundle, buildWorkflowBundleApart } from '../../worker/workflow-bundle.ts';

describe('the workflow bundle built in a child process', () => {
  it('is the bundle the process would have built itself, with and without tracing', async () => {
    const [apart, here] = await Promise.all([buildWorkflowBundleApart(), buildWorkflowBundle()]);
    assert.equal(apart.code, here.code);
    const traced = await buildWorkflowBundleApart({ tracing: true });
    assert.match(traced.code, /workflow-tracing\.ts/);
    assert.doesNotMatch(apart.code, /workflow-tracing\.ts/);
  });
});
