import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CompanySnapshot } from './model.ts';
import { mergeIntoStored, prepareSnapshot } from './prepare.ts';
import { answersFromText, answerText, mergeRequestText, startMergeWorker, type MergeRequest } from './plan-worker.ts';

function company(name: string, extra: Partial<CompanySnapshot['profiles'][number]> = {}): CompanySnapshot {
  return {
    identity: { identifiers: [{ type: 'NIP', value: '5261040828' }], company_type: 'spółka', country_code: 'PL' },
    profiles: [{
      source: 'krs', name, status: 'aktywny', legal_form: 'SPÓŁKA AKCYJNA',
      address: { street: 'ul. Chemików', building: '7', apartment: '', city: 'Płock', postal_code: '09-411', voivodeship: 'mazowieckie', country_code: 'PL' },
      units: [], contacts: [], activities: [{ code: '1920Z', name: 'X', is_primary: true }], dates: [], websites: [], vat_status: null, bank_accounts: [],
      ...extra,
    }],
    persons: [],
  };
}

const stored = prepareSnapshot(company('ORLEN SPÓŁKA AKCYJNA'))!;
const requests: MergeRequest[] = [
  // A new name, with separators and a quote that must survive the trip.
  { storedHash: stored.hash, storedJson: stored.canonicalJson, incomingJson: prepareSnapshot(company('A\u001eB\u001f "C"'))!.canonicalJson },
  // The same content: only the fingerprint is recorded.
  { storedHash: stored.hash, storedJson: stored.canonicalJson, incomingJson: stored.canonicalJson },
  // A new identifier and a phone.
  {
    storedHash: stored.hash,
    storedJson: stored.canonicalJson,
    incomingJson: JSON.stringify({ ...company('ORLEN SPÓŁKA AKCYJNA', { contacts: [{ type: 'phone', value: '+48 24 000 00 00' }] }), identity: { identifiers: [{ type: 'KRS', value: '0000028860' }], company_type: '', country_code: '' } }),
  },
  // A stored snapshot that breaks the merge.
  { storedHash: stored.hash, storedJson: '{"identity":null}', incomingJson: stored.canonicalJson },
];

function local(r: MergeRequest) {
  try {
    return mergeIntoStored(JSON.parse(r.storedJson), JSON.parse(r.incomingJson), r.storedHash);
  } catch (e) {
    return { kind: 'error', message: (e as Error).message };
  }
}

test('the wire format gives back exactly what merging on this thread gives', () => {
  const answers = answersFromText(answerText(mergeRequestText(requests)));
  assert.deepEqual(answers, requests.map(local));
  assert.deepEqual(answers.map((a) => a.kind), ['changed', 'same', 'changed', 'error']);
  const renamed = answers[0]!;
  assert.ok(renamed.kind === 'changed' && renamed.events.some((e) => e.event_type === 'COMPANY_NAME_CHANGED' && e.new_value === 'A\u001eB\u001f "C"'));
  const grown = answers[2]!;
  assert.ok(grown.kind === 'changed');
  assert.deepEqual(grown.newIdentifiers, [{ type: 'KRS', value: '0000028860' }]);
});

test('the merging worker answers batches in order', async () => {
  const worker = startMergeWorker();
  try {
    assert.deepEqual(await worker.merge(requests), requests.map(local));
    assert.deepEqual(await worker.merge(requests.slice(1, 2)), [{ kind: 'same' }]);
  } finally {
    await worker.close();
  }
});
