/**
 * The registry's data access, for modules outside src/registry: one import for what they use.
 * Each job has its own file under store/ (companies, events, daily runs, locks, the search columns
 * and the row encoding of a batch write); code inside src/registry imports those directly.
 */
export { registryDb, type RegistryExecutor } from './store/executor.ts';
export { EVENTS_WRITER_LOCK, lockEventsWriter, RUN_LOCK_CLASS, tryLockRun, unlockRun } from './store/locks.ts';
export { contentHash } from './store/content-hash.ts';
export { deriveCompanyColumns, type CompanyColumns } from './store/search-columns.ts';
export { companyRow, companyRowFields, type CompanyRowData, type NewCompanyRow } from './store/company-rows.ts';
export {
  allocateCompanyIds,
  companyByKeyQuery,
  STORED_COMPANY_COLUMNS,
  countCompanies,
  deleteCompanies,
  findCompanyByIdentifier,
  findCompanyIdByIdentifier,
  hasAnyCompany,
  insertCompanies,
  insertIdentifiers,
  lookupCompaniesForBatch,
  registrySize,
  updateCompanies,
  updateFingerprints,
  type BatchLookupItem,
  type CompanyUpdateRow,
  type IdentifierRow,
  type MatchedCompany,
  type StoredCompany,
} from './store/companies-repo.ts';
export { ensureEventsPartition, insertEvents, listCompanyEvents, type NewEventRow, type StoredEvent } from './store/events-repo.ts';
export {
  addRunCounters,
  beginRun,
  completeRun,
  failRun,
  findRun,
  findRunById,
  type DailyRun,
  type RunCounters,
} from './store/daily-runs-repo.ts';
