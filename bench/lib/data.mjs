// Deterministic benchmark data: the same rows, in the same order, for every server and every run.
// Row i of `accountRow` is a function of i and a fixed seed only.

export const CITIES = ['Tel Aviv', 'Haifa', 'Jerusalem', 'Eilat', 'Beersheba', 'Netanya', 'Ashdod', 'Nazareth'];
const INDUSTRIES = ['Retail', 'Software', 'Health', 'Logistics', 'Finance', 'Education', 'Energy', 'Media'];
const COUNTRIES = ['IL', 'CY', 'GR', 'DE', 'FR', 'US'];
const STATUSES = ['new', 'contacted', 'qualified', 'customer', 'dormant'];
const TAGS = ['vip', 'north', 'south', 'b2b', 'b2c', 'newsletter', 'event', 'referral', 'partner', 'trial'];
const WORDS = ['quarterly', 'review', 'call', 'about', 'renewal', 'pricing', 'follow', 'up', 'with', 'the',
  'team', 'on', 'delivery', 'schedule', 'and', 'open', 'invoices', 'from', 'last', 'month'];

export const LEAD_STATUS_NAMES = ['New', 'Attempted', 'Contacted', 'Engaged', 'Qualified', 'Proposal',
  'Negotiation', 'Won', 'Lost', 'Nurture'];

// mulberry32: small, fast, good enough for reproducible test data.
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function leadStatusRow(i) {
  return { Name: LEAD_STATUS_NAMES[i], Order: i, Color: `#${(0x203040 + i * 0x111111).toString(16).slice(-6)}`,
    IsClosed: i === 7 || i === 8 };
}

const BASE_MS = Date.UTC(2020, 0, 1);
const DAY = 86_400_000;
const pick = (r, list) => list[Math.floor(r() * list.length)];
const int = (r, lo, hi) => lo + Math.floor(r() * (hi - lo + 1));
const date = (ms) => ({ __type: 'Date', iso: new Date(ms).toISOString() });

// ~20 fields of mixed types: 11 strings, 5 numbers, 2 booleans, 2 Dates, 1 Pointer, 1 Array.
// `leadStatusIds` are the objectIds of the 10 LeadStatuses on the server being loaded.
export function accountRow(i, leadStatusIds) {
  const r = prng(0x5eed0000 + i);
  const words = Array.from({ length: 26 }, () => pick(r, WORDS)).join(' ');
  const tags = Array.from({ length: int(r, 1, 3) }, () => pick(r, TAGS));
  const since = BASE_MS + int(r, 0, 1800) * DAY + int(r, 0, DAY - 1);
  return {
    Name: `Account ${String(i).padStart(6, '0')}`,
    Email: `account${i}@example.test`,
    PhoneNumber: `+972-5${int(r, 0, 9)}-${String(int(r, 0, 9_999_999)).padStart(7, '0')}`,
    City: CITIES[i % CITIES.length],
    Score: int(r, 0, 99),
    IsAccount: r() < 0.6,
    IsVip: r() < 0.1,
    Revenue: Math.round(r() * 5_000_000) / 100,
    Employees: int(r, 1, 5000),
    Visits: int(r, 0, 500),
    Rating: int(r, 1, 5),
    Since: date(since),
    LastContact: date(since + int(r, 0, 300) * DAY),
    LeadStatusId: { __type: 'Pointer', className: 'LeadStatuses', objectId: leadStatusIds[int(r, 0, 9)] },
    Tags: tags,
    ExternalId: `EXT-${(i * 2654435761 >>> 0).toString(16).padStart(8, '0')}`,
    Industry: pick(r, INDUSTRIES),
    Country: pick(r, COUNTRIES),
    Website: `https://www.account${i}.example.test/`,
    Status: pick(r, STATUSES),
    Comment: `${words}.`,
  };
}

const FIRST = ['Dana', 'Yossi', 'Noa', 'Avi', 'Maya', 'Omer', 'Tamar', 'Eitan', 'Shira', 'Lior'];
const LAST = ['Cohen', 'Levi', 'Mizrahi', 'Peretz', 'Biton', 'Dahan', 'Avraham', 'Friedman', 'Katz', 'Azoulay'];
const STREETS = ['Herzl', 'Rothschild', 'Ben Yehuda', 'Allenby', 'Weizmann', 'Jabotinsky', 'HaNasi', 'Dizengoff'];

// A row of the product base's own `Accounts` (issue 33): 24 of its 37 fields, each of the type the
// product base gives it (the two Pointers to its LeadStatuses and AccountStatuses, the two Dates),
// and each also valid on the bench's plain Accounts, so that Parse Server gets the same body (its
// Accounts then gains the fields this adds). `refs` holds, for the server being loaded, the ids
// of 10 `leadStatusIds` at most and of `accountStatusIds`.
export function productAccountRow(i, refs) {
  const r = prng(0x9b000000 + i);
  const first = pick(r, FIRST);
  const last = pick(r, LAST);
  const company = `${last} ${pick(r, INDUSTRIES)} Ltd ${i}`;
  const since = BASE_MS + int(r, 0, 1800) * DAY + int(r, 0, DAY - 1);
  return {
    Name: `${first} ${last} ${String(i).padStart(6, '0')}`,
    FirstName: first,
    LastName: last,
    CompanyName: company,
    PhoneNumber: `+972-5${int(r, 0, 9)}-${String(int(r, 0, 9_999_999)).padStart(7, '0')}`,
    MobilePhone: `05${int(r, 0, 9)}-${String(int(r, 0, 9_999_999)).padStart(7, '0')}`,
    Email: `contact${i}@company${i % 5000}.example.test`,
    Website: `https://www.company${i}.example.test/`,
    IsAccount: r() < 0.6,
    StatusId: { __type: 'Pointer', className: 'AccountStatuses', objectId: pick(r, refs.accountStatusIds) },
    LeadStatusId: { __type: 'Pointer', className: 'LeadStatuses', objectId: pick(r, refs.leadStatusIds) },
    Comment: `${Array.from({ length: 20 }, () => pick(r, WORDS)).join(' ')}.`,
    ExternalId: `PB-${(i * 2654435761 >>> 0).toString(16).padStart(8, '0')}`,
    City: CITIES[i % CITIES.length],
    Address: `${pick(r, STREETS)} ${int(r, 1, 200)}`,
    ZipCode: String(int(r, 1_000_000, 9_999_999)),
    VatId: String(int(r, 500_000_000, 599_999_999)),
    IdNumber: String(int(r, 10_000_000, 99_999_999)).padStart(9, '0'),
    Birthday: date(BASE_MS - int(r, 7000, 25000) * DAY),
    Score: int(r, 0, 99),
    Tags: Array.from({ length: int(r, 1, 3) }, () => pick(r, TAGS)),
    LastContactDate: date(since),
    Balance: Math.round(r() * 1_000_000) / 100,
    DoNotCall: r() < 0.05,
  };
}
