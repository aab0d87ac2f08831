import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { eventsOf } from '../../testkit/api-client.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { keepScreenshot, launchChromium } from '../helpers/browser.ts';

/** The console in a real Chromium (Debian's, driven by playwright-core) against a whole stack on real services. */
describe('mission console in a browser', () => {
  let stack: TestStack;
  let browser: Browser;
  const owner = { tenantId: 'acme', userId: 'console-user' };
  let key: string;
  let reviewerKey: string;

  before(async () => {
    stack = await startTestStack();
    key = await stack.api.newKey(['mission.run', 'mission.read', 'skill.read', 'skill.write'], owner);
    reviewerKey = await stack.api.newKey(['skill.read', 'skill.review', 'mission.read'], owner);
    await stack.api.createSkill(key, skillMd({ name: 'scanner', tools: ['lab.lookup', 'lab.scan'], maxTurns: 4 }));
    await stack.api.createSkill(key, skillMd({ name: 'helper', maxTurns: 2 }));
    await stack.api.createSkill(
      key,
      ['---', 'name: boss', 'description: Delegates.', 'metadata:', '  cadenza-delegates: helper', '---', 'Delegate.', ''].join('\n'),
    );
    browser = await launchChromium(chromium);
  });
  after(async () => {
    await browser?.close();
    await stack?.stop();
  });

  async function signedIn(withKey = key): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const problems: string[] = [];
    page.on('pageerror', (err) => problems.push(err.message));
    page.on('console', (m) => void (m.type() === 'error' && !/Failed to load resource/.test(m.text()) && problems.push(m.text())));
    (page as Page & { problems: string[] }).problems = problems;
    await page.goto(stack.url);
    await page.getByLabel('API key').fill(withKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Main' }).waitFor();
    return page;
  }

  it('serves the page under a CSP that refuses inline script and eval', async () => {
    const res = await fetch(stack.url);
    const csp = res.headers.get('content-security-policy') ?? '';
    const scriptSrc = csp.split(';').find((d) => d.trim().startsWith('script-src'));
    assert.equal(scriptSrc?.trim(), "script-src 'self'");
  });

  it('refuses an unknown key at sign-in and keeps the key out of local storage', async () => {
    const page = await browser.newPage();
    await page.goto(stack.url);
    await page.getByLabel('API key').fill('ck_not_a_key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'unknown or revoked' }).waitFor();
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Missions', exact: true }).waitFor();
    assert.equal(await page.evaluate(() => localStorage.length), 0, 'nothing in local storage');
    assert.equal(await page.evaluate(() => sessionStorage.getItem('cadenza.apiKey')), key, 'the key lives in session storage');
    await page.close();
  });

  it('starts a mission, fills the timeline live, stops one slow tool while the mission completes', async () => {
    stack.tools.on('scan', () => ({ hang: true }));
    stack.tools.on('lookup', () => ({ delayMs: 800, body: { hit: 'found it' } }));
    stack.model.enqueue(
      {
        reply: {
          toolUses: [
            { id: 'tu_scan', name: 'lab__scan', input: { target: 'big' } },
            { id: 'tu_look', name: 'lab__lookup', input: { q: 'q' } },
          ],
        },
      },
      { reply: { text: 'The scan was **stopped**; the lookup *found it*.' } },
    );
    const page = await signedIn();
    await page.getByLabel('Skill').selectOption('scanner');
    await page.getByLabel('Objective').fill('Scan and look up.');
    await page.getByRole('button', { name: 'Start mission' }).click();
    await page.getByRole('heading', { name: /Mission · scanner/ }).waitFor();
    const scanRow = page.locator('li[data-tool-use-id="tu_scan"]');
    await scanRow.locator('.status .pill', { hasText: 'running' }).waitFor();
    await page.getByText('Turn 1', { exact: true }).waitFor();
    await stack.tools.waitFor(() => stack.tools.requests.some((r) => r.tool === 'scan'));

    await scanRow.getByRole('button', { name: 'Stop lab.scan' }).click();
    await scanRow.locator('.status .pill', { hasText: 'cancelled' }).waitFor();
    await page.locator('li[data-tool-use-id="tu_look"] .status .pill', { hasText: 'completed' }).waitFor();
    await page.getByRole('heading', { name: 'Answer' }).waitFor();
    assert.equal(await page.locator('.rendered strong').textContent(), 'stopped', 'the answer is rendered as markdown');
    assert.equal(await page.locator('header .pill, .card .pill').first().textContent(), 'completed');
    assert.match((await page.getByLabel('Metrics').textContent()) ?? '', /Turns\s*2/);
    assert.equal(await page.getByRole('button', { name: 'Cancel mission' }).isVisible(), false, 'nothing left to cancel');
    const scan = stack.tools.requests.find((r) => r.tool === 'scan')!;
    await stack.tools.waitFor(() => scan.endedAt !== undefined);
    assert.equal(scan.aborted, true, 'the stop button reached the tool server');

    await keepScreenshot(page, 'console-mission');
    await page.getByRole('link', { name: '← Missions' }).click();
    await page.getByRole('table', { name: 'Missions' }).getByRole('link', { name: 'Scan and look up.' }).waitFor();
    assert.deepEqual((page as Page & { problems: string[] }).problems, []);
    await page.close();
  });

  it('a mission paused at its budget shows what it spent, and Raise budget lets it go on to its answer', async () => {
    stack.model.enqueue(
      {
        reply: { toolUses: [{ id: 'tu_budget', name: 'lab__lookup', input: { q: 'x' } }], usage: { inputTokens: 400, outputTokens: 100 } },
      },
      // The provider read most of the second request from its prompt cache: the saving shows with the metrics.
      { reply: { text: 'Answered once the budget was raised.', usage: { inputTokens: 500, outputTokens: 20, cacheReadTokens: 450 } } },
    );
    const { id } = await stack.api.startMission(key, { skill: 'scanner', objective: 'Spend.', maxTokens: 800, budgetPolicy: 'pause' });
    const page = await signedIn();
    await page.goto(`${stack.url}/#/missions/${id}`);
    const form = page.getByRole('form', { name: 'Budget' });
    await form.getByText('Spent 500 tokens').waitFor();
    await page.locator('.card .pill', { hasText: 'paused' }).first().waitFor();
    assert.equal(await page.getByLabel('Max tokens').inputValue(), '1600', 'a raise is offered');
    await page.getByRole('button', { name: 'Raise budget' }).click();
    await page.locator('.card .pill', { hasText: 'completed' }).first().waitFor();
    await page.getByText('Answered once the budget was raised.').first().waitFor();
    assert.equal(await form.isVisible(), false, 'the control goes once the mission runs again');
    const cached = page.getByLabel('Metrics').locator('div', { hasText: 'Read from cache' });
    assert.match((await cached.textContent()) ?? '', /^Read from cache450 of \d+ in$/);
    assert.equal((await stack.api.getMission(key, id)).body.limits.maxTokens.value, 1600);
    assert.deepEqual((page as Page & { problems: string[] }).problems, []);
    await page.close();
  });

  it('shows the mission tree: the parent’s sub-missions, the delegate events, and the child’s link back', async () => {
    stack.model.enqueue(
      { reply: { toolUses: [{ id: 'tu_del', name: 'delegate', input: { skill: 'helper', objective: 'Find it.' } }] } },
      { reply: { text: 'The helper found it.' } },
      { reply: { text: 'Done with help.' } },
    );
    const { id } = await stack.api.startMission(key, { skill: 'boss', objective: 'Get help.' });
    const page = await signedIn();
    await page.goto(`${stack.url}/#/missions/${id}`);
    const children = page.getByRole('list', { name: 'Sub-missions' });
    await children.getByRole('link', { name: 'helper' }).waitFor();
    await children.locator('.pill', { hasText: 'completed' }).waitFor();
    await page.locator('.timeline li', { hasText: 'Sub-mission helper started' }).waitFor();
    await page.locator('.timeline li', { hasText: 'Sub-mission helper completed' }).waitFor();
    await children.getByRole('link', { name: 'helper' }).click();
    await page.getByRole('heading', { name: /Mission · helper/ }).waitFor();
    await page.getByText('The helper found it.').first().waitFor();
    await page.getByText('Sub-mission of').getByRole('link', { name: id }).click();
    await page.getByRole('heading', { name: /Mission · boss/ }).waitFor();
    assert.deepEqual((page as Page & { problems: string[] }).problems, []);
    await page.close();
  });

  it('lists the files a tool returned on the mission page and downloads one with the key', async () => {
    const csv = 'id,total\n1,40\n';
    stack.tools.on('lookup', () => ({
      body: { hit: 'found', files: [{ name: 'totals.csv', mediaType: 'text/csv', base64: Buffer.from(csv).toString('base64') }] },
    }));
    stack.model.enqueue(
      { reply: { toolUses: [{ id: 'tu_file', name: 'lab__lookup', input: { q: 'totals' } }] } },
      { reply: { text: 'The totals are attached.' } },
    );
    const { id } = await stack.api.startMission(key, { skill: 'scanner', objective: 'Attach the totals.' });
    const page = await signedIn();
    await page.goto(`${stack.url}/#/missions/${id}`);
    const files = page.getByRole('list', { name: 'Files' });
    await files.getByText(`text/csv · ${csv.length} B`).waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), files.getByRole('button', { name: 'totals.csv' }).click()]);
    assert.equal(download.suggestedFilename(), 'totals.csv');
    const saved = await download.path();
    assert.equal(readFileSync(saved, 'utf8'), csv);
    assert.deepEqual((page as Page & { problems: string[] }).problems, []);
    await page.close();
  });

  it('a session: answers, takes a message from the message box, answers again, and the close button ends it', async () => {
    const first = stack.model.requests.length;
    stack.model.enqueue({ reply: { text: 'First answer.' } }, { reply: { text: 'Second answer, **after** your note.' } });
    const page = await signedIn();
    await page.getByLabel('Skill').selectOption('scanner');
    await page.getByLabel('Objective').fill('Talk to me.');
    await page.getByLabel('Session: keep talking after the answer').check();
    await page.getByRole('button', { name: 'Start mission' }).click();
    await page.locator('li.answer[data-exchange="1"]', { hasText: 'First answer.' }).waitFor();
    await page.locator('.card .pill', { hasText: 'idle' }).first().waitFor();

    await page.getByLabel('Message', { exact: true }).fill('Mind the weather too.');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.locator('li.message', { hasText: 'Mind the weather too.' }).waitFor();
    await page.locator('li.answer[data-exchange="2"] strong', { hasText: 'after' }).waitFor();
    assert.equal(stack.model.requests[first + 1]!.lastUserText, 'Mind the weather too.', 'the message reached the model');
    assert.equal(await page.getByLabel('Message', { exact: true }).inputValue(), '', 'the box is emptied once sent');

    await page.getByRole('button', { name: 'Close session' }).click();
    await page.locator('.card .pill', { hasText: 'completed' }).first().waitFor();
    await page.getByRole('heading', { name: 'Answer', exact: true }).waitFor();
    assert.equal(await page.getByRole('form', { name: 'Talk to the mission' }).isVisible(), false, 'an ended mission takes no message');
    const shown = await page.locator('.timeline li.message, .timeline li.answer').evaluateAll((els) => els.map((e) => e.className));
    assert.deepEqual(shown, ['answer', 'message', 'answer'], 'answer 1, the message, answer 2 in the order they happened');
    assert.deepEqual((page as Page & { problems: string[] }).problems, []);
    await page.close();
  });

  it('after a reload mid-mission shows every event once: no row duplicated, none missing', async () => {
    let release!: () => void;
    const gate = new Promise<void>((ok) => (release = ok));
    stack.tools.on('lookup', async () => {
      await gate;
      return { body: { hit: 'late' } };
    });
    stack.model.enqueue(
      { reply: { toolUses: [{ id: 'tu_a', name: 'lab__lookup', input: { q: 'a' } }] } },
      { reply: { toolUses: [{ id: 'tu_b', name: 'lab__lookup', input: { q: 'b' } }] } },
      { reply: { text: 'Both looked up.' } },
    );
    const { id } = await stack.api.startMission(key, { skill: 'scanner', objective: 'Look up twice.' });
    const page = await signedIn();
    await page.goto(`${stack.url}/#/missions/${id}`);
    await page.locator('li[data-tool-use-id="tu_a"] .status .pill', { hasText: 'running' }).waitFor();
    await page.reload();
    await page.locator('li[data-tool-use-id="tu_a"] .status .pill', { hasText: 'running' }).waitFor();
    release();
    await page.getByRole('heading', { name: 'Answer' }).waitFor();

    const shown = await page.locator('.timeline li[data-seq]').evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-seq'))));
    const events = eventsOf((await stack.api.readEvents(key, id)).frames);
    const expected = events.filter((e) => ['turn', 'tool_start', 'error'].includes(String(e.type))).map((e) => Number(e.seq));
    assert.deepEqual(shown, expected, 'one row per turn and per tool call, in order');
    assert.equal(await page.locator('li[data-tool-use-id="tu_a"]').count(), 1);
    assert.equal(await page.locator('li[data-tool-use-id="tu_b"] .status .pill').textContent(), 'completed');
    await page.close();
  });

  it('approves a waiting call with an edited input, and draws the chart a tool result carried', async () => {
    await stack.api.createSkill(key, skillMd({ name: 'careful', tools: ['lab.wipe', 'lab.lookup'], maxTurns: 3 }));
    stack.tools.on('wipe', () => ({ body: { wiped: true } }));
    stack.tools.on('lookup', () => ({
      body: {
        hits: 3,
        suggestions_follow_up_requests: ['Wipe the staging target too'],
        canvas: {
          type: 'vega-lite',
          title: 'Hits by day',
          spec: {
            $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
            data: {
              values: [
                { day: 'Mon', hits: 1 },
                { day: 'Tue', hits: 2 },
              ],
            },
            // Expressions (a calculated field, a filter) are what Vega would compile with Function: under the
            // console's CSP (no unsafe-eval) they run through vega-interpreter.
            transform: [{ calculate: 'datum.hits * 10', as: 'score' }, { filter: 'datum.score > 0' }],
            mark: 'bar',
            encoding: { x: { field: 'day', type: 'nominal' }, y: { field: 'score', type: 'quantitative' } },
          },
        },
      },
    }));
    stack.model.enqueue(
      {
        reply: {
          toolUses: [
            { id: 'tu_wipe', name: 'lab__wipe', input: { target: 'prod' } },
            { id: 'tu_hits', name: 'lab__lookup', input: { q: 'hits' } },
          ],
        },
      },
      { reply: { text: 'Wiped staging, as approved.' } },
    );
    const { id } = await stack.api.startMission(key, { skill: 'careful', objective: 'Wipe the target.' });
    const page = await signedIn();
    await page.goto(`${stack.url}/#/missions/${id}`);
    const wipe = page.locator('li[data-tool-use-id="tu_wipe"]');
    await wipe.locator('.status .pill', { hasText: 'awaiting approval' }).waitFor();
    // The sibling runs while one waits; its embed's chart is drawn (Vega, served by the API itself).
    const hits = page.locator('li[data-tool-use-id="tu_hits"]');
    await hits.locator('.embed .pill', { hasText: 'finished' }).waitFor();
    await hits.locator('figure.canvas[data-type="vega-lite"] svg').waitFor();
    assert.equal(await hits.locator('figcaption').textContent(), 'Hits by day');
    assert.equal(await hits.locator('figure.canvas [role="alert"]').count(), 0, 'the chart drew without an error');
    assert.equal(await hits.locator('figure.canvas svg g.mark-rect path').count(), 2, 'both bars, through the filter');
    assert.equal(await hits.getByRole('list', { name: 'Follow-ups' }).textContent(), 'Wipe the staging target too');
    assert.equal(
      stack.tools.requests.some((r) => r.tool === 'wipe'),
      false,
      'nothing ran before the approval',
    );

    await wipe.getByLabel('Input of lab.wipe').fill(JSON.stringify({ target: 'staging' }));
    await wipe.getByRole('button', { name: 'Approve' }).click();
    await wipe.locator('.status .pill', { hasText: 'completed' }).waitFor();
    assert.deepEqual(stack.tools.requests.find((r) => r.tool === 'wipe')?.input, { target: 'staging' }, 'the edited input ran');
    await page.getByRole('heading', { name: 'Answer' }).waitFor();
    await keepScreenshot(page, 'console-approval');
    assert.deepEqual((page as Page & { problems: string[] }).problems, []);
    await page.close();
  });

  it('renders a hostile skill body inert, shows the quarantine banner, and only a reviewer can activate', async () => {
    const hostile = [
      '---',
      'name: hostile-notes',
      'description: Notes with markup that must never run.',
      '---',
      '# Notes',
      '',
      '<script>window.__pwned = "script"</script>',
      '',
      '<img src="x" onerror="window.__pwned = \'onerror\'">',
      '',
      '[click](javascript:window.__pwned=1) and **bold** text.',
      '',
    ].join('\n');
    const page = await signedIn();
    await page.getByRole('link', { name: 'Skills' }).click();
    await page.getByRole('heading', { name: 'Import a skill' }).waitFor();
    await page.getByLabel('SKILL.md or zip').setInputFiles({ name: 'SKILL.md', mimeType: 'text/markdown', buffer: Buffer.from(hostile) });
    await page.getByRole('button', { name: 'Import' }).click();
    await page.getByRole('heading', { name: 'hostile-notes' }).waitFor();
    await page.getByRole('region', { name: 'Quarantined' }).waitFor();
    const body = page.getByRole('region', { name: 'Rendered SKILL.md' });
    await body.getByText('bold').waitFor();
    await page.waitForTimeout(300); // an onerror handler would have fired by now, had it survived
    assert.equal(await page.evaluate(() => (globalThis as { __pwned?: string }).__pwned), undefined, 'nothing ran');
    assert.equal(await body.locator('script').count(), 0);
    assert.equal(await body.locator('[onerror]').count(), 0);
    assert.equal(await body.locator('a[href^="javascript:"]').count(), 0);
    assert.equal(await page.locator('#skill-activate').count(), 0, 'no activate button without skill.review');
    await keepScreenshot(page, 'console-skill');

    const skillId = page.url().split('/').at(-1)!;
    const refused = await stack.api.request('POST', `/api/v1/skills/${skillId}/activate`, { key });
    assert.equal(refused.status, 403, 'the API refuses it anyway');

    const reviewer = await signedIn(reviewerKey);
    await reviewer.goto(`${stack.url}/#/skills/${skillId}`);
    await reviewer.getByRole('region', { name: 'Quarantined' }).waitFor();
    await reviewer.locator('#skill-activate').click();
    await reviewer.locator('.card .pill', { hasText: 'active' }).first().waitFor();
    assert.equal(await reviewer.getByRole('region', { name: 'Quarantined' }).count(), 0, 'the banner is gone once active');
    const after = await stack.api.request('GET', `/api/v1/skills/${skillId}`, { key });
    assert.equal(after.body.status, 'active');
    await page.close();
    await reviewer.close();
  });

  it('edits a skill as a new version and shows the validator’s errors by field', async () => {
    const page = await signedIn();
    const { id } = await stack.api.createSkill(key, skillMd({ name: 'editable', tools: ['lab.lookup'] }));
    await page.goto(`${stack.url}/#/skills/${id}`);
    const source = page.getByRole('textbox', { name: 'SKILL.md' });
    await source.waitFor();
    await source.fill(['---', 'name: editable', 'description: ""', '---', 'Body.', ''].join('\n'));
    await page.getByRole('button', { name: 'Save as new version' }).click();
    await page.locator('.field-errors li', { hasText: 'description' }).waitFor();
    await source.fill(skillMd({ name: 'editable', tools: ['lab.lookup'], body: 'A second, better procedure.' }));
    await page.getByRole('button', { name: 'Save as new version' }).click();
    await page.getByRole('navigation', { name: 'Versions' }).getByRole('link', { name: /^v2\b/ }).waitFor();
    await page.getByText('A second, better procedure.').first().waitFor();
    await page.close();
  });

  it('creates a schedule paused, runs it now, follows the run to its mission, resumes, pauses and deletes it', async () => {
    stack.model.enqueue({ reply: { text: 'The scheduled report.' } });
    const page = await signedIn();
    await page.getByRole('link', { name: 'Schedules' }).click();
    await page.getByRole('heading', { name: 'Schedules', exact: true }).waitFor();
    await page.getByLabel('Skill').selectOption('scanner');
    await page.getByLabel('Objective').fill('Report every hour.');
    await page.getByLabel('Every (or a cron below)').fill('1h');
    await page.getByLabel('Start paused').check();
    await page.getByRole('button', { name: 'Create schedule' }).click();
    await page.getByRole('heading', { name: 'Schedule · scanner' }).waitFor();
    const head = page.locator('.card').first();
    await head.locator('.pill', { hasText: 'paused' }).waitFor();
    await page.getByText(/^Paused; once resumed, next: /).waitFor();

    await page.getByRole('button', { name: 'Run now' }).click();
    const run = page.getByRole('table', { name: 'Runs' }).locator('tbody tr', { has: page.locator('.pill', { hasText: 'started' }) });
    await run.waitFor({ timeout: 30_000 });
    await run.getByRole('link').click();
    await page.getByRole('heading', { name: /Mission · scanner/ }).waitFor();
    await page.getByText('The scheduled report.').first().waitFor();

    await page.goBack();
    await page.getByRole('button', { name: 'Resume' }).click();
    await head.locator('.pill', { hasText: 'active' }).waitFor();
    await page.getByText(/^Next: /).waitFor();
    await page.getByRole('button', { name: 'Pause' }).click();
    await head.locator('.pill', { hasText: 'paused' }).waitFor();
    const id = /#\/schedules\/([\w-]+)/.exec(page.url())![1]!;
    await page.getByRole('link', { name: '← Schedules' }).click();
    const row = page.locator(`tr[data-schedule-id="${id}"]`);
    await row.locator('.pill', { hasText: 'paused' }).waitFor();
    await row.getByRole('link', { name: 'Report every hour.' }).click();
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('heading', { name: 'Schedules', exact: true }).waitFor();
    assert.equal(await page.locator(`tr[data-schedule-id="${id}"]`).count(), 0, 'gone from the list');
    assert.equal((await stack.api.request('GET', `/api/v1/schedules/${id}`, { key })).status, 404);
    assert.deepEqual((page as Page & { problems: string[] }).problems, []);
    await page.close();
  });

  it('works at phone width with the keyboard alone', async () => {
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    await page.goto(stack.url);
    await page.keyboard.press('Tab'); // skip link
    await page.getByLabel('API key').focus();
    await page.keyboard.type(key);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Missions', exact: true }).waitFor();
    const overflow = await page.evaluate(() => {
      const g = globalThis as unknown as { document: { documentElement: { scrollWidth: number } }; innerWidth: number };
      return g.document.documentElement.scrollWidth - g.innerWidth;
    });
    assert.ok(overflow <= 1, `no horizontal scrolling at 390 px (overflow ${overflow} px)`);
    for (const control of ['Skill', 'Objective', 'Workspace']) await page.getByLabel(control).focus();
    await page.close();
  });
});
