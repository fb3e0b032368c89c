/**
 * Runs the labelled evaluation set through the matcher and reports precision and recall of
 * `match: true` and top-5 recall (docs/match.md, "Evaluation"). test/match-evaluation.test.ts
 * asserts the goals; run it directly to see the figures and the misses:
 *
 *   node --import tsx bench/match-eval/evaluate.ts [--misses]
 */
import { readFileSync } from 'node:fs';
import { matchQuery } from '../../src/modules/match/matcher.ts';
import { prepareQuery } from '../../src/modules/match/scoring.ts';
import type { EvalQuery } from './generate.ts';
import { buildSyntheticMatchRegistry, type SyntheticMatchRegistry } from './registry.ts';

export interface EvalFile {
  registry: { seed: number; size: number; date: string };
  queries: EvalQuery[];
}

export interface EvalReport {
  queries: number;
  ambiguous: number;
  negatives: number;
  /** match: true given */
  matched: number;
  correctMatches: number;
  precision: number;
  /** Of queries with a company meant and not ambiguous: the match was that company. */
  recall: number;
  /** Same queries: the company meant is among the candidates. */
  top5Recall: number;
  misses: { query: EvalQuery; got: string | null; top: { nip: string; score: number; features: string[] }[] }[];
}

export function readEvalFile(): EvalFile {
  return JSON.parse(readFileSync(new URL('./queries.json', import.meta.url), 'utf8')) as EvalFile;
}

export function evaluate(registry: SyntheticMatchRegistry, queries: readonly EvalQuery[]): EvalReport {
  let matched = 0;
  let correct = 0;
  let answerable = 0;
  let recalled = 0;
  let inTop5 = 0;
  const misses: EvalReport['misses'] = [];
  for (const e of queries) {
    const outcome = matchQuery(registry.index, prepareQuery(e.query));
    const nips = outcome.candidates.map((c) => registry.nips[c.candidate.id]!);
    const got = outcome.match >= 0 ? nips[outcome.match]! : null;
    if (got !== null) {
      matched++;
      if (got === e.expected) correct++;
    }
    const isAnswerable = e.expected !== null && !e.ambiguous;
    if (isAnswerable) {
      answerable++;
      if (got === e.expected) recalled++;
      if (nips.includes(e.expected!)) inTop5++;
    }
    if ((got !== null && got !== e.expected) || (isAnswerable && got !== e.expected)) {
      misses.push({ query: e, got, top: outcome.candidates.map((c, i) => ({ nip: nips[i]!, score: c.score, features: c.features })) });
    }
  }
  return {
    queries: queries.length,
    ambiguous: queries.filter((e) => e.ambiguous).length,
    negatives: queries.filter((e) => e.expected === null).length,
    matched,
    correctMatches: correct,
    precision: matched === 0 ? 1 : correct / matched,
    recall: answerable === 0 ? 1 : recalled / answerable,
    top5Recall: answerable === 0 ? 1 : inTop5 / answerable,
    misses,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const file = readEvalFile();
  const registry = await buildSyntheticMatchRegistry(file.registry);
  const t0 = performance.now();
  const report = evaluate(registry, file.queries);
  const ms = performance.now() - t0;
  const { misses, ...figures } = report;
  console.log(JSON.stringify({ ...figures, ms: Math.round(ms) }));
  if (process.argv.includes('--misses')) for (const m of misses) console.log(JSON.stringify(m));
}
