import { describe, expect } from 'vitest';
import { it } from '../helpers/cli-words.js';
import { ConfigError } from '../../src/api/errors.js';
import {
  LOOKUP_OPERATION,
  detectTarget,
  detectDomainColumn,
  domainForRow,
  normalizeDomain,
  normalizeKey,
  parseLookupKind,
  type LookupKind,
} from '../../src/plan/plan.js';

// The messages as the command line's user reads them (the library's words for the same
// failures: test/integration/library-words.test.ts).

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).code).toBe('config');
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('LOOKUP_OPERATION', () => {
  it('maps each kind to its API operation', () => {
    expect(LOOKUP_OPERATION).toEqual({ email: 'lookup_email', url: 'lookup_url', domain: 'lookup_domain' });
  });
});

describe('detectTarget: realistic headers', () => {
  const cases: Array<[string, string[], LookupKind, string]> = [
    ['plain email', ['id', 'name', 'email'], 'email', 'email'],
    ['HubSpot contacts', ['Record ID', 'First Name', 'Last Name', 'Email', 'Phone Number', 'Company Name', 'Website URL'], 'email', 'Email'],
    ['HubSpot companies', ['Record ID', 'Company name', 'Company Domain Name', 'Website URL', 'LinkedIn Company Page'], 'domain', 'Company Domain Name'],
    ['Salesforce leads', ['Lead ID', 'First Name', 'Last Name', 'Title', 'Company / Account', 'Email', 'Email Opt Out', 'Website'], 'email', 'Email'],
    ['Salesforce accounts', ['Account ID', 'Account Name', 'Phone', 'Website', 'Industry'], 'domain', 'Website'],
    [
      'Apollo people',
      [
        'First Name',
        'Last Name',
        'Title',
        'Company',
        'Company Name for Emails',
        'Email',
        'Email Status',
        'Email Confidence',
        'Person Linkedin Url',
        'Website',
        'Company Linkedin Url',
        'Twitter Url',
      ],
      'email',
      'Email',
    ],
    [
      'Apollo people without emails',
      ['First Name', 'Last Name', 'Title', 'Person Linkedin Url', 'Website', 'Company Linkedin Url'],
      'url',
      'Person Linkedin Url',
    ],
    ['Apollo, company link first', ['Company Linkedin Url', 'Person Linkedin Url', 'Website'], 'url', 'Person Linkedin Url'],
    ['Apollo companies', ['Company', '# Employees', 'Industry', 'Website', 'Company Linkedin Url', 'Company Street'], 'domain', 'Website'],
    ['Sales Navigator', ['firstName', 'lastName', 'profileUrl', 'companyName'], 'url', 'profileUrl'],
    ['LinkedIn-style', ['Name', 'LinkedIn', 'Company'], 'url', 'LinkedIn'],
    ['network_url', ['name', 'network_url'], 'url', 'network_url'],
    ['bare url', ['name', 'URL'], 'url', 'URL'],
    ['E-mail', ['Name', 'E-mail'], 'email', 'E-mail'],
    ['email_address', ['name', 'email_address'], 'email', 'email_address'],
    ['EmailAddress camelCase', ['Name', 'EmailAddress'], 'email', 'EmailAddress'],
    ['Work Email', ['Name', 'Work Email'], 'email', 'Work Email'],
    ['Email ID', ['Name', 'Email ID'], 'email', 'Email ID'],
    ['contains email', ['Name', 'Personal Email'], 'email', 'Personal Email'],
    ['upper-case with spaces', ['  NAME ', '  EMAIL ADDRESS  '], 'email', '  EMAIL ADDRESS  '],
    ['BOM on the first cell', ['\uFEFFEmail', 'Name'], 'email', 'Email'],
    ['dotted', ['contact.email', 'name'], 'email', 'contact.email'],
    ['company domain', ['Company', 'Company Domain'], 'domain', 'Company Domain'],
    ['web site', ['Company', 'Web Site'], 'domain', 'Web Site'],
    ['site', ['Company', 'site'], 'domain', 'site'],
    ['contains domain', ['Company', 'Primary Domain'], 'domain', 'Primary Domain'],
    ['Email Domain is a domain', ['Company', 'Email Domain'], 'domain', 'Email Domain'],
    ['Email status columns do not count', ['Name', 'Email Status', 'Email Opt Out', 'Website'], 'domain', 'Website'],
    ['EmailStatus squashed does not count', ['Name', 'emailstatus', 'site'], 'domain', 'site'],
    ['Domain Authority does not count', ['Name', 'Domain Authority', 'Homepage'], 'domain', 'Homepage'],
  ];
  it.each(cases)('%s', (_label, header, kind, columnName) => {
    const t = detectTarget(header);
    expect(t.kind).toBe(kind);
    expect(t.columnName).toBe(columnName.replace(/^\uFEFF/, ''));
    expect(header[t.columnIndex]?.replace(/^\uFEFF/, '')).toBe(t.columnName);
  });
});

