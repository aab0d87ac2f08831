import { createDatabase } from '../db/database.ts';
import { migrateToLatest } from '../db/migrator.ts';
import { createLogger } from '../lib/logger.ts';
import { resolveSecretCipher } from '../secrets/master-key.ts';
import { reencryptSecrets } from '../secrets/reencrypt.ts';
import { loadConfigOrExit } from '../wiring/process-config.ts';

// `npm run secrets:reencrypt`: after a rotation (SECRETS_MASTER_KEY=<new>,<old>...), seals every stored provider key
// under the first key; once it reports nothing unreadable, the old keys can be dropped. On DATABASE_URL, or on the
// embedded PGlite under DATA_DIR (with the master key the embedded stack keeps there when SECRETS_MASTER_KEY is unset).
const config = loadConfigOrExit(process.env);
if (config.secrets.backend === 'vault') {
  console.log('provider keys are kept in Vault (SECRETS_BACKEND=vault), which encrypts them itself: nothing to re-encrypt');
  process.exit(0);
}
const logger = createLogger({ level: config.logLevel });
const database = await createDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
try {
  await migrateToLatest(database.db);
  const cipher = await resolveSecretCipher({
    masterKeys: config.secrets.masterKeys,
    dataDir: config.dataDir,
    embedded: config.databaseUrl === undefined,
    logger,
  });
  if (!cipher) {
    process.stderr.write('cadenza: SECRETS_MASTER_KEY is not set: nothing to re-encrypt with\n');
    process.exitCode = 1;
  } else {
    const report = await reencryptSecrets(database.db, cipher);
    console.log(`re-encrypted ${report.resealed} provider key(s) under master key ${cipher.currentKeyId} on ${database.kind}`);
    for (const u of report.unreadable) {
      console.log(
        `  unreadable: ${u.scope} ${u.tenantId}${u.userId ? `/${u.userId}` : ''} ${u.provider} (sealed under ${u.keyId}, not in SECRETS_MASTER_KEY)`,
      );
    }
    if (report.unreadable.length > 0) process.exitCode = 2;
  }
} finally {
  await database.db.destroy();
}
