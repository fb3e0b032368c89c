/**
 * House rules the type checker cannot see (STYLE.md). `npm run lint` runs tsc first, then this.
 * - no `.only(` left in a test;
 * - nothing under src/ reads process.env except config.ts and the CLI entry (config is passed in);
 * - src/ never imports from test/ or bench/.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

function files(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) files(p, out);
    else if (p.endsWith('.ts')) out.push(p);
  }
  return out;
}

const problems: string[] = [];
for (const f of [...files('src'), ...files('test')]) {
  const text = readFileSync(f, 'utf8');
  text.split('\n').forEach((line, i) => {
    const at = `${f}:${i + 1}`;
    if (/\b(test|it|describe|suite)\.only\(/.test(line) || /\{\s*only:\s*true/.test(line)) problems.push(`${at}: .only left in a test`);
    if (f.startsWith('src') && !f.endsWith('.test.ts')) {
      if (/process\.env\b/.test(line) && !['src/config.ts', 'src/cli.ts'].includes(f)) problems.push(`${at}: process.env read outside src/config.ts (pass config in)`);
      if (/from '(\.\.\/)+(test|bench)\//.test(line)) problems.push(`${at}: src imports from test/ or bench/`);
    }
  });
}
if (problems.length) {
  console.error(problems.join('\n'));
  console.error(`\n${problems.length} problem(s)`);
  process.exit(1);
}
console.log('lint: ok');
