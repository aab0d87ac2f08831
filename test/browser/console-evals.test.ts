import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser } from 'playwright-core';
import { ALL_CAPABILITIES } from '../../testkit/api-client.ts';
import { startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { buildZip } from '../../testkit/zip-builder.ts';
import { until } from '../../testkit/until.ts';
import { keepScreenshot, launchChromium } from '../helpers/browser.ts';

const skillMd = (body: string) => ['---', 'name: greeter', 'description: Greets guests.', '---', body, ''].join('\n');
const EVALS = JSON.stringify({ evals: [{ id: 1, prompt: 'Greet the guest', expectations: ['output contains "Hello Ada"'] }] });
const folder = (body: string) =>
  buildZip([
    { path: 'greeter/SKILL.md', data: skillMd(body) },
    { path: 'greeter/evals/evals.json', data: EVALS },
  ]);

/** The review page's eval card under SKILL_ACTIVATION_REQUIRES_EVAL: a broken version refused, a fixed one activated. */
describe('the console review page runs evals', () => {
  let stack: TestStack;
  let browser: Browser;
  let key: string;
  before(async () => {
    stack = await startTestStack({ env: { SKILL_ACTIVATION_REQUIRES_EVAL: 'true' } });
    key = await stack.api.newKey(ALL_CAPABILITIES);
    stack.model.setHandler((req) => ({ reply: { text: req.system.includes('PROCEDURE-OK') ? 'Hello Ada!' : 'Hi.' } }));
    browser = await launchChromium(chromium);
  });
  after(async () => {
    await browser?.close();
    await stack?.stop();
  });

  const upload = (path: string, body: string) =>
    fetch(`${stack.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/zip' },
      body: new Uint8Array(folder(body)),
    }).then((res) => res.json() as Promise<{ id: string; draftVersion?: number }>);

  it('shows the latest eval run of the version under review, runs one, and activation follows its delta', async () => {
    const { id } = await upload('/api/v1/skills', 'PROCEDURE-OK: greet by name with Hello.');
    assert.equal((await upload(`/api/v1/skills/${id}/versions`, 'Be terse.')).draftVersion, 2);
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(stack.url);
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Main' }).waitFor();

    const review = async (version: number) => {
      await page.goto(`${stack.url}/#/skills/${id}`);
      // Already on this hash after the first review: a reload renders the skill (and its new version) again.
      await page.reload();
      await page
        .getByRole('navigation', { name: 'Versions' })
        .getByRole('link', { name: new RegExp(`^v${version}\\b`) })
        .click();
      const card = page.getByRole('region', { name: 'Evals' });
      await card.getByRole('heading', { name: `Evals of v${version}` }).waitFor();
      await card.getByText('No eval run yet.').waitFor();
      await card.getByRole('button', { name: 'Run eval' }).click();
      await card.locator('#eval-summary .pill', { hasText: 'completed' }).waitFor({ timeout: 60_000 });
      return card;
    };

    const broken = await review(2);
    await broken.locator('#eval-delta', { hasText: /^-1 \(± 0\)$/ }).waitFor(); // filled as the run's last event arrives
    await broken.getByRole('table', { name: 'Eval cases' }).getByText('output contains "Hello Ada": output is "Hi."').waitFor();
    await page.locator('#skill-activate').click();
    await page.getByText(/regressed in eval run .*: delta -1/).waitFor();
    await keepScreenshot(page, 'console-evals');

    assert.equal((await upload(`/api/v1/skills/${id}/versions`, 'PROCEDURE-OK: greet by name with Hello.')).draftVersion, 3);
    const fixed = await review(3);
    await fixed.locator('#eval-delta', { hasText: /^0 \(± 0\)$/ }).waitFor();
    await page.locator('#skill-activate').click();
    // The activation is done when the API says so (an 'active' pill was already on the page: v1's).
    await until(async () => (await stack.api.request('GET', `/api/v1/skills/${id}`, { key })).body.activeVersion === 3, {
      timeoutMs: 30_000,
      what: 'v3 active',
    });
    await page.close();
  });
});
