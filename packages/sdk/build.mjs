// `npm run build -w @regwatch/sdk`: ESM (dist/esm) and CommonJS (dist/cjs) with declarations,
// by the TypeScript compiler the repository already uses (TypeScript 7), run twice. tsc is enough
// for a library of plain modules and keeps the output file-for-file readable; a bundler would add a
// dependency for nothing here. dist/cjs gets a package.json saying "commonjs" so that Node and
// TypeScript read its .js and .d.ts files as CommonJS inside this "type": "module" package.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const tsc = join(dirname(createRequire(import.meta.url).resolve('@typescript/native/package.json')), 'bin', 'tsc');

rmSync(join(here, 'dist'), { recursive: true, force: true });
for (const project of ['tsconfig.build.json', 'tsconfig.build-cjs.json']) {
  execFileSync(process.execPath, [tsc, '-p', join(here, project)], { stdio: 'inherit' });
}
mkdirSync(join(here, 'dist', 'cjs'), { recursive: true });
writeFileSync(join(here, 'dist', 'cjs', 'package.json'), '{ "type": "commonjs" }\n');