describe('detectTarget: priority', () => {
  const cases: Array<[string, string[], LookupKind, number]> = [
    ['email beats url and domain', ['Website', 'LinkedIn', 'Email'], 'email', 2],
    ['a containing email beats an exact url', ['LinkedIn', 'Secondary Email'], 'email', 1],
    ['url beats domain', ['Domain', 'Profile URL'], 'url', 1],
    ['exact beats containing within a kind', ['Personal Email', 'Email'], 'email', 1],
    ['leftmost among exact', ['Work Email', 'Email'], 'email', 0],
    ['leftmost among containing', ['Personal Email', 'Other Email'], 'email', 0],
    ['duplicate names: the first', ['email', 'name', 'email'], 'email', 0],
    ['duplicates differing in case and spaces', ['Name', 'E-Mail', 'email'], 'email', 1],
  ];
  it.each(cases)('%s', (_label, header, kind, index) => {
    const t = detectTarget(header);
    expect(t).toEqual({ kind, columnIndex: index, columnName: header[index] });
  });
});

describe('detectTarget: --by and --column', () => {
  const header = ['First', 'Email', 'Person Linkedin Url', 'Website', 'Contact'];

  it('--by alone takes the best column of that kind', () => {
    expect(detectTarget(header, { by: 'url' })).toEqual({ kind: 'url', columnIndex: 2, columnName: 'Person Linkedin Url' });
    expect(detectTarget(header, { by: 'domain' })).toEqual({ kind: 'domain', columnIndex: 3, columnName: 'Website' });
    expect(detectTarget(header, { by: 'email' })).toEqual({ kind: 'email', columnIndex: 1, columnName: 'Email' });
  });

  it('--by falls back to a column the exclusions skipped', () => {
    expect(detectTarget(['Name', 'Company Linkedin Url'], { by: 'url' })).toMatchObject({ kind: 'url', columnIndex: 1 });
  });

  it('--by accepts the flag string in any case', () => {
    expect(detectTarget(header, { by: ' URL ' as LookupKind }).kind).toBe('url');
  });

  it('--column alone infers the kind from the name', () => {
    expect(detectTarget(header, { column: 'Website' })).toEqual({ kind: 'domain', columnIndex: 3, columnName: 'Website' });
    expect(detectTarget(header, { column: 'person linkedin url' })).toEqual({ kind: 'url', columnIndex: 2, columnName: 'Person Linkedin Url' });
    expect(detectTarget(['Company Linkedin Url'], { column: 'Company Linkedin Url' }).kind).toBe('url');
    expect(detectTarget(['Email Domain'], { column: 'Email Domain' }).kind).toBe('domain');
  });

  it('--column matches case-sensitively first, then loosely (first occurrence)', () => {
    const h = ['email', 'Email', 'E-mail'];
    expect(detectTarget(h, { column: 'Email' }).columnIndex).toBe(1);
    expect(detectTarget(h, { column: 'E-mail' }).columnIndex).toBe(2);
    expect(detectTarget(h, { column: 'EMAIL' }).columnIndex).toBe(0);
    expect(detectTarget(['\uFEFFWebsite', 'x'], { column: 'Website' }).columnIndex).toBe(0);
  });

  it('--column with --by uses both, no inference', () => {
    expect(detectTarget(header, { by: 'domain', column: 'Contact' })).toEqual({ kind: 'domain', columnIndex: 4, columnName: 'Contact' });
    expect(detectTarget(header, { by: 'url', column: 'Email' })).toEqual({ kind: 'url', columnIndex: 1, columnName: 'Email' });
  });
});

