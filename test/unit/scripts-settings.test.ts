import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../config/config.ts';
import { createSystemTools, SYSTEM_TOOL_NAMES } from '../../tools/system/index.ts';

describe('script settings', () => {
  it('default to the documented limits and a read-only callback tool', () => {
    const { scripts } = loadConfig({});
    assert.deepEqual(
      { ...scripts, toolAllowlist: [...scripts.toolAllowlist] },
      {
        timeoutS: 30,
        cpuS: 30,
        memoryBytes: 2048 * 1024 * 1024,
        maxProcesses: 64,
        maxOpenFiles: 128,
        maxOutputBytes: 1024 * 1024,
        tmpfsBytes: 64 * 1024 * 1024,
        maxToolCalls: 20,
        toolAllowlist: ['search_memory'],
        python: 'python3',
        node: undefined,
      },
    );
  });

  it('read the allowlist space- or comma-separated, and refuse what is not a tool name', () => {
    assert.deepEqual(loadConfig({ SCRIPT_TOOL_ALLOWLIST: 'search_memory, use_skill' }).scripts.toolAllowlist, [
      'search_memory',
      'use_skill',
    ]);
    assert.deepEqual(loadConfig({ SCRIPT_TOOL_ALLOWLIST: '' }).scripts.toolAllowlist, []);
    assert.throws(
      () => loadConfig({ SCRIPT_TOOL_ALLOWLIST: 'lab.scan' }),
      (e: Error) => e instanceof ConfigError && /SCRIPT_TOOL_ALLOWLIST/.test(e.message),
    );
    assert.throws(() => loadConfig({ SCRIPT_TIMEOUT_S: '0' }), /SCRIPT_TIMEOUT_S/);
  });

  it('refuse at start-up an allowlist naming a tool a script may not call, run_skill_script itself included', () => {
    const settings = (list: string) => loadConfig({ SCRIPT_TOOL_ALLOWLIST: list }).scripts;
    assert.throws(
      () => createSystemTools(settings('run_skill_script')),
      /SCRIPT_TOOL_ALLOWLIST: run_skill_script is not a system tool a script may call/,
    );
    assert.throws(() => createSystemTools(settings('delete_everything')), /delete_everything/);
    const tools = createSystemTools(settings('search_memory'));
    assert.deepEqual(
      tools.list().map((t) => t.name),
      [...SYSTEM_TOOL_NAMES],
    );
    assert.ok(tools.get('system.run_skill_script'), 'every mission is offered run_skill_script');
  });
});
