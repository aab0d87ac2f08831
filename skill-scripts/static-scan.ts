import { extname } from 'node:path';
import type { ZipFile } from '../skills/zip-reader.ts';

/** One thing the scan noticed in a bundle file, for the reviewer; advice only (the sandbox is the defence). */
import type { ScanFinding } from '../db/schema.ts';

export type { ScanFinding };

const SCANNED = new Set(['.py', '.js', '.mjs', '.cjs', '.ts', '.sh', '.bash', '.rb', '.pl']);
// Minified or packed code hides what it does; a line this long is worth a look.
const LONG_LINE = 1_000;

type Rule = { kind: ScanFinding['kind']; pattern: RegExp; message: string };
const RULES: Rule[] = [
  {
    kind: 'network',
    pattern: /\b(?:import|from)\s+(socket|requests|urllib\d?|http\.client|httpx|aiohttp|ftplib|smtplib|websocket)\b/,
    message: 'imports the network module $1 (the sandbox has no network)',
  },
  {
    kind: 'network',
    pattern:
      /\brequire\(\s*['"](?:node:)?(net|http|https|dgram|tls|http2)['"]\s*\)|from\s+['"](?:node:)?(net|http|https|dgram|tls|http2)['"]|\bfetch\s*\(/,
    message: 'uses the network ($1$2) (the sandbox has no network)',
  },
  {
    kind: 'process',
    pattern: /\b(?:import\s+(subprocess|pty)|from\s+(subprocess|pty)\s+import|os\.(system|popen|exec\w*|spawn\w*|fork))\b/,
    message: 'starts processes ($1$2$3)',
  },
  {
    kind: 'process',
    pattern: /['"](?:node:)?child_process['"]|\bcurl\s|\bwget\s/,
    message: 'starts processes or downloads',
  },
  {
    kind: 'obfuscation',
    pattern:
      /\b(?:eval|exec|compile)\s*\(|__import__\s*\(|new\s+Function\s*\(|\bb64decode\s*\(|\batob\s*\(|Buffer\.from\([^)]*['"]base64['"]/,
    message: 'evaluates generated code or decodes hidden data',
  },
  { kind: 'obfuscation', pattern: /(?:\\x[0-9a-fA-F]{2}){16,}/, message: 'holds a long hex-escaped string' },
  {
    kind: 'secret',
    pattern:
      /AKIA[0-9A-Z]{16}|-----BEGIN (?:RSA |EC |OPENSSH |DSA )?PRIVATE KEY-----|\bsk-[A-Za-z0-9_-]{20,}|\bgh[pousr]_[A-Za-z0-9]{30,}|\bxox[abprs]-[A-Za-z0-9-]{10,}/,
    message: 'holds what looks like a hard-coded credential',
  },
  {
    kind: 'secret',
    pattern: /\b(?:api[_-]?key|secret|token|password|passwd)\s*[:=]\s*['"][^'"\s]{12,}['"]/i,
    message: 'assigns what looks like a hard-coded secret',
  },
];

/** Scans a bundle's code files line by line (one finding per rule and file: the first line it matched). */
export function scanBundle(files: ZipFile[]): ScanFinding[] {
  const findings: ScanFinding[] = [];
  for (const file of files) {
    if (!SCANNED.has(extname(file.path).toLowerCase())) continue;
    const lines = file.data.toString('utf8').split('\n');
    const seen = new Set<string>();
    const add = (finding: ScanFinding) => {
      if (seen.has(finding.message)) return;
      seen.add(finding.message);
      findings.push(finding);
    };
    lines.forEach((text, i) => {
      if (text.length > LONG_LINE)
        add({
          file: file.path,
          line: i + 1,
          kind: 'obfuscation',
          message: `has lines over ${LONG_LINE} characters (minified or packed code)`,
        });
      for (const rule of RULES) {
        const match = rule.pattern.exec(text);
        if (!match) continue;
        const message = rule.message.replace(/\$(\d)/g, (_, n: string) => match[Number(n)] ?? '');
        add({ file: file.path, line: i + 1, kind: rule.kind, message });
      }
    });
  }
  return findings;
}