describe('detectTarget: errors', () => {
  it('nothing fits: one line listing the header', () => {
    const e = configError(() => detectTarget(['id', 'first', 'last']));
    expect(e.message).toBe(
      'No lookup column found in the header (id, first, last): pass --by email|url|domain and --column NAME (or, when the header is not the first line, --skip-lines N)',
    );
  });

  it('excluded names alone do not fit', () => {
    const e = configError(() => detectTarget(['Email Status', 'Email Opt Out']));
    expect(e.message).toContain('(Email Status, Email Opt Out)');
  });

  it('empty header', () => {
    expect(configError(() => detectTarget([])).message).toContain('(no columns)');
  });

  it('long headers are cut short, on one line', () => {
    const header = Array.from({ length: 30 }, (_, i) => `column number ${i}`);
    header[0] = `a very long header name\nwith a newline ${'x'.repeat(100)}`;
    const { message } = configError(() => detectTarget(header));
    expect(message).not.toContain('\n');
    expect(message).toContain('... 18 more');
    expect(message).toContain('(a very long header name with a newlin..., column number 1,');
    expect(message.length).toBeLessThan(500);
  });

  it('--by with no column of that kind', () => {
    const e = configError(() => detectTarget(['id', 'Email'], { by: 'url' }));
    expect(e.message).toBe('No url column found in the header (id, Email): pass --column NAME');
  });

  it('--by with an unknown kind', () => {
    const e = configError(() => detectTarget(['Email'], { by: 'phone' as LookupKind }));
    expect(e.message).toBe("Invalid option --by: must be email, url or domain, or a list of them in the order to try, such as email,url, got 'phone'");
    expect(() => parseLookupKind('linkedin')).toThrow(ConfigError);
  });

  it('--column naming no header cell lists the header', () => {
    const e = configError(() => detectTarget(['id', 'Email'], { column: 'Mail Address' }));
    expect(e.message).toBe("Invalid option --column: no column named 'Mail Address' in the header (id, Email)");
    configError(() => detectTarget(['id', 'Email'], { column: '  ' }));
  });

  it('--column whose name says nothing asks for --by', () => {
    const e = configError(() => detectTarget(['id', 'Contact'], { column: 'Contact' }));
    expect(e.message).toBe("Cannot tell which lookup column 'Contact' is for from its name: pass --by email|url|domain");
  });
});

describe('detectDomainColumn', () => {
  it('finds the domain column for profile-URL rows', () => {
    const header = ['Name', 'Person Linkedin Url', 'Website'];
    const t = detectTarget(header);
    expect(detectDomainColumn(header, t)).toEqual({ kind: 'domain', columnIndex: 2, columnName: 'Website' });
  });
  it('is undefined without one, and for email/domain lookups', () => {
    expect(detectDomainColumn(['Name', 'LinkedIn'], detectTarget(['Name', 'LinkedIn']))).toBeUndefined();
    const h = ['Email', 'Website'];
    expect(detectDomainColumn(h, detectTarget(h))).toBeUndefined();
  });
  it('never returns the key column itself', () => {
    const h = ['Company Domain', 'Website'];
    expect(detectDomainColumn(h, { kind: 'url', columnIndex: 0, columnName: 'Company Domain' })?.columnIndex).toBe(1);
  });
});

