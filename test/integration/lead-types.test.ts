// The leads' types as a program compiles them (docs/library.md, "Types of the answers"):
// after `status === 'found'` each documented member of a lead is typed (`title` is
// `string | undefined`, not `unknown`), a member the interface does not name (`jobTitle`) does not
// compile, and a domain lookup's `lead` may be the array of several companies. Each promise has a
// case that must fail to compile: the checks can fail. Needs the build (`npm run build`).
import { beforeAll, describe, expect, it } from 'vitest';
import { typeScriptProject } from '../helpers/typescript.js';

/** `code` in a module that has rows, options and a type-equality check. */
const program = (code: string) => `
import { enrichRows, LeadClient } from 'lead-enrich';
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;
const options = { baseUrl: 'https://api.example.com/v2', token: 'secret' };
const contacts = [{ id: 1, email: 'jane.doe@acme-robotics.com' }];
${code}
`;

/** `inside` where a result of enrichRows is known to be found. */
const FOUND = (inside: string) =>
  program(`
for await (const result of enrichRows(contacts, options)) {
  if (result.status === 'found') {
    ${inside}
  }
}`);

/** `inside` where `lead` is a domain lookup's. */
const DOMAIN = (inside: string) =>
  program(`
const client = new LeadClient(options);
const { lead } = await client.lookupDomain('acme.com');
${inside}`);

/** Every case, compiled in one program (the package's types are read once), by name. */
let errors: Record<'typed' | 'unnamed' | 'notUnknown' | 'companies' | 'companyFirst', string[]>;
beforeAll(() => {
  errors = typeScriptProject().compileAll({
    typed: FOUND(`
    const title = result.lead.title;
    const titleIsTyped: Equal<typeof title, string | undefined> = true;
    const months: number | undefined = result.lead.total_experience_in_months;
    const constructed: string | undefined = result.lead.contructed_title;
    console.log(titleIsTyped, months, constructed, result.lead.name ?? '(no name)', result.lead.company_domain);`),
    unnamed: FOUND('console.log(result.lead.jobTitle, result.lead.constructed_title);'),
    notUnknown: FOUND('const wrong: number = result.lead.title;'),
    companies: DOMAIN(`
const names: (string | undefined)[] = Array.isArray(lead) ? lead.map((company) => company.name) : [lead.name];
const country: string | undefined = Array.isArray(lead) ? lead[0]?.addresses?.country : lead.addresses?.country;
console.log(names, country);`),
    companyFirst: DOMAIN('console.log(lead.name);'),
  });
}, 60_000);

describe("a found row's lead", () => {
  it("has typed members: title is string | undefined, addresses and the API's own contructed_title too", () => {
    expect(errors.typed).toEqual([]);
  });

  it('does not compile a member the interface does not name, nor a typo of one', () => {
    expect(errors.unnamed).toHaveLength(2);
    expect(errors.unnamed[0]).toMatch(/TS2339: Property 'jobTitle' does not exist on type/);
    // The interface's own spelling is the one offered.
    expect(errors.unnamed[1]).toMatch(/TS2551: Property 'constructed_title' does not exist on type 'AnyLead'\. Did you mean 'contructed_title'\?/);
  });

  it('is not unknown: a title is not a number', () => {
    expect(errors.notUnknown).toHaveLength(1);
    expect(errors.notUnknown[0]).toMatch(/TS2322: Type 'string \| undefined' is not assignable to type 'number'/);
  });
});

describe("a domain lookup's lead", () => {
  it('is one company or the array of several: Array.isArray tells them apart', () => {
    expect(errors.companies).toEqual([]);
  });

  it('does not compile a company member read before asking whether it is the array', () => {
    expect(errors.companyFirst).toHaveLength(1);
    expect(errors.companyFirst[0]).toMatch(/TS2339: Property 'name' does not exist on type '(CompanyLead \| CompanyLead\[\]|DomainLead)'/);
  });
});
