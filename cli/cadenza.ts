#!/usr/bin/env node
import { Command, CommanderError } from 'commander';
import { createCliApi, type CliApi } from './api.ts';
import { addCommands } from './commands.ts';
import { addScheduleCommands } from './schedule-commands.ts';
import { addWebhookCommands } from './webhook-commands.ts';
import { CliError, EXIT } from './exit-codes.ts';
import { loadSettings } from './settings.ts';

// `cadenza`: the command line over the public HTTP API (CADENZA_URL, CADENZA_API_KEY or a config file).
let exitCode: number = EXIT.ok;
let api: CliApi | undefined;
const program = new Command()
  .name('cadenza')
  .description(
    'Cadenza from the command line, over its HTTP API.\n' +
      'Reads CADENZA_URL (default http://127.0.0.1:8080), CADENZA_API_KEY and CADENZA_ADMIN_KEY, or the config file\n' +
      'CADENZA_CONFIG (default ~/.config/cadenza/config.json: {"url", "apiKey", "adminKey"}).\n' +
      'Exit status: 0 ok · 1 mission failed · 2 usage · 3 auth · 4 not found · 5 refused · 6 unavailable · 7 mission cancelled · 130 detached',
  )
  .showHelpAfterError()
  .exitOverride();
addCommands(
  program,
  () => (api ??= createCliApi(loadSettings(process.env))),
  (code) => (exitCode = code),
);
addScheduleCommands(program, () => (api ??= createCliApi(loadSettings(process.env))));
addWebhookCommands(program, () => (api ??= createCliApi(loadSettings(process.env))));
program.commands.forEach(function override(c: Command) {
  c.exitOverride();
  c.commands.forEach(override);
});

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    exitCode =
      err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help' ? EXIT.ok : EXIT.usage;
  } else if (err instanceof CliError) {
    process.stderr.write(`cadenza: ${err.message}\n`);
    exitCode = err.exitCode;
  } else {
    process.stderr.write(`cadenza: ${(err as Error).stack ?? String(err)}\n`);
    exitCode = EXIT.missionFailed;
  }
}
process.exit(exitCode);