describe('normalizeKey: many spellings, one key', () => {
  const same: Array<[LookupKind, string, string[]]> = [
    [
      'email',
      'jane.doe@example.com',
      [
        'jane.doe@example.com',
        ' Jane.Doe@Example.COM ',
        '\tJANE.DOE@EXAMPLE.COM\n',
        '<jane.doe@example.com>',
        'mailto:jane.doe@example.com',
        'MAILTO:Jane.Doe@example.com',
        '<mailto:jane.doe@example.com>',
        'Jane Doe <Jane.Doe@example.com>',
        'mailto:jane.doe@example.com?subject=Hi',
        'jane.doe@example.com.',
        '\u00a0jane.doe@example.com\u00a0',
      ],
    ],
    ['email', 'jane+tag@sub.example.co.uk', ['Jane+Tag@Sub.Example.Co.UK']],
    ['email', 'jürgen@bücher.de', ['Jürgen@Bücher.de']],
    ['email', 'a@xn--bcher-kva.de', ['a@XN--BCHER-KVA.DE']],
    [
      'url',
      'https://www.linkedin.com/in/Jane-Doe',
      [
        'https://www.linkedin.com/in/Jane-Doe',
        'https://www.linkedin.com/in/Jane-Doe/',
        'http://www.linkedin.com/in/Jane-Doe',
        'HTTPS://WWW.LINKEDIN.COM/in/Jane-Doe',
        'www.linkedin.com/in/Jane-Doe',
        ' www.linkedin.com/in/Jane-Doe// ',
        'https://www.linkedin.com/in/Jane-Doe?trk=public_profile',
        'https://www.linkedin.com/in/Jane-Doe#about',
        'https://www.linkedin.com:443/in/Jane-Doe',
        'http://www.linkedin.com:80/in/Jane-Doe/',
        '//www.linkedin.com/in/Jane-Doe',
        'https://www.linkedin.com./in/Jane-Doe',
        'https://www.linkedin.com//in//Jane-Doe',
        'https://www.linkedin.com/in/./Jane-Doe',
        'http:www.linkedin.com/in/Jane-Doe',
        'www.linkedin.com:443/in/Jane-Doe',
      ],
    ],
    // One profile on LinkedIn's other hosts is the same key, on LinkedIn's canonical host.
    [
      'url',
      'https://www.linkedin.com/in/jane',
      [
        'linkedin.com/in/jane',
        'linkedin.com/in/jane/?utm_source=x',
        'https://de.linkedin.com/in/jane',
        'https://m.linkedin.com/in/jane/',
        'http://uk.linkedin.com/in/jane',
        'https://mobile.linkedin.com/in/jane',
      ],
    ],
    ['url', 'https://example.linkedin.com/in/jane', ['https://example.linkedin.com/in/jane']],
    ['url', 'https://www.network.example/p/jane', ['https://www.network.example/p/jane/']],
    ['url', 'https://www.linkedin.com/in/jos%C3%A9', ['linkedin.com/in/josé'.replace('linkedin', 'www.linkedin'), 'https://www.linkedin.com/in/jos%c3%a9']],
    ['url', 'https://network.example:8443/p/1', ['https://network.example:8443/p/1/']],
    [
      'domain',
      'acme.com',
      [
        'acme.com',
        'ACME.COM',
        ' acme.com ',
        'www.acme.com',
        'https://www.acme.com/',
        'http://acme.com/about?x=1#y',
        'acme.com.',
        'acme.com:8080',
        '//acme.com',
        'https://user@acme.com/',
        'Www.Acme.Com/contact',
      ],
    ],
    ['domain', 'xn--bcher-kva.de', ['bücher.de', 'www.Bücher.de', 'https://bücher.de/shop', 'xn--bcher-kva.de']],
    ['domain', 'www.com', ['www.com', 'https://www.com/']],
    ['domain', 'shop.acme.co.uk', ['shop.acme.co.uk', 'https://shop.acme.co.uk']],
    ['domain', 'example.com', ['ＥＸＡＭＰＬＥ．com']],
  ];
  for (const [kind, key, spellings] of same) {
    it.each(spellings)(`${kind} %j -> ${key}`, (raw) => {
      expect(normalizeKey(kind, raw)).toEqual({ ok: true, key });
    });
  }
});

