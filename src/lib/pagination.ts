/** Meta of a page-numbered list, the shape docs/api-contract.md fixes for every such list. */
export interface PageMeta {
  total: number;
  per_page: number;
  current_page: number;
  last_page: number;
}

/** Page-numbered list meta; an empty list still has one (empty) page. */
export function pageMeta(total: number, page: number, perPage: number): PageMeta {
  return { total, per_page: perPage, current_page: page, last_page: Math.max(1, Math.ceil(total / perPage)) };
}

/** The meta with links to the neighbouring pages; past the end, prev_page points at the last page that has rows. */
export function pageMetaWithLinks(
  total: number,
  page: number,
  perPage: number,
): PageMeta & { next_page: number | null; prev_page: number | null } {
  const meta = pageMeta(total, page, perPage);
  return { ...meta, next_page: page < meta.last_page ? page + 1 : null, prev_page: page > 1 ? Math.min(page - 1, meta.last_page) : null };
}
