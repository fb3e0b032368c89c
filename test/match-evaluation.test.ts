import { test } from 'node:test';
import assert from 'node:assert/strict';
import { evaluate, readEvalFile } from '../bench/match-eval/evaluate.ts';
import { buildSyntheticMatchRegistry } from '../bench/match-eval/registry.ts';

/**
 * The labelled evaluation set (bench/match-eval/queries.json, made by generate.ts from the
 * synthetic registry) through the matcher, held to the goals of docs/match.md, "Evaluation".
 */
test('evaluation set: precision of match:true >= 0.98, recall >= 0.90, top-5 recall >= 0.97', async () => {
  const file = readEvalFile();
  assert.ok(file.queries.length >= 500, 'at least 500 labelled queries');
  const kinds = new Set(file.queries.map((q) => q.corruptions[0]));
  for (const k of [
    'legal_form',
    'diacritics',
    'swapped_words',
    'joined_words',
    'business_form',
    'typo',
    'missing_city',
    'wrong_postal_code',
    'shared_name',
    'not_in_registry',
  ])
    assert.ok(kinds.has(k), `has ${k} queries`);
  const registry = await buildSyntheticMatchRegistry(file.registry);
  const report = evaluate(registry, file.queries);
  const { misses, ...figures } = report;
  const detail = `${JSON.stringify(figures)}\nfirst misses: ${JSON.stringify(misses.slice(0, 3))}`;
  assert.ok(report.precision >= 0.98, detail);
  assert.ok(report.recall >= 0.9, detail);
  assert.ok(report.top5Recall >= 0.97, detail);
  // Two words written as one (`AutoMax` for `AUTO MAX`: compounds.ts) and a business form written
  // out (`Przedsiębiorstwo Handlowo-Usługowe` for `PHU`: business-forms.ts): each missed at most once in ten.
  for (const kind of ['joined_words', 'business_form']) {
    const queries = file.queries.filter((q) => q.corruptions[0] === kind && q.expected !== null && !q.ambiguous);
    const missed = misses.filter((m) => m.query.corruptions[0] === kind);
    assert.ok(queries.length >= 20, `at least 20 ${kind} queries`);
    assert.ok(missed.length <= 0.1 * queries.length, `${kind}: ${missed.length} of ${queries.length} missed`);
  }
});
