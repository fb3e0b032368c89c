import { createSyntheticSource } from '../../src/registry/sources/synthetic.ts';
import type { CompanySnapshot } from '../../src/registry/model.ts';
import type { MatchIndex } from '../../src/modules/match/match-index.ts';
import { MatchIndexBuilder } from '../../src/modules/match/match-index-builder.ts';
import { matchRowOfSnapshot } from '../../src/modules/match/rows.ts';

/**
 * The synthetic registry as a match index, without a database: company i of the source gets
 * id i + 1, as a first load into an empty database would give it. Used by the evaluation
 * (test/match-evaluation.test.ts) and the benchmark (bench/match.ts).
 */

export interface SyntheticMatchRegistry {
  index: MatchIndex;
  /** NIP of each company by id (index 0 unused). */
  nips: string[];
}

export const EVAL_REGISTRY = { seed: 1, size: 20_000, date: '2026-11-20' } as const;

export async function buildSyntheticMatchRegistry(
  opts: { seed: number; size: number; date: string },
  onSnapshot?: (id: number, s: CompanySnapshot) => void,
): Promise<SyntheticMatchRegistry> {
  const source = createSyntheticSource({ seed: opts.seed, size: opts.size });
  const builder = new MatchIndexBuilder();
  const nips: string[] = [''];
  let id = 0;
  for await (const snapshot of source.allSnapshots(opts.date)) {
    id++;
    builder.add(matchRowOfSnapshot(id, snapshot));
    nips.push(snapshot.identity.identifiers.find((i) => i.type === 'NIP')?.value ?? '');
    onSnapshot?.(id, snapshot);
  }
  return { index: await builder.build(), nips };
}
