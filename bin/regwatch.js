#!/usr/bin/env -S node --no-memory-reducer --v8-pool-size=0
// The regwatch command. Sources are TypeScript run through tsx, so no build step is needed.
// V8's memory reducer off and its helper threads sized to the cores, for an API process's sake
// (src/lib/collector.ts); harmless elsewhere.
import { register } from 'tsx/esm/api';

// The dependencies every command but `mcp` loads (configuration, logging, database, migrations)
// are loaded here, by Node.js's own loader, before tsx's hooks are registered: through the hooks
// each of their files costs about three times as much (kysely 330 against 100 ms), about 0.5 s
// of CPU of every command's start (docs/benchmarks.md, "The 1 % day"). The TypeScript modules
// importing them get these same instances (one module map).
if (process.argv[2] !== 'mcp') {
  await Promise.all(
    ['commander', '@sinclair/typebox', '@sinclair/typebox/value', 'pino', 'kysely', 'pg', 'graphile-worker'].map((m) => import(m)),
  );
}
register();
const { main } = await import('../src/cli.ts');
await main(process.argv.slice(2));
