import type { CompanySnapshot, Identifier } from '../../model.ts';
import { NEW_INDEX_BASE, SALT } from './constants.ts';
import { createRng, hash3 } from './random.ts';
import { STATUS } from './forms.ts';
import { tables } from './tables.ts';
import { ChangeDays, type Context, registrationDayOf, type State } from './state.ts';
import { generateBase, nameOf } from './base.ts';
import { applyChange, chooseChange } from './changes.ts';

/**
 * A synthetic company on a date: its base state with its changes replayed, rendered as a
 * CompanySnapshot.
 */

/**
 * Company `index` as of `day` (days after the epoch; 0 or less is the base state), or null when
 * it is registered only later.
 */
export function stateAt(ctx: Context, index: number, day: number): State | null {
  let firstDay = 1;
  if (index >= NEW_INDEX_BASE) {
    const registered = registrationDayOf(index);
    if (registered > day) return null;
    firstDay = registered + 1;
  }
  const s = generateBase(ctx, index);
  const days = new ChangeDays(ctx, index, firstDay);
  for (let t = days.day; t <= day && s.phase !== 'closed'; t = days.advance()) {
    if (s.phase === 'pending' && s.pendingStartDay <= t) startActivity(s);
    const rng = createRng(hash3(ctx.seedHash ^ SALT.kind, index, t));
    const kind = chooseChange(rng, s);
    if (kind === null) continue;
    applyChange(rng, s, kind, t, ctx);
    s.lastChangeDay = t;
  }
  if (s.phase === 'pending' && s.pendingStartDay <= day) startActivity(s);
  return s;
}

/** A sole trader registered with a future start date starts: only the status changes. */
function startActivity(s: State): void {
  s.phase = 'active';
  s.status = STATUS.active;
  s.lastChangeDay = s.pendingStartDay;
}

export function toSnapshot(s: State): CompanySnapshot {
  const form = tables().forms[s.formIndex]!;
  const identifiers: Identifier[] = [
    { type: 'NIP', value: s.nip },
    { type: 'REGON9', value: s.regon },
  ];
  if (s.krs !== null) identifiers.push({ type: 'KRS', value: s.krs });
  return {
    identity: { identifiers, company_type: form.legal.basic_form, country_code: 'PL' },
    profiles: [
      {
        source: 'synthetic',
        name: nameOf(s),
        status: s.status,
        legal_form: form.legal.label,
        address: s.address,
        units: s.units,
        contacts: s.contacts,
        activities: s.activities,
        dates: s.dates,
        websites: s.websites,
        vat_status: s.vatStatus,
        bank_accounts: s.bankAccounts,
      },
    ],
    persons: s.persons,
  };
}
