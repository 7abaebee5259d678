// A person answer as the API gives it, about 700 bytes of JSON like the sandbox's: for tests that
// fill a store with answers of a realistic size.

export function personAnswer(key: string, title: string) {
  return {
    email_address: key,
    lead: {
      id: key.padEnd(24, '0').slice(0, 24),
      type: 'person',
      name: 'Ada Jensen',
      title,
      contructed_title: `${title} at Acme Inc`,
      profile_picture: `https://media.network.example/p/${key}.jpg`,
      network_url: `https://network.example/in/${key}`,
      company_name: 'Acme Inc',
      company_domain: 'acme.example',
      total_experience_in_months: 120,
      addresses: [{ full_address: 'Melbourne, Victoria, Australia', state: 'Victoria', city: 'Melbourne', country: 'Australia', country_code: 'AU' }],
    },
  };
}
