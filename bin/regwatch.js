#!/usr/bin/env -S node --no-memory-reducer --v8-pool-size=0
// The regwatch command. Sources are TypeScript run through tsx, so no build step is needed.
// V8's memory reducer off and its helper threads sized to the cores, for an API process's sake
// (src/lib/collector.ts); harmless elsewhere.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli.ts');
await main(process.argv.slice(2));