describe('normalizeKey: invalid keys and their reasons', () => {
  const invalid: Array<[LookupKind, string | undefined, string]> = [
    ['email', undefined, 'empty email'],
    ['email', '', 'empty email'],
    ['email', '   \t ', 'empty email'],
    ['email', 'jane.example.com', 'email has no @'],
    ['email', 'jane@doe@example.com', 'email has more than one @'],
    ['email', '@example.com', 'email has nothing before @'],
    ['email', 'jane@', 'email has nothing after @'],
    ['email', 'jane doe@example.com', 'email contains a space'],
    ['email', 'jane,doe@example.com', "email has an invalid character ','"],
    ['email', `${'a'.repeat(65)}@example.com`, 'email part before @ is longer than 64 characters'],
    ['email', `${'a'.repeat(20)}@${'b'.repeat(60)}.${'c'.repeat(60)}.${'d'.repeat(60)}.${'e'.repeat(60)}.ffff.com`, 'email is longer than 254 characters'],
    ['email', 'jane@localhost', "email domain 'localhost' is not a domain (no dot)"],
    ['email', 'jane@example.c', "email domain 'example.c' is not a domain (top-level domain 'c' is not at least 2 letters)"],
    ['email', 'jane@-example.com', "email domain '-example.com' is not a domain (a label starts or ends with '-')"],
    ['email', 'jane@example..com', "email domain 'example..com' is not a domain (empty label)"],
    ['email', 'jane@exa_mple.com', "email domain 'exa_mple.com' is not a domain (invalid character '_')"],
    ['email', 'jane@1.2.3.4', "email domain '1.2.3.4' is not a domain (top-level domain '4' is not at least 2 letters)"],
    ['email', 'jane@exa mple.com', "email domain 'exa mple.com' is not a domain (contains a space)"],
    ['email', '<>', 'empty email'],
    ['url', undefined, 'empty profile URL'],
    ['url', '  ', 'empty profile URL'],
    ['url', 'ftp://linkedin.com/in/jane', 'not an http(s) URL'],
    ['url', 'javascript:alert(1)', 'not an http(s) URL'],
    ['url', 'mailto:jane@example.com', 'looks like an email address; use --by email'],
    ['url', 'jane@example.com', 'looks like an email address; use --by email'],
    ['url', 'Jane Doe', 'not an http(s) URL'],
    ['url', '/in/jane', 'not an http(s) URL'],
    ['url', 'https://www.linkedin.com', 'profile URL has no path'],
    ['url', 'https://www.linkedin.com/?trk=x', 'profile URL has no path'],
    ['url', 'https://localhost/in/jane', "profile URL host 'localhost' is not a domain (no dot)"],
    ['url', 'https://user:pw@linkedin.com/in/jane', 'profile URL has a user name or password'],
    ['url', 'https://linkedin.com/in/jane doe', 'profile URL contains a space'],
    ['url', 'https://exa mple.com/in/jane', 'profile URL contains a space'],
    ['url', 'https://[::1]/in/jane', "profile URL host '[::1]' is not a domain (no dot)"],
    ['url', 'https://192.168.0.1/in/jane', "profile URL host '192.168.0.1' is not a domain (top-level domain '1' is not at least 2 letters)"],
    ['domain', undefined, 'empty domain'],
    ['domain', ' ', 'empty domain'],
    ['domain', 'jane@acme.com', 'looks like an email address; use --by email'],
    ['domain', 'mailto:jane@acme.com', 'looks like an email address; use --by email'],
    ['domain', 'Acme Inc', "domain 'acme inc' is not valid (contains a space)"],
    ['domain', 'acme', "domain 'acme' is not valid (no dot)"],
    [
      'domain',
      `${'a'.repeat(64)}.com`,
      "domain 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...' is not valid (a label is longer than 63 characters)",
    ],
    ['domain', 'acme_corp.com', "domain 'acme_corp.com' is not valid (invalid character '_')"],
    ['domain', 'acme-.com', "domain 'acme-.com' is not valid (a label starts or ends with '-')"],
    ['domain', 'acme.com:abc', "domain 'acme.com:abc' is not valid (invalid character ':')"],
    ['domain', 'https://', "domain 'https://' is not valid (no host name)"],
    ['domain', '1.2.3.4', "domain '1.2.3.4' is not valid (top-level domain '4' is not at least 2 letters)"],
  ];
  it.each(invalid)('%s %j -> %s', (kind, raw, reason) => {
    expect(normalizeKey(kind, raw)).toEqual({ ok: false, reason });
  });

  it('normalizeDomain is the domain rule of normalizeKey', () => {
    expect(normalizeDomain('WWW.Acme.com/x')).toEqual(normalizeKey('domain', 'WWW.Acme.com/x'));
  });

  it('reasons stay short even for huge cells', () => {
    const result = normalizeKey('domain', `${'x'.repeat(10_000)} y.com`);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason.length).toBeLessThan(120);
  });
});

describe('domainForRow', () => {
  it('email: the part after @, in ASCII', () => {
    expect(domainForRow('email', 'jane@acme.com')).toBe('acme.com');
    expect(domainForRow('email', 'jürgen@bücher.de')).toBe('xn--bcher-kva.de');
  });
  it('domain: the key', () => {
    expect(domainForRow('domain', 'acme.com')).toBe('acme.com');
  });
  it('url: only from a domain cell', () => {
    expect(domainForRow('url', 'https://www.linkedin.com/in/jane')).toBeUndefined();
    expect(domainForRow('url', 'https://www.linkedin.com/in/jane', 'https://www.Acme.com/')).toBe('acme.com');
    expect(domainForRow('url', 'https://www.linkedin.com/in/jane', 'n/a')).toBeUndefined();
  });
});

describe('normalizeKey: cost', () => {
  // How fast is the bench's to say (the known-rows and rate scenarios run normalizeKey on every
  // row): a time bound here would measure the machine's load, not the code.
  it('normalizes a million emails, every one accepted', () => {
    const rows = Array.from({ length: 1000 }, (_, i) => ` User${i}.Name@Example${i % 7}.COM `);
    let ok = 0;
    for (let round = 0; round < 1000; round++) {
      for (const row of rows) if (normalizeKey('email', row).ok) ok++;
    }
    expect(ok).toBe(1_000_000);
  });
});
