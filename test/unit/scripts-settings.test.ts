import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../config/config.ts';
import { sandboxNotices } from '../../skill-scripts/host-notices.ts';
import { seccompDecision } from '../../skill-scripts/seccomp.ts';
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
        memoryTotalBytes: 6144 * 1024 * 1024,
        requireSeccomp: false,
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

  it('refuse a total for all scripts smaller than one script', () => {
    assert.throws(
      () => loadConfig({ SCRIPT_MEMORY_MB: '1024', SCRIPT_MEMORY_TOTAL_MB: '512' }),
      /SCRIPT_MEMORY_TOTAL_MB: must be at least/,
    );
    assert.throws(() => loadConfig({ SCRIPT_REQUIRE_SECCOMP: 'yes' }), /SCRIPT_REQUIRE_SECCOMP: must be true or false/);
  });

  it('run scripts without a seccomp filter only when SCRIPT_REQUIRE_SECCOMP is off, and say so at start', async () => {
    assert.ok(seccompDecision(true, 'x64').filter, 'x64 has a filter');
    assert.equal(seccompDecision(true, 'arm64').refusal, undefined);
    assert.deepEqual(seccompDecision(false, 'riscv64'), { filter: undefined });
    assert.match(
      seccompDecision(true, 'riscv64').refusal ?? '',
      /^no seccomp filter exists for the riscv64 architecture \(only x64, arm64\), and SCRIPT_REQUIRE_SECCOMP=true refuses/,
    );
    const warnings = async (env: Record<string, string>, arch: string) =>
      (await sandboxNotices(loadConfig(env).scripts, arch)).filter((n) => n.level === 'warn').map((n) => n.message);
    assert.ok(!(await warnings({}, 'x64')).some((m) => m.includes('seccomp')));
    assert.match(
      (await warnings({}, 'riscv64')).join('\n'),
      /no seccomp filter exists for the riscv64 architecture.*SCRIPT_REQUIRE_SECCOMP=true refuses/,
    );
    assert.match((await warnings({ SCRIPT_REQUIRE_SECCOMP: 'true' }, 'riscv64')).join('\n'), /run_skill_script refuses every script/);
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
