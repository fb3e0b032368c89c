import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createSyntheticSource } from '../../registry/sources/synthetic.ts';
import type { MatchIndex, MatchRow } from './match-index.ts';
import { MatchIndexBuilder } from './match-index-builder.ts';
import { matchQuery, type MatchOutcome } from './matcher.ts';
import { matchRowOfSnapshot } from './rows.ts';
import { prepareQuery, type MatchQuery } from './scoring.ts';

/**
 * A match index that took companies as a delta (added, changed, removed after its build) answers
 * as an index rebuilt over the same companies would: the same candidates, with the same scores.
 * (A delta once brought in every company holding a word of three letters or fewer, or of four to
 * seven for a query word of eight or more, as a "misspelling" of every query word: candidates of
 * score 0 with no feature.)
 */

const BUILT = 1_500;
const ADDED = 300;

/** The synthetic registry's first `n` companies as match rows, ids 1..n. */
async function syntheticRows(n: number): Promise<MatchRow[]> {
  const rows: MatchRow[] = [];
  let id = 0;
  for await (const s of createSyntheticSource({ seed: 7, size: n }).allSnapshots('2026-12-01')) rows.push(matchRowOfSnapshot(++id, s));
  return rows;
}

async function buildOf(rows: readonly MatchRow[]): Promise<MatchIndex> {
  const b = new MatchIndexBuilder();
  for (const r of [...rows].sort((a, b) => a.id - b.id)) b.add(r);
  return b.build();
}

/** Deterministic: xorshift32. */
function prng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 2 ** 32;
  };
}

function summary(o: MatchOutcome) {
  return {
    match: o.match,
    candidates: o.candidates.map((c) => ({ id: c.candidate.id, score: c.score, features: c.features, identifier: c.identifier })),
  };
}

/** A word with its middle letter dropped: one typo for the words that allow one. */
const typo = (w: string) => (w.length >= 5 ? w.slice(0, w.length >> 1) + w.slice((w.length >> 1) + 1) : w);

function queriesFor(rows: readonly MatchRow[], random: () => number, count: number): MatchQuery[] {
  const out: MatchQuery[] = [{ name: 'krakcom budownictwo' }, { name: 'cantabile' }, { name: 'budownictwo' }, { name: 'zzzzqqq wwwwxxx' }];
  const pick = () => rows[Math.floor(random() * rows.length)]!;
  while (out.length < count) {
    const r = pick();
    if (r.tokens.length === 0) continue;
    const kind = out.length % 5;
    const name =
      kind === 0
        ? r.tokens.join(' ')
        : kind === 1
          ? r.tokens.map(typo).join(' ')
          : kind === 2
            ? r.tokens[0]!
            : kind === 3
              ? [...r.tokens].reverse().join(' ')
              : `${r.tokens.at(-1)!} ${pick().tokens[0] ?? ''}`;
    out.push(kind === 0 || kind === 3 ? { name, city: r.city ?? undefined } : { name });
  }
  return out;
}

function assertSameAnswers(delta: MatchIndex, rebuilt: MatchIndex, queries: readonly MatchQuery[]): void {
  assert.equal(delta.companies, rebuilt.companies);
  for (const q of queries) {
    const p = prepareQuery(q);
    const got = summary(matchQuery(delta, p));
    assert.deepEqual(got, summary(matchQuery(rebuilt, p)), `query ${JSON.stringify(q)}`);
    for (const c of got.candidates) assert.ok(c.score > 0 || c.identifier, `a candidate of score 0 for ${JSON.stringify(q)}`);
    for (const t of p.tokens) {
      assert.equal(delta.weightOf(t), rebuilt.weightOf(t), `weight of ${t}`);
      const words = (i: MatchIndex) =>
        i
          .variantsOf(t)
          .map((v) => `${v.token}:${v.distance}`)
          .sort();
      assert.deepEqual(words(delta), words(rebuilt), `variants of ${t}`);
    }
  }
}

