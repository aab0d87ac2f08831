import { Option, type Command } from 'commander';
import type { CliApi, Json } from './api.ts';
import { printObject, printRows } from './output.ts';

const json = () => new Option('--json', 'print JSON for scripts');
const enc = encodeURIComponent;
const state = (w: Json) => (w.disabled ? `disabled: ${w.disabled.reason}` : 'enabled');

/** `cadenza webhooks …`: Standard Webhooks endpoints, through the public API like every other command. */
export function addWebhookCommands(program: Command, api: () => CliApi): void {
  const webhooks = program
    .command('webhooks')
    .description('list, create, show and delete webhook endpoints; their deliveries; redeliver, rotate-secret, test');
  webhooks
    .command('list')
    .description('your webhook endpoints')
    .addOption(json())
    .action(async (o) => {
      const page = await api().json('GET', '/api/v1/webhooks');
      printRows(
        page.items.map((w: Json) => ({ ...w, events: w.events.join(','), state: state(w) })),
        ['id', 'url', 'events', 'state'],
        o.json,
        page,
      );
    });
  webhooks
    .command('create')
    .description('register an endpoint; its signing secret is printed once')
    .argument('<url>', 'https URL that receives the POSTs')
    .requiredOption('--events <list>', 'comma-separated: mission.completed,mission.failed,mission.cancelled,mission.idle,…')
    .option('--description <text>', 'what it is for')
    .addOption(json())
    .action(async (url: string, o) => {
      const body = {
        url,
        events: String(o.events)
          .split(',')
          .map((e) => e.trim()),
        ...(o.description ? { description: o.description } : {}),
      };
      const w = await api().json('POST', '/api/v1/webhooks', { json: body });
      printObject(o.json ? w : { id: w.id, url: w.url, events: w.events.join(','), secret: w.secret }, o.json);
    });
  webhooks
    .command('get')
    .description('an endpoint and whether it is disabled (why)')
    .argument('<id>', 'webhook id')
    .addOption(json())
    .action(async (id: string, o) => {
      const w = await api().json('GET', `/api/v1/webhooks/${enc(id)}`);
      printObject(o.json ? w : { id: w.id, url: w.url, events: w.events.join(','), state: state(w) }, o.json);
    });
  webhooks
    .command('deliveries')
    .description("an endpoint's deliveries, newest first")
    .argument('<id>', 'webhook id')
    .option('--cursor <cursor>', 'the nextCursor of a previous page')
    .addOption(json())
    .action(async (id: string, o) => {
      const page = await api().json('GET', `/api/v1/webhooks/${enc(id)}/deliveries${o.cursor ? `?cursor=${enc(o.cursor)}` : ''}`);
      printRows(page.items, ['id', 'type', 'status', 'attempts', 'lastStatusCode', 'lastDurationMs', 'nextAttemptAt'], o.json, page);
      if (!o.json && page.nextCursor) process.stdout.write(`more: --cursor ${page.nextCursor}\n`);
    });
  webhooks
    .command('redeliver')
    .description('send a delivery again, with the same webhook-id')
    .argument('<id>', 'webhook id')
    .argument('<deliveryId>', 'delivery id (msg_…)')
    .addOption(json())
    .action(async (id: string, deliveryId: string, o) =>
      printObject(await api().json('POST', `/api/v1/webhooks/${enc(id)}/deliveries/${enc(deliveryId)}/redeliver`), o.json),
    );
  webhooks
    .command('rotate-secret')
    .description('a new signing secret (printed once); the old one signs beside it for 24 hours')
    .argument('<id>', 'webhook id')
    .addOption(json())
    .action(async (id: string, o) => {
      const w = await api().json('POST', `/api/v1/webhooks/${enc(id)}/rotate-secret`);
      printObject(o.json ? w : { id: w.id, secret: w.secret, previousSecretExpiresAt: w.previousSecretExpiresAt }, o.json);
    });
  webhooks
    .command('test')
    .description('send a webhook.test event to the endpoint')
    .argument('<id>', 'webhook id')
    .addOption(json())
    .action(async (id: string, o) => printObject(await api().json('POST', `/api/v1/webhooks/${enc(id)}/test`), o.json));
  webhooks
    .command('delete')
    .description('delete an endpoint and its deliveries')
    .argument('<id>', 'webhook id')
    .addOption(json())
    .action(async (id: string, o) => {
      await api().json('DELETE', `/api/v1/webhooks/${enc(id)}`);
      printObject({ id, status: 'deleted' }, o.json);
    });
}
