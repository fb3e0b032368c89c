import type { Activity, Address, Contact, DatedEntry, LocalUnit, Person } from '../../model.ts';
import type { City, PkdVersion } from '../../dictionaries.ts';
import type { Trade } from './data.ts';
import {
  LOG_KEEP_ACTIVE,
  LOG_KEEP_PROCEEDINGS,
  LOG_KEEP_SUSPENDED,
  MAX_DAYS,
  NEW_INDEX_BASE,
  NEW_PER_DAY_SHARE,
  NEW_SLOTS_PER_DAY,
  PENDING_SHARE,
  SALT,
  UINT32,
} from './constants.ts';
import { hash2, pickWeighted, Rng } from './random.ts';
import type { Phase } from './forms.ts';
import { tables } from './tables.ts';

/**
 * A synthetic company's state while its days are replayed, and when it changes: the days of its
 * changes and the companies registered each day.
 */

export interface Context {
  seedHash: number;
  size: number;
  epochDay: number;
}

/** What a company is made of while its days are replayed; becomes a CompanySnapshot at the end. */
export interface State {
  index: number;
  formIndex: number;
  phase: Phase;
  /** The name without the legal-form suffix. */
  stem: string;
  /** Written after the legal form (partners of a civil partnership). */
  tail: string;
  abbreviated: boolean;
  trade: Trade;
  pkdVersion: PkdVersion;
  nip: string;
  nipVersion: number;
  regon: string;
  krs: string | null;
  status: string;
  /** Day (relative to the epoch) a pending sole trader starts; -1 when not pending. */
  pendingStartDay: number;
  address: Address | null;
  city: City;
  units: LocalUnit[];
  unitSeq: number;
  contacts: Contact[];
  websites: string[];
  activities: Activity[];
  dates: DatedEntry[];
  vatStatus: string;
  bankAccounts: string[];
  persons: Person[];
  /** The last day (relative to the epoch) something changed. */
  lastChangeDay: number;
  /** Internet domain derived from the stem; computed on first use. */
  domain: string | null;
  domainStem: string;
}

export function formOf(ctx: Context, index: number): number {
  return pickWeighted(tables().formWeights, hash2(ctx.seedHash ^ SALT.form, index) / UINT32);
}

/** The starting condition of a base company; derived from hashes only, so a scan can afford it. */
export function baseConditionOf(ctx: Context, index: number, formIndex: number): Phase {
  const { phases, cumulative } = tables().conditionCumulative[formIndex]!;
  const u = hash2(ctx.seedHash ^ SALT.condition, index) / UINT32;
  for (let i = 0; i < phases.length; i++) if (u < cumulative[i]!) return phases[i]!;
  return 'active';
}

function logKeepOf(phase: Phase): number {
  if (phase === 'suspended') return LOG_KEEP_SUSPENDED;
  if (phase === 'liquidation' || phase === 'bankruptcy' || phase === 'restructuring') return LOG_KEEP_PROCEEDINGS;
  return LOG_KEEP_ACTIVE;
}

/**
 * The days a company changes on: a fixed sequence per company with geometric gaps (a daily
 * chance p, set by its starting condition). Walking it costs one step per change, not one per
 * day, so a state years after the epoch is as cheap as the changes it has had.
 */
export class ChangeDays {
  private readonly rng: Rng;
  private readonly logKeep: number;
  /** The current change day (relative to the epoch). */
  day: number;
  constructor(ctx: Context, index: number, firstDay: number) {
    this.rng = new Rng(hash2(ctx.seedHash ^ SALT.change, index));
    this.logKeep = index >= NEW_INDEX_BASE ? LOG_KEEP_ACTIVE : logKeepOf(baseConditionOf(ctx, index, formOf(ctx, index)));
    this.day = firstDay - 1;
    this.advance();
  }
  advance(): number {
    this.day += 1 + Math.floor(Math.log(1 - this.rng.next()) / this.logKeep);
    return this.day;
  }
}

/** Whether company `index` (first able to change on `firstDay`) has a change day on `day`. */
export function changesOn(ctx: Context, index: number, firstDay: number, day: number): boolean {
  const days = new ChangeDays(ctx, index, firstDay);
  while (days.day < day) days.advance();
  return days.day === day;
}

export function newCompaniesOn(ctx: Context, day: number): number {
  if (day < 1 || day >= MAX_DAYS) return 0;
  const expected = ctx.size * NEW_PER_DAY_SHARE;
  const whole = Math.floor(expected);
  const extra = hash2(ctx.seedHash ^ SALT.newCount, day) / UINT32 < expected - whole ? 1 : 0;
  return Math.min(NEW_SLOTS_PER_DAY, whole + extra);
}

export function registrationDayOf(index: number): number {
  return Math.floor((index - NEW_INDEX_BASE) / NEW_SLOTS_PER_DAY);
}

/** For a new sole trader registered with a future start: days until it starts (1..14), else 0. */
export function pendingDelayOf(ctx: Context, index: number, formIndex: number): number {
  if (index < NEW_INDEX_BASE || tables().forms[formIndex]!.kind !== 'jdg') return 0;
  const h = hash2(ctx.seedHash ^ SALT.pending, index);
  return h / UINT32 < PENDING_SHARE ? 1 + (h % 14) : 0;
}
