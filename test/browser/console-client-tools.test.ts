import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser } from 'playwright-core';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { launchChromium } from '../helpers/browser.ts';

/** The mission page's form for a tool the caller runs (`runs: client`), in a real Chromium against a whole stack. */
describe('console: the result form of a client tool call', () => {
  let stack: TestStack;
  let browser: Browser;
  let key: string;

  before(async () => {
    stack = await startTestStack();
    key = await stack.api.newKey(['mission.run', 'mission.read', 'skill.read', 'skill.write'], { tenantId: 'acme', userId: 'desk-user' });
    await stack.api.createSkill(key, skillMd({ name: 'painter', tools: ['desk.pick_color'], maxTurns: 3 }));
    browser = await launchChromium(chromium);
  });
  after(async () => {
    await browser?.close();
    await stack?.stop();
  });

  it('shows the waiting call with its input; a result refused by the output schema names the field; a valid one completes it', async () => {
    stack.model.setHandler((r) =>
      r.toolResults.length === 0
        ? { reply: { toolUses: [{ id: 'tu_pick', name: 'desk__pick_color', input: { hint: 'the sea' } }] } }
        : { reply: { text: `Painting it ${r.toolResults[0]!.content}` } },
    );
    const { id } = await stack.api.startMission(key, { skill: 'painter', objective: 'Paint the wall.' });
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const problems: string[] = [];
    page.on('pageerror', (err) => problems.push(err.message));
    await page.goto(stack.url);
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Main' }).waitFor();
    await page.goto(`${stack.url}/#/missions/${id}`);

    const row = page.locator('li[data-tool-use-id="tu_pick"]');
    const form = row.getByRole('group', { name: 'Result of desk.pick_color' });
    await form.waitFor();
    assert.match((await form.locator('pre').textContent()) ?? '', /"hint": "the sea"/, 'the call’s input is shown');
    assert.match((await form.locator('p').first().textContent()) ?? '', /Waits for your result until/);

    await form.getByLabel('Output of desk.pick_color').fill(JSON.stringify({ color: 'purple' }));
    await form.getByRole('button', { name: 'Send result' }).click();
    await row.getByRole('alert').filter({ hasText: 'output.color' }).waitFor();
    assert.equal(await row.locator('.status .pill').textContent(), 'running', 'still waiting after the refusal');

    await form.getByLabel('Output of desk.pick_color').fill(JSON.stringify({ color: 'green' }));
    await form.getByRole('button', { name: 'Send result' }).click();
    await row.locator('.status .pill', { hasText: 'completed' }).waitFor();
    assert.equal(await form.count(), 0, 'the form is gone once the call ended');
    await page.getByRole('heading', { name: 'Answer' }).waitFor();
    const mission = await stack.api.waitForEnd(key, id);
    assert.match(mission.result.text, /Painting it .*green/);
    assert.deepEqual(problems, []);
    await page.close();
  });
});