describe('match index: a delta answers as a rebuild', () => {
  test('companies added after the build', async () => {
    const rows = await syntheticRows(BUILT + ADDED);
    const index = await buildOf(rows.slice(0, BUILT));
    for (const r of rows.slice(BUILT)) index.upsert(r);
    const rebuilt = await buildOf(rows);
    assertSameAnswers(index, rebuilt, queriesFor(rows, prng(1), 400));

    // The auditor's case: a name that only one company holds, asked for beside a delta, gets that
    // company with score 1, and no delta company sharing no word with it.
    const key = (r: MatchRow) => [...r.tokens].sort().join(' ');
    const names = new Map<string, number>();
    for (const r of rows) names.set(key(r), (names.get(key(r)) ?? 0) + 1);
    const one = rows.find((r) => r.id <= BUILT && r.status === 'ACTIVE' && r.tokens.length >= 2 && names.get(key(r)) === 1)!;
    const o = matchQuery(index, prepareQuery({ name: one.tokens.join(' ') }));
    assert.equal(o.candidates[0]?.candidate.id, one.id);
    assert.equal(o.candidates[0]?.score, 1);
    for (const c of o.candidates) assert.ok(c.score > 0 && c.candidate.tokens.length > 0, JSON.stringify(c));
  });

  /** The registry's rows, the first BUILT built and the rest added, then 250 changes as a delta. */
  async function changed(seed: number) {
    const rows = await syntheticRows(BUILT + ADDED);
    const random = prng(seed);
    const index = await buildOf(rows.slice(0, BUILT));
    const current = new Map<number, MatchRow>(rows.slice(0, BUILT).map((r) => [r.id, r]));
    const apply = (r: MatchRow) => {
      index.upsert(r);
      current.set(r.id, r);
    };
    for (const r of rows.slice(BUILT)) apply(r);
    const anyRow = () => rows[Math.floor(random() * rows.length)]!;
    for (let i = 0; i < 250; i++) {
      // Some companies are picked twice: changed again within the delta.
      const r = current.get(1 + Math.floor(random() * (BUILT + ADDED)))!;
      const other = anyRow();
      const kind = i % 4;
      apply(
        kind === 0
          ? { ...r, tokens: other.tokens } // renamed as another company
          : kind === 1
            ? { ...r, city: other.city, postal: other.postal, street: other.street } // moved
            : kind === 2
              ? { ...r, status: 'DELETED' } // struck off, still in the registry
              : { ...r, tokens: [...r.tokens, ...other.tokens.slice(0, 1)], identifierKeys: other.identifierKeys }, // grew a word
      );
    }
    return { rows, random, index, current };
  }

  function assertSameIdentifiers(index: MatchIndex, rebuilt: MatchIndex, rows: readonly MatchRow[]): void {
    const ids = (i: MatchIndex, key: number) =>
      i
        .findByIdentifierKey(key)
        .map((c) => c.id)
        .sort((a, b) => a - b);
    for (const r of rows) for (const key of r.identifierKeys) assert.deepEqual(ids(index, key), ids(rebuilt, key));
  }

  test('companies changed after the build: renamed, moved, struck off, changed twice', async () => {
    const { rows, index, current } = await changed(2);
    const rebuilt = await buildOf([...current.values()]);
    // Queries of the companies as they are now and as they were before the changes.
    assertSameAnswers(index, rebuilt, [...queriesFor([...current.values()], prng(3), 300), ...queriesFor(rows, prng(4), 200)]);
    assertSameIdentifiers(index, rebuilt, rows);
  });

  test('companies removed from the registry after the build (built ones and added ones)', async () => {
    const { rows, random, index, current } = await changed(5);
    for (let i = 0; i < 60; i++) {
      const id = i % 2 === 0 ? 1 + Math.floor(random() * BUILT) : BUILT + 1 + Math.floor(random() * ADDED);
      index.remove(id);
      current.delete(id);
    }
    const rebuilt = await buildOf([...current.values()]);
    assertSameAnswers(index, rebuilt, [...queriesFor([...current.values()], prng(6), 300), ...queriesFor(rows, prng(7), 200)]);
    assertSameIdentifiers(index, rebuilt, rows);
  });
});
