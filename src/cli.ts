import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { createLogger } from './logger.ts';

/**
 * The `regwatch` command (bin/regwatch.js). Parsing and usage are commander's; each command is a
 * function taking the loaded configuration and typed options, imported only when it runs (so
 * `regwatch daily` never loads Fastify). Exit codes: 0 success, 1 failure, 2 usage error,
 * 78 invalid configuration (EX_CONFIG).
 */

const EXIT_USAGE = 2;
const EXIT_CONFIG = 78;

function integer(value: string): number {
  const n = Number(value);
  if (!/^-?\d+$/.test(value.trim()) || !Number.isSafeInteger(n)) throw new InvalidArgumentError('Not an integer.');
  return n;
}

/** Loads the configuration, or reports every problem and exits 78. */
function configOrExit(): Config {
  try {
    return loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(e.message);
      process.exit(EXIT_CONFIG);
    }
    throw e;
  }
}

async function migrateCommand(config: Config): Promise<number> {
  const { openRuntime } = await import('./runtime.ts');
  const { migrateToLatest } = await import('./db/migrate.ts');
  const rt = await openRuntime(config, createLogger(config.logLevel), { migrate: false, poolSize: 2 });
  try {
    const applied = await migrateToLatest(rt.database.db, rt.database.pool);
    console.log(applied.length ? `Applied ${applied.length} migration(s): ${applied.join(', ')}` : 'Database is up to date.');
    return 0;
  } finally {
    await rt.close();
  }
}

function buildProgram(run: (name: string, command: (config: Config) => Promise<number>) => Promise<void>): Command {
  const program = new Command('regwatch')
    .description('The regwatch service and its operator commands. Configuration comes from the environment (see docs/configuration.md).')
    .exitOverride()
    .showHelpAfterError()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) });

  program
    .command('serve')
    .description('run the service (API, workers and scheduler per ROLE)')
    .action(() => run('serve', async (config) => (await import('./server.ts')).serveCommand(config)));

  program
    .command('migrate')
    .description('apply database migrations and exit')
    .action(() => run('migrate', migrateCommand));

  program
    .command('daily')
    .description('run the daily change detection for a date')
    .option('--date <YYYY-MM-DD>', 'the day the run records as event_date')
    .option('--source <SRC>', 'file:PATH | synthetic[:SEED] | krs | bir | ceidg | vat')
    .option('--batch-size <N>', 'companies a transaction (1 to 50000)', integer)
    .action((opts: { date?: string; source?: string; batchSize?: number }) =>
      run('daily', async (config) => (await import('./registry/commands.ts')).dailyCommand(config, opts)),
    );

  program
    .command('seed')
    .description('load N generated companies')
    .option('--synthetic <N>', 'how many companies to generate')
    .option('--seed <S>', 'the generator seed (default: a random one)')
    .option('--date <YYYY-MM-DD>', 'the day the load records (default: today)')
    .action((opts: { synthetic?: string; seed?: string; date?: string }) =>
      run('seed', async (config) => (await import('./registry/commands.ts')).seedCommand(config, opts)),
    );

  program
    .command('wallet')
    .description('wallet operations: `wallet audit` checks that every ledger sums to its balance')
    .argument('[args...]')
    .action((args: string[]) =>
      run('wallet', async (config) => (await import('./modules/wallet/commands.ts')).walletCommand({ config, argv: args })),
    );

  program
    .command('mcp')
    .description(
      'an MCP server on stdio relaying to a regwatch server (REGWATCH_URL, default http://127.0.0.1:3000; REGWATCH_TOKEN): see docs/mcp.md',
    )
    .action(async () => {
      process.exitCode = await mcpCommand({ url: process.env.REGWATCH_URL, token: process.env.REGWATCH_TOKEN });
    });

  return program;
}

/** Needs no server configuration: only where the server is and the token to present (docs/mcp.md). */
async function mcpCommand(env: { url?: string; token?: string }): Promise<number> {
  const url = env.url?.trim() || 'http://127.0.0.1:3000';
  const token = env.token;
  if (!token?.trim()) {
    console.error('regwatch mcp: set REGWATCH_TOKEN to an API token (sk_api_…) or the Master Token of your account.');
    return EXIT_CONFIG;
  }
  const { endpointOf, runStdioBridge } = await import('./modules/mcp/bridge.ts');
  try {
    endpointOf(url);
  } catch {
    console.error(`regwatch mcp: REGWATCH_URL is not an http(s) URL: ${url}`);
    return EXIT_CONFIG;
  }
  return runStdioBridge({ url, token: token.trim(), warn: (line) => console.error(line) });
}

export async function main(argv: string[]): Promise<void> {
  let logLevel = 'info';
  const run = async (name: string, command: (config: Config) => Promise<number>) => {
    const config = configOrExit();
    logLevel = config.logLevel;
    try {
      process.exitCode = await command(config);
    } catch (e) {
      console.error(`regwatch ${name}: ${e instanceof Error ? e.message : String(e)}`);
      if (logLevel === 'debug' && e instanceof Error) console.error(e.stack);
      process.exitCode = 1;
    }
  };
  const program = buildProgram(run);
  if (argv.length === 0) {
    program.outputHelp({ error: true });
    process.exitCode = EXIT_USAGE;
    return;
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (e) {
    if (!(e instanceof CommanderError)) throw e;
    // Help and version are successes; anything else commander refused is a usage error.
    process.exitCode =
      e.code === 'commander.helpDisplayed' || e.code === 'commander.help' || e.code === 'commander.version' ? 0 : EXIT_USAGE;
  }
}
