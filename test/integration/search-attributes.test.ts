import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Connection } from '@temporalio/client';
import { SEARCH_ATTRIBUTE_NAMES, StatusSearchAttribute } from '../../contracts/mission.ts';
import { startDevServer, type DevServer } from '../../temporal/dev-server.ts';
import { resolveTemporalCli } from '../../temporal/resolve-cli.ts';
import { missingSearchAttributes } from '../../temporal/search-attributes.ts';
import { freePort } from '../../testkit/free-port.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';

/**
 * A Temporal server set up by anyone but this project (not the compose file's one-shot service) lacks Cadenza's
 * search attributes, and every workflow start sets them: the processes register them, and a start never answers 500.
 */
describe('a Temporal namespace without Cadenza’s search attributes', () => {
  let temporal: DevServer;
  let connection: Connection;
  let stack: TestStack;
  let key: string;
  before(async () => {
    temporal = await startDevServer({ cliPath: resolveTemporalCli(), port: await freePort(), searchAttributes: false });
    connection = await Connection.connect({ address: temporal.address });
    assert.deepEqual(await missingSearchAttributes(connection, 'default'), SEARCH_ATTRIBUTE_NAMES, 'the bare server lacks them all');
    stack = await startTestStack({ temporalAddress: temporal.address });
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'plain' }));
  });
  after(async () => {
    await stack?.stop();
    await connection?.close();
    await temporal?.stop();
  });

  it('the API registers them as it starts: missions start, the Web UI attribute is set, /readyz says so', async () => {
    assert.deepEqual(await missingSearchAttributes(connection, 'default'), []);
    const ready = await fetch(`${stack.url}/readyz`);
    assert.equal(ready.status, 200);
    assert.deepEqual(((await ready.json()) as { checks: unknown }).checks, { database: true, temporal: true, searchAttributes: true });
    stack.model.enqueue({ reply: { text: 'Started fine.' } });
    const { id } = await stack.api.startMission(key, { skill: 'plain', objective: 'Start.' });
    assert.equal((await stack.api.waitForEnd(key, id)).status, 'completed');
    assert.equal((await stack.handle(id).describe()).typedSearchAttributes.get(StatusSearchAttribute), 'completed');
  });

  it('a start that meets one removed since registers it again and starts, never a 500', async () => {
    await connection.operatorService.removeSearchAttributes({ namespace: 'default', searchAttributes: ['CadenzaSkillVersion'] });
    assert.deepEqual(await missingSearchAttributes(connection, 'default'), ['CadenzaSkillVersion']);
    stack.model.enqueue({ reply: { text: 'Started again.' } });
    const started = await stack.api.request('POST', '/api/v1/missions', {
      key,
      body: { skill: 'plain', objective: 'Again.', workspaceCode: 'w' },
    });
    assert.equal(started.status, 202, JSON.stringify(started.body));
    assert.equal((await stack.api.waitForEnd(key, started.body.id)).status, 'completed');
    assert.deepEqual(await missingSearchAttributes(connection, 'default'), []);
  });
});
