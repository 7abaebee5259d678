// What a row's cells must be, from the sandbox's truth for a key at an epoch: the default person
// columns of docs/reference.md ("The enriched CSV"), written here again rather than taken from the
// writer, so that a writer that renders a cell wrong is caught.
const text = (value) => (value === undefined || value === null ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value));
const address = (lead) => (Array.isArray(lead.addresses) ? (lead.addresses[0] ?? {}) : {});

export const PERSON_COLUMNS = {
  lead_name: (lead) => lead.name,
  lead_title: (lead) => lead.title,
  lead_constructed_title: (lead) => lead.contructed_title,
  lead_company_name: (lead) => lead.company_name,
  lead_company_domain: (lead) => lead.company_domain,
  lead_network_url: (lead) => lead.network_url,
  lead_location: (lead) => address(lead).full_address,
  lead_city: (lead) => address(lead).city,
  lead_state: (lead) => address(lead).state,
  lead_country: (lead) => address(lead).country,
  lead_country_code: (lead) => address(lead).country_code,
  lead_experience_months: (lead) => lead.total_experience_in_months,
  lead_profile_picture: (lead) => lead.profile_picture,
  lead_type: (lead) => lead.type,
  lead_id: (lead) => lead.id,
};

const memo = new WeakMap();

/** `{ status, lead_name, … }` of the sandbox's answer for `key` at `epoch` (a person's moves are replayed from epoch 1: kept once made). */
export function truthCells(sandbox, key, epoch) {
  let cells = memo.get(sandbox);
  if (!cells) memo.set(sandbox, (cells = new Map()));
  const id = `${key}|${epoch}`;
  if (!cells.has(id)) cells.set(id, cellsOf(sandbox, key, epoch));
  return cells.get(id);
}

function cellsOf(sandbox, key, epoch) {
  const truth = sandbox.truth('lookup_email', key, epoch);
  const found = truth.kind === 'found';
  const lead = found ? truth.data.lead : {};
  const cells = { status: found ? 'found' : 'not_found' };
  for (const [column, value] of Object.entries(PERSON_COLUMNS)) cells[column] = found ? text(value(lead)) : '';
  return cells;
}

/** The fields in which two answers' cells differ, as --changes names them: `status`, or the columns. */
export function changedFields(before, after) {
  if (before.status !== after.status) return ['status'];
  return Object.keys(PERSON_COLUMNS).filter((column) => before[column] !== after[column]);
}

/** Whether a row of the output holds these cells (its status and every person column). */
export function rowHolds(row, cells) {
  if (row.lead_status !== cells.status) return false;
  return Object.keys(PERSON_COLUMNS).every((column) => (row[column] ?? '') === cells[column]);
}
