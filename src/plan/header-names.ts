// The header names that say which column holds a lookup key, in the languages CRM and spreadsheet
// exports come in: English, German, French, Spanish, Italian, Portuguese and Dutch. The one table
// detect.ts reads (its top comment says how the names are matched: case, accents, spaces and
// punctuation do not count, so `Correo electrónico`, `CORREO_ELECTRONICO` and `correoElectronico`
// are one name).
//
// Per kind:
// - `exact`: names that are the key column itself, per language;
// - `contains`: parts of a name that make it a key column of the kind (`Work Email`,
//   `E-Mail-Adresse`, `Adresse courriel`), unless
// - `exclude`: another word of the name says the column is *about* the key (`Email Status`,
//   `Statut du courriel`, `Domain Authority`).
import type { LookupKind } from './normalize.js';

export type Language = 'en' | 'de' | 'fr' | 'es' | 'it' | 'pt' | 'nl';

export interface KindNames {
  exact: Record<Language, readonly string[]>;
  contains: readonly string[];
  exclude: readonly string[];
}

/** Words that, next to a matching word, say the column describes the key instead of holding it. */
export const META_WORDS: readonly string[] = [
  // en
  'status', 'source', 'confidence', 'verified', 'verification', 'validation', 'valid', 'validity',
  'invalid', 'type', 'count', 'score', 'date', 'time', 'sent', 'opened', 'opens', 'clicked',
  'clicks', 'bounced', 'bounce', 'bounces', 'reason', 'flag', 'consent', 'opt', 'optout',
  'optin', 'opted', 'unsubscribed', 'unsubscribe', 'quality', 'rank', 'rating', 'created',
  'updated', 'age',
  // de, fr, es, it, pt, nl: status, verified, date, consent, type
  'gepruft', 'verifiziert', 'datum', 'einwilligung', 'typ', 'statut', 'verifie', 'valide',
  'consentement', 'estado', 'verificado', 'fecha', 'consentimiento', 'tipo', 'stato',
  'verificato', 'verificata', 'verificada', 'verifiee', 'geprueft', 'consenso', 'situacao', 'consentimento', 'geverifieerd',
  'toestemming',
];

export const HEADER_NAMES: Record<LookupKind, KindNames> = {
  email: {
    exact: {
      en: ['email', 'e-mail', 'mail', 'email address', 'email_address', 'email id', 'work email', 'business email', 'contact email', 'primary email'],
      de: ['E-Mail-Adresse', 'Mailadresse', 'E-Mail geschäftlich', 'Elektronische Post'],
      fr: ['Courriel', 'Adresse courriel', 'Adresse e-mail', 'Adresse électronique', 'Adresse mail', 'Mél'],
      es: ['Correo', 'Correo electrónico', 'Dirección de correo', 'Dirección de correo electrónico', 'Correo de trabajo'],
      it: ['Posta elettronica', 'Indirizzo email', 'Indirizzo e-mail', 'Indirizzo di posta elettronica'],
      pt: ['Correio eletrônico', 'Correio electrónico', 'Endereço de e-mail', 'Endereço de email', 'Endereço eletrônico'],
      nl: ['E-mailadres', 'Mailadres', 'Emailadres'],
    },
    contains: ['email', 'courriel', 'correo', 'posta elettronica', 'correio eletronico', 'correio electronico', 'mailadres', 'mailadresse'],
    exclude: [
      ...META_WORDS, 'domain', 'provider', 'format', 'catch', 'catchall', 'name', 'template', 'campaign', 'subject', 'domains',
      'domaine', 'dominio', 'dominio', 'domein', 'anbieter', 'fournisseur', 'proveedor', 'fornitore', 'provedor', 'nom', 'nombre', 'nome', 'naam',
    ],
  },
  url: {
    exact: {
      en: ['url', 'linkedin', 'linkedin url', 'linkedin profile', 'linkedin profile url', 'linkedin link', 'profile', 'profile url', 'profile link', 'network url', 'network_url'],
      de: ['LinkedIn-Profil', 'Profil-URL', 'Profil', 'Profillink'],
      fr: ['Profil LinkedIn', 'URL du profil', 'Lien du profil', 'Lien LinkedIn'],
      es: ['Perfil de LinkedIn', 'URL del perfil', 'Perfil', 'Enlace del perfil', 'Enlace de LinkedIn'],
      it: ['Profilo LinkedIn', 'URL del profilo', 'Profilo', 'Link del profilo'],
      pt: ['Perfil do LinkedIn', 'URL do perfil', 'Link do perfil', 'Link do LinkedIn'],
      nl: ['LinkedIn-profiel', 'Profiel-URL', 'Profiel', 'Profiellink'],
    },
    contains: ['linkedin', 'profile url', 'profil url', 'url du profil', 'url del perfil', 'url del profilo', 'url do perfil', 'profiel url'],
    exclude: [
      ...META_WORDS, 'company', 'companies', 'organization', 'organisation', 'org', 'account', 'twitter', 'facebook', 'github', 'instagram',
      'youtube', 'tiktok', 'picture', 'photo', 'image', 'avatar', 'pic', 'followers', 'connections', 'headline', 'summary', 'id', 'username',
      'handle', 'firma', 'unternehmen', 'entreprise', 'societe', 'empresa', 'azienda', 'societa', 'bedrijf', 'foto', 'bild', 'imagen', 'immagine', 'imagem', 'afbeelding',
    ],
  },
  domain: {
    exact: {
      en: ['domain', 'domain name', 'company domain', 'company domain name', 'website', 'web site', 'website url', 'company website', 'company url', 'homepage', 'site', 'url domain'],
      de: ['Webseite', 'Internetseite', 'Internetadresse', 'Webadresse', 'Domäne', 'Domainname', 'Firmenwebseite', 'Firmen-Website', 'Unternehmenswebsite'],
      fr: ['Site web', 'Site internet', 'Site', 'Domaine', 'Nom de domaine', "Site de l'entreprise", 'Page web'],
      es: ['Sitio web', 'Página web', 'Dominio', 'Nombre de dominio', 'Web', 'Sitio web de la empresa'],
      it: ['Sito web', 'Sito internet', 'Sito', 'Dominio', 'Nome di dominio', 'Pagina web', 'Sito aziendale'],
      pt: ['Site', 'Sítio web', 'Página web', 'Domínio', 'Nome de domínio', 'Site da empresa'],
      nl: ['Website', 'Webpagina', 'Domein', 'Domeinnaam', 'Bedrijfswebsite'],
    },
    contains: ['domain', 'website', 'webseite', 'site web', 'sitio web', 'sito web', 'domaine', 'dominio', 'domein'],
    exclude: [
      ...META_WORDS, 'authority', 'registrar', 'expiry', 'expiration', 'expires', 'traffic', 'visits', 'visitors', 'views', 'sessions',
      'besuche', 'visites', 'visitas', 'visite', 'bezoeken', 'trafic', 'trafico', 'traffico', 'trafego', 'verkeer',
    ],
  },
};

/** Every exact name of a kind, all languages together. */
export function exactNames(kind: LookupKind): string[] {
  return Object.values(HEADER_NAMES[kind].exact).flat();
}
