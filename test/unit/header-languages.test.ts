// Header detection in the languages exports come in (src/plan/header-names.ts, one table): email,
// profile-URL and website/domain columns in English, German, French, Spanish, Italian, Portuguese
// and Dutch, whatever their case and accents; and columns *about* a key are still not taken for it.
import { describe, expect, it } from 'vitest';
import { detectTarget, detectDomainColumnBeside } from '../../src/plan/detect.js';
import { HEADER_NAMES, type Language } from '../../src/plan/header-names.js';
import { LOOKUP_KINDS } from '../../src/plan/normalize.js';

const kindOf = (header: string[]) => {
  const t = detectTarget(header);
  return `${t.kind}:${t.columnName}`;
};

describe('email columns in seven languages', () => {
  it.each([
    ['en', ['First Name', 'Last Name', 'Email Address', 'Company']],
    ['de', ['Vorname', 'Nachname', 'E-Mail-Adresse', 'Firma']],
    ['fr', ['Prénom', 'Nom', 'Courriel', 'Société']],
    ['fr', ['Prénom', 'Nom', 'Adresse électronique', 'Entreprise']],
    ['es', ['Nombre', 'Apellidos', 'Correo electrónico', 'Empresa']],
    ['it', ['Nome', 'Cognome', 'Posta elettronica', 'Azienda']],
    ['it', ['Nome', 'Cognome', 'Indirizzo email', 'Azienda']],
    ['pt', ['Nome', 'Sobrenome', 'Endereço de e-mail', 'Empresa']],
    ['pt', ['Nome', 'Apelido', 'Correio eletrônico', 'Empresa']],
    ['nl', ['Voornaam', 'Achternaam', 'E-mailadres', 'Bedrijf']],
  ])('%s: %j', (_language, header) => {
    expect(kindOf(header)).toBe(`email:${header[2]}`);
  });

  it('ignores case and accents: CORREO ELECTRONICO, correo_electrónico, CorreoElectronico, courriel', () => {
    for (const name of ['CORREO ELECTRONICO', 'correo_electrónico', 'CorreoElectronico', 'courriel', 'E-MAIL-ADRESSE', 'Endereco de Email']) {
      expect(kindOf(['Name', name])).toBe(`email:${name}`);
    }
  });
});

describe('website and domain columns in seven languages', () => {
  it.each([
    ['en', 'Website'],
    ['de', 'Webseite'],
    ['de', 'Internetseite'],
    ['de', 'Domäne'],
    ['fr', 'Site web'],
    ['fr', 'Nom de domaine'],
    ['es', 'Sitio web'],
    ['es', 'Página web'],
    ['it', 'Sito web'],
    ['pt', 'Sítio web'],
    ['pt', 'Domínio'],
    ['nl', 'Website'],
    ['nl', 'Domeinnaam'],
  ])('%s: %s', (_language, name) => {
    expect(kindOf(['Firma', name, 'Ort'])).toBe(`domain:${name}`);
  });

  it('beside a profile URL, the website column gives --with mx its domain', () => {
    const header = ['Nom', 'Profil LinkedIn', 'Site web'];
    expect(kindOf(header)).toBe('url:Profil LinkedIn');
    expect(detectDomainColumnBeside(header, 1)?.columnName).toBe('Site web');
  });
});

describe('profile URL columns in seven languages', () => {
  it.each([
    'LinkedIn',
    'LinkedIn-Profil',
    'Profil LinkedIn',
    'URL du profil',
    'Perfil de LinkedIn',
    'URL del perfil',
    'Profilo LinkedIn',
    'URL do perfil',
    'LinkedIn-profiel',
    'Profiel-URL',
  ])('%s', (name) => {
    expect(kindOf(['Naam', name])).toBe(`url:${name}`);
  });
});

describe('columns about a key are not the key, in any language', () => {
  it.each([
    [['Statut du courriel', 'Courriel'], 'email:Courriel'],
    [['Estado del correo', 'Correo electrónico'], 'email:Correo electrónico'],
    [['E-Mail verifiziert', 'E-Mail-Adresse'], 'email:E-Mail-Adresse'],
    [['Data consenso email', 'Indirizzo email'], 'email:Indirizzo email'],
    [['Visites du site web', 'Site web'], 'domain:Site web'],
    [['Photo LinkedIn', 'Profil LinkedIn'], 'url:Profil LinkedIn'],
    [['Entreprise LinkedIn', 'URL du profil'], 'url:URL du profil'],
  ])('%j → %s', (header, expected) => {
    expect(kindOf(header)).toBe(expected);
  });
});

describe('the table', () => {
  it('has names in every language for every kind, and each exact name is recognised as its own kind', () => {
    const languages: Language[] = ['en', 'de', 'fr', 'es', 'it', 'pt', 'nl'];
    for (const kind of LOOKUP_KINDS) {
      for (const language of languages) {
        const names = HEADER_NAMES[kind].exact[language];
        expect(names.length, `${kind} ${language}`).toBeGreaterThan(0);
        for (const name of names) expect(detectTarget([name]).kind, `${name} (${language})`).toBe(kind);
      }
    }
  });
});
