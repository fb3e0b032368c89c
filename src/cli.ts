import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { createLogger } from './logger.ts';

const USAGE = `Usage: regwatch <command> [options]

Commands:
  serve                                   run the service (API, workers and scheduler per ROLE)
  migrate                                 apply database migrations and exit
  daily --date YYYY-MM-DD --source SRC    run the daily change detection for a date
                                          SRC: file:PATH | synthetic[:SEED] | krs | bir | ceidg | vat
  seed --synthetic N [--seed S]           load N generated companies
  wallet audit                            check that every wallet's ledger sums to its balance

Configuration comes from the environment (see docs/configuration.md).`;

export interface CommandContext {
  config: Config;
  argv: string[];
}

type Command = (ctx: CommandContext) => Promise<number>;

const commands: Record<string, () => Promise<Command>> = {
  serve: async () => (await import('./server.ts')).serveCommand,
  migrate: async () => migrateCommand,
  daily: async () => (await import('./registry/commands.ts')).dailyCommand,
  seed: async () => (await import('./registry/commands.ts')).seedCommand,
  wallet: async () => (await import('./modules/wallet/commands.ts')).walletCommand,
};

async function migrateCommand({ config }: CommandContext): Promise<number> {
  const { openRuntime } = await import('./runtime.ts');
  const logger = createLogger(config.logLevel);
  const rt = await openRuntime(config, logger, { migrate: false, poolSize: 2 });
  try {
    const { migrateToLatest } = await import('./db/migrate.ts');
    const applied = await migrateToLatest(rt.database.db, rt.database.pool);
    console.log(applied.length ? `Applied ${applied.length} migration(s): ${applied.join(', ')}` : 'Database is up to date.');
    return 0;
  } finally {
    await rt.close();
  }
}

export async function main(argv: string[]): Promise<void> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    console.log(USAGE);
    process.exitCode = name ? 0 : 2;
    return;
  }
  const load = commands[name];
  if (!load) {
    console.error(`regwatch: unknown command "${name}"\n\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  let config: Config;
  try {
    config = loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(e.message);
      process.exitCode = 78; // EX_CONFIG
      return;
    }
    throw e;
  }
  try {
    const command = await load();
    process.exitCode = await command({ config, argv: rest });
  } catch (e) {
    console.error(`regwatch ${name}: ${e instanceof Error ? e.message : String(e)}`);
    if (process.env.LOG_LEVEL === 'debug' && e instanceof Error) console.error(e.stack);
    process.exitCode = 1;
  }
}

/** Shared by commands: parse options strictly, so a typo is an error, not a silent default. */
export function parseCommandArgs<T extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: T) {
  return parseArgs({ args: argv, options, strict: true, allowPositionals: true });
}
