/**
 * How a child's name varies with the life of its custom resource: a fixed
 * prefix and suffix around a varying part of a known alphabet (and length,
 * when both lives agreed), learned from two names of one role. Pure.
 */

/** How a name varies with the life: `prefix`, a varying part, `suffix`. */
export interface NameTemplate {
  readonly prefix: string;
  readonly suffix: string;
  /** The varying part's length, when it was the same in both lives (a hash, a UID prefix). */
  readonly length?: number;
  /** The varying part's characters: hex digits, DNS label characters, or anything. */
  readonly alphabet: "hex" | "alnum" | "any";
}

const ALPHABETS: Record<NameTemplate["alphabet"], RegExp> = {
  hex: /^[0-9a-f]+$/,
  alnum: /^[a-z0-9]+$/,
  any: /^.+$/,
};

export function fits(template: NameTemplate, name: string): boolean {
  const { prefix, suffix } = template;
  if (name.length <= prefix.length + suffix.length) return false;
  if (!name.startsWith(prefix) || !name.endsWith(suffix)) return false;
  const varying = name.slice(prefix.length, name.length - suffix.length);
  if (template.length !== undefined && varying.length !== template.length) return false;
  return ALPHABETS[template.alphabet].test(varying);
}

/** "orders-auth-*" */
export function describeTemplate(template: NameTemplate): string {
  return `${template.prefix}*${template.suffix}`;
}

/**
 * The template two names of one role make: their common prefix and suffix,
 * each trimmed back to where the varying part's characters begin (two hex
 * strings share a first digit one time in sixteen, and that digit is not
 * part of the name's fixed text). Undefined when one name holds the other.
 */
export function templateOf(a: string, b: string): NameTemplate | undefined {
  let prefix = 0;
  while (prefix < a.length && prefix < b.length && a[prefix] === b[prefix]) prefix++;
  let suffix = 0;
  while (
    suffix < a.length - prefix &&
    suffix < b.length - prefix &&
    a[a.length - 1 - suffix] === b[b.length - 1 - suffix]
  )
    suffix++;
  const varying = (p: number, s: number) => [a.slice(p, a.length - s), b.slice(p, b.length - s)];
  const [va = "", vb = ""] = varying(prefix, suffix);
  if (va === "" || vb === "") return undefined;
  const alphabet = alphabetOf(va, vb);
  const inAlphabet = (char: string | undefined) => char !== undefined && ALPHABETS[alphabet].test(char);
  // Give the varying part back what chance shared with it, at both ends: characters of its
  // alphabet, or, when it can hold anything, everything back to a separator.
  const separator = (char: string | undefined) => char === "-" || char === "." || char === "_";
  const shared = alphabet === "any" ? (char: string | undefined) => !separator(char) : inAlphabet;
  while (prefix > 0 && shared(a[prefix - 1])) prefix--;
  while (suffix > 0 && shared(a[a.length - suffix])) suffix--;
  const [ta = "", tb = ""] = varying(prefix, suffix);
  return {
    prefix: a.slice(0, prefix),
    suffix: a.slice(a.length - suffix),
    ...(ta.length === tb.length ? { length: ta.length } : {}),
    alphabet,
  };
}

function alphabetOf(...parts: string[]): NameTemplate["alphabet"] {
  if (parts.every((p) => ALPHABETS.hex.test(p))) return "hex";
  if (parts.every((p) => ALPHABETS.alnum.test(p))) return "alnum";
  return "any";
}
