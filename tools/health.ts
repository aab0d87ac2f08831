import type { AppProvider } from './app-definition.ts';
import { fillTemplate } from './env-template.ts';

/** The last probe of each provider's `health:` URL, probed again once older than its `interval_s`. */
export interface HealthMonitor {
  /** Whether the provider's last probe passed (true for a provider with no probe); probes when the result is stale. */
  passing(provider: AppProvider): Promise<boolean>;
}

type Probe = { passed: boolean; at: number };

/** One monitor per process; `env` fills `${NAME}` in probe URLs. A probe passes on any 2xx answer within its timeout. */
export function createHealthMonitor(opts: { env: Record<string, string | undefined>; now?: () => number }): HealthMonitor {
  const now = opts.now ?? Date.now;
  const last = new Map<string, Probe>();
  const inFlight = new Map<string, Promise<boolean>>();

  async function probe(url: string, timeoutS: number): Promise<boolean> {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(timeoutS * 1000) });
      await res.body?.cancel();
      return res.ok;
    } catch {
      return false;
    }
  }

  return {
    async passing(provider) {
      const health = provider.health;
      if (!health) return true;
      const url = fillTemplate(health.url, { env: opts.env });
      if (!url.ok) return false;
      const key = `${provider.id} ${url.value}`;
      const cached = last.get(key);
      if (cached && now() - cached.at < health.intervalS * 1000) return cached.passed;
      // Missions prepared at the same moment share one probe.
      let running = inFlight.get(key);
      if (!running) {
        running = probe(url.value, health.timeoutS).then((passed) => {
          last.set(key, { passed, at: now() });
          inFlight.delete(key);
          return passed;
        });
        inFlight.set(key, running);
      }
      return running;
    },
  };
}
